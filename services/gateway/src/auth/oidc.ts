import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import * as oidc from 'openid-client';
import { ConfigError } from '@app/shared/config';
import type { Clock } from '@app/shared/domain';
import { AppError } from '@app/shared/errors';
import type { GatewayConfig } from '../config.js';

/** How long a started sign-in may take at the provider (the sign-in cookie's life), in seconds. */
export const OIDC_PENDING_TTL_S = 600;
/** The sign-in cookie: state, nonce and PKCE verifier of the browser's sign-in in progress. */
export const OIDC_COOKIE = 'bts_oidc';

/** OpenID Connect settings read from the gateway's config (docs/auth.md "Sign in with OpenID Connect"). */
export interface OidcSettings {
  issuer: URL;
  clientId: string;
  clientSecret: string;
  redirectUrl: URL;
  /** Lower-case e-mail domains that may sign in; empty: any. */
  allowedDomains: string[];
  usernameClaim: string;
  scopes: string;
  providerName: string;
  allowHttp: boolean;
}

/**
 * The OpenID Connect settings of `config`, or undefined when `OIDC_ISSUER` is unset (sign-in with
 * a provider is off and its routes answer 404). Throws `ConfigError` when only some of the
 * issuer, client id, client secret and redirect URL are set, when `OIDC_ALLOW_HTTP=true` with
 * `NODE_ENV=production`, or when the issuer is plain http without `OIDC_ALLOW_HTTP=true`.
 */
export function oidcSettings(config: GatewayConfig): OidcSettings | undefined {
  const { OIDC_ISSUER: issuer, OIDC_CLIENT_ID: clientId, OIDC_CLIENT_SECRET: clientSecret, OIDC_REDIRECT_URL: redirectUrl } = config;
  const given = { OIDC_ISSUER: issuer, OIDC_CLIENT_ID: clientId, OIDC_CLIENT_SECRET: clientSecret, OIDC_REDIRECT_URL: redirectUrl };
  const missing = Object.entries(given).filter(([, v]) => v === undefined).map(([k]) => k);
  if (missing.length === 4) {
    if (!config.LOCAL_LOGIN) throw new ConfigError(['LOCAL_LOGIN: false needs OpenID Connect configured (OIDC_ISSUER …), or nobody could sign in']);
    return undefined;
  }
  if (missing.length > 0) throw new ConfigError(missing.map((k) => `${k}: required when any of OIDC_ISSUER, OIDC_CLIENT_ID, OIDC_CLIENT_SECRET, OIDC_REDIRECT_URL is set`));
  if (config.OIDC_ALLOW_HTTP && config.NODE_ENV === 'production') throw new ConfigError(['OIDC_ALLOW_HTTP: must not be true with NODE_ENV=production']);
  const issuerUrl = new URL(issuer!);
  if (issuerUrl.protocol === 'http:' && !config.OIDC_ALLOW_HTTP) throw new ConfigError(['OIDC_ISSUER: must be https (OIDC_ALLOW_HTTP=true allows http outside production)']);
  return {
    issuer: issuerUrl, clientId: clientId!, clientSecret: clientSecret!, redirectUrl: new URL(redirectUrl!),
    allowedDomains: config.OIDC_ALLOWED_DOMAINS.split(',').map((d) => d.trim().toLowerCase()).filter((d) => d !== ''),
    usernameClaim: config.OIDC_USERNAME_CLAIM, scopes: config.OIDC_SCOPES, providerName: config.OIDC_PROVIDER_NAME, allowHttp: config.OIDC_ALLOW_HTTP,
  };
}

/** A sign-in in progress, kept in the browser's sign-in cookie (sealed). */
interface Pending {
  state: string;
  nonce: string;
  verifier: string;
  /** Unix seconds after which the cookie is refused. */
  exp: number;
}

/**
 * Longest wait for one call to the identity provider (discovery, the JWKS, the code exchange), in
 * seconds: a provider that accepts the connection and never answers costs a sign-in this long,
 * then 503 `OIDC_PROVIDER_UNAVAILABLE` (the library's default would be 30 s).
 */
export const OIDC_TIMEOUT_SECONDS = 5;

/** The ID token's claims the gateway uses. */
export type IdClaims = oidc.IDToken;

/** 401 `OIDC_SIGN_IN_FAILED` naming why. */
function signInFailed(reason: string): AppError {
  return new AppError('OIDC_SIGN_IN_FAILED', { details: { reason } });
}

/**
 * The check that failed, from an `openid-client` error: its innermost message (the library wraps
 * the protocol library's) and the claim it names (`nonce`, `aud`, `exp` …); never the expected
 * values.
 */
function checkFailed(e: Error): string {
  const inner = e.cause instanceof Error ? e.cause : e;
  const claim = (inner.cause as { claim?: unknown } | undefined)?.claim;
  return typeof claim === 'string' ? `${inner.message} (claim ${claim})` : inner.message;
}

/**
 * What a failure of `openid-client` means to the caller: the provider's error answer or a check
 * the library made (state, nonce, audience, issuer, expiry, signature) → 401 naming it; anything
 * else (the provider unreachable) → 503 `OIDC_PROVIDER_UNAVAILABLE`.
 */
function fromLibrary(e: unknown): AppError {
  if (AppError.is(e)) return e;
  if (e instanceof oidc.ResponseBodyError) return signInFailed(`the provider refused the code: ${e.error}`);
  if (e instanceof oidc.AuthorizationResponseError) return signInFailed(`the provider answered ${e.error}`);
  const code = (e as { code?: unknown }).code;
  if (typeof code === 'string' && code.startsWith('OAUTH_')) return signInFailed(checkFailed(e as Error));
  return new AppError('OIDC_PROVIDER_UNAVAILABLE', { cause: e });
}

/**
 * The relying party of OpenID Connect sign-in (docs/auth.md "Sign in with OpenID Connect"), on
 * `openid-client`: discovery (once, again after a failure), the authorization code flow with
 * PKCE (S256), state and nonce; the library validates the ID token (issuer, audience, expiry,
 * nonce, signature by the provider's JWKS). The expiry is checked against `clock`. State, nonce
 * and verifier travel in a short-lived cookie sealed with `secret` (HMAC-SHA256), so nothing is
 * kept server-side until the callback.
 */
export class OidcSignIn {
  private discovered: Promise<oidc.Configuration> | undefined;

  constructor(
    readonly settings: OidcSettings,
    private readonly clock: Clock,
    private readonly secret: string,
    /** The HTTP client the library uses (default the global `fetch`). */
    private readonly fetchImpl?: typeof fetch,
  ) {}

  private configuration(): Promise<oidc.Configuration> {
    const s = this.settings;
    // the library's clock follows the service clock (as it stands at discovery)
    const metadata = { client_secret: s.clientSecret, [oidc.clockSkew]: Math.round((this.clock.now().getTime() - Date.now()) / 1000) };
    this.discovered ??= oidc
      .discovery(s.issuer, s.clientId, metadata, undefined, {
        // also set on the configuration discovered, for every later call (JWKS, token endpoint)
        timeout: OIDC_TIMEOUT_SECONDS,
        ...(s.allowHttp ? { execute: [oidc.allowInsecureRequests] } : {}),
        ...(this.fetchImpl ? { [oidc.customFetch]: this.fetchImpl } : {}),
      })
      .catch((e: unknown) => {
        this.discovered = undefined;
        throw new AppError('OIDC_PROVIDER_UNAVAILABLE', { cause: e });
      });
    return this.discovered;
  }

  /** Starts a sign-in: the provider's authorization URL and the sealed sign-in cookie's value. Throws 503 when discovery fails. */
  async begin(): Promise<{ location: string; cookie: string }> {
    const config = await this.configuration();
    const pending: Pending = {
      state: oidc.randomState(), nonce: oidc.randomNonce(), verifier: oidc.randomPKCECodeVerifier(),
      exp: Math.floor(this.clock.now().getTime() / 1000) + OIDC_PENDING_TTL_S,
    };
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: this.settings.redirectUrl.href, scope: this.settings.scopes, state: pending.state, nonce: pending.nonce,
      code_challenge: await oidc.calculatePKCECodeChallenge(pending.verifier), code_challenge_method: 'S256',
    });
    return { location: url.href, cookie: this.seal(pending) };
  }

  /**
   * Finishes a sign-in at the callback: `query` is the callback's query string, `cookie` the
   * sign-in cookie's value. Returns the verified ID token's claims. Throws 401
   * `OIDC_SIGN_IN_FAILED` (no or expired cookie, wrong state, a refused code, an ID token that
   * fails a check), 503 when the provider cannot be reached.
   */
  async finish(query: string, cookie: string | undefined): Promise<IdClaims> {
    const pending = cookie === undefined ? undefined : this.open(cookie);
    if (!pending) throw signInFailed('no sign-in in progress in this browser (missing or expired sign-in cookie)');
    const config = await this.configuration();
    const current = new URL(this.settings.redirectUrl.href);
    current.search = query;
    try {
      const tokens = await oidc.authorizationCodeGrant(config, current, {
        pkceCodeVerifier: pending.verifier, expectedState: pending.state, expectedNonce: pending.nonce, idTokenExpected: true,
      });
      const claims = tokens.claims();
      if (!claims) throw signInFailed('the provider sent no ID token');
      return claims;
    } catch (e) {
      throw fromLibrary(e);
    }
  }

  private mac(body: string): Buffer {
    return createHmac('sha256', this.secret).update(`oidc-pending\n${body}`).digest();
  }

  private seal(p: Pending): string {
    const body = Buffer.from(JSON.stringify(p)).toString('base64url');
    return `${body}.${this.mac(body).toString('base64url')}`;
  }

  private open(text: string): Pending | undefined {
    const [body, mac] = text.split('.');
    if (!body || !mac) return undefined;
    const given = Buffer.from(mac, 'base64url');
    const want = this.mac(body);
    if (given.length !== want.length || !timingSafeEqual(given, want)) return undefined;
    try {
      const p = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as Pending;
      return p.exp > this.clock.now().getTime() / 1000 ? p : undefined;
    } catch {
      return undefined;
    }
  }
}

/** The `Set-Cookie` value of the sign-in cookie (`value` empty: cleared): HttpOnly, SameSite=Lax, on the callback's path, `Secure` on https. */
export function oidcCookie(settings: OidcSettings, value: string): string {
  const secure = settings.redirectUrl.protocol === 'https:' ? '; Secure' : '';
  const age = value === '' ? 0 : OIDC_PENDING_TTL_S;
  return `${OIDC_COOKIE}=${value}; Path=/auth/oidc; HttpOnly; SameSite=Lax; Max-Age=${age}${secure}`;
}

/** The sign-in cookie's value from a `Cookie` header, if present. */
export function oidcCookieOf(header: string | undefined): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const [k, ...v] = part.trim().split('=');
    if (k === OIDC_COOKIE) return v.join('=');
  }
  return undefined;
}

/** A new one-time sign-in code (43 base64url characters) and its SHA-256, under which it is stored. */
export function newOneTimeCode(): { code: string; hash: string } {
  const code = randomBytes(32).toString('base64url');
  return { code, hash: oneTimeCodeHash(code) };
}

/** The stored form of a one-time sign-in code. */
export function oneTimeCodeHash(code: string): string {
  return createHash('sha256').update(code).digest('hex');
}
