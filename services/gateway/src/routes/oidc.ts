import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { appendAudit, type NewAudit } from '@app/shared/domain';
import { AppError } from '@app/shared/errors';
import { Collections, type Doc, type DocumentStore } from '@app/shared/store';
import { gatewayAuditStamp } from '../auth/audit.js';
import { newOneTimeCode, oidcCookie, oidcCookieOf, oneTimeCodeHash, type IdClaims, type OidcSignIn } from '../auth/oidc.js';
import { issueRefreshToken } from '../auth/refresh-tokens.js';
import { createOidcUser, findUserById, findUserByOidc, type UserDoc } from '../auth/users.js';
import { TokenPair, tokenPair } from './auth.js';
import { localRoute, type LocalDeps, type LocalRoute } from './local.js';

/** How long a one-time sign-in code may be exchanged, in ms (docs/auth.md). */
export const OIDC_CODE_TTL_MS = 60_000;

/** A one-time sign-in code as stored: `_id` is its SHA-256. */
interface OidcCodeDoc extends Doc {
  user_id: string;
  expires_at: string;
}

const codesOf = (store: DocumentStore) => store.collection<OidcCodeDoc>(Collections.oidcCodes);

/** The configured sign-in, or 404 `NOT_FOUND` when OpenID Connect is not configured. */
function configured(deps: LocalDeps): OidcSignIn {
  if (!deps.oidc) throw new AppError('NOT_FOUND', { message: 'Sign-in with an identity provider is not configured' });
  return deps.oidc;
}

const USERNAME = /^[A-Za-z0-9._@-]{3,64}$/;

/**
 * The user of verified ID token `claims` (docs/auth.md "What is mapped"), made in `session` at the
 * first sign-in: 403 `OIDC_DOMAIN_NOT_ALLOWED` when `OIDC_ALLOWED_DOMAINS` is set and the
 * verified e-mail's domain is not in it; 401 when the username claim is missing or not a valid
 * username; 409 `OIDC_USERNAME_TAKEN` when a user of that name exists.
 */
async function userOf(deps: LocalDeps, signIn: OidcSignIn, claims: IdClaims, session: Parameters<typeof createOidcUser>[1]): Promise<UserDoc> {
  const s = signIn.settings;
  const email = typeof claims.email === 'string' ? claims.email : undefined;
  if (s.allowedDomains.length > 0) {
    const domain = email?.split('@').at(-1)?.toLowerCase();
    if (email === undefined || claims.email_verified === false || !domain || !s.allowedDomains.includes(domain)) {
      throw new AppError('OIDC_DOMAIN_NOT_ALLOWED', { details: { domain: domain ?? null } });
    }
  }
  const known = await findUserByOidc(deps.store, claims.iss, claims.sub, session);
  if (known) return known;
  const username = claims[s.usernameClaim];
  if (typeof username !== 'string' || !USERNAME.test(username)) {
    throw new AppError('OIDC_SIGN_IN_FAILED', { details: { reason: `the ID token's ${s.usernameClaim} claim is not a usable username (3..64 of A-Z a-z 0-9 . _ @ -)` } });
  }
  return createOidcUser(deps.store, session, deps.clock, { username, email, iss: claims.iss, sub: claims.sub });
}

/** Whether the client asked for JSON (`Accept: application/json`) rather than a browser redirect. */
function wantsJson(req: FastifyRequest): boolean {
  return (req.headers.accept ?? '').includes('application/json');
}

/**
 * The callback (docs/auth.md "Sign in with OpenID Connect"): verifies the provider's answer, finds
 * or makes the user, records `auth.login` (method `oidc`, or its failure), and answers the token
 * pair (JSON) or 302 to the web board with a one-time code in the fragment. The sign-in cookie is
 * cleared either way.
 */
async function callback(req: FastifyRequest, reply: FastifyReply, deps: LocalDeps): Promise<void> {
  const signIn = configured(deps);
  const { store, clock } = deps;
  const origin = { requestId: req.id, ip: req.ip };
  reply.header('set-cookie', oidcCookie(signIn.settings, ''));
  const query = req.url.includes('?') ? req.url.slice(req.url.indexOf('?')) : '';
  const json = wantsJson(req);
  let user: UserDoc | undefined;
  try {
    const claims = await signIn.finish(query, oidcCookieOf(req.headers.cookie));
    const answer = await store.withTransaction(async (session): Promise<{ refresh?: string; code?: string }> => {
      user = await userOf(deps, signIn, claims, session);
      const entry: NewAudit = { action: 'auth.login', actor: user._id, target: `user:${user._id}`, details: { method: 'oidc' } };
      await appendAudit(store, session, [entry], gatewayAuditStamp(origin, deps, user._id));
      if (json) return { refresh: await issueRefreshToken(store, clock, user._id, session) };
      const { code, hash } = newOneTimeCode();
      await codesOf(store).insertOne({ _id: hash, user_id: user._id, expires_at: new Date(clock.now().getTime() + OIDC_CODE_TTL_MS).toISOString() }, { session });
      return { code };
    });
    if (answer.refresh !== undefined) {
      await reply.code(200).type('application/json').send(JSON.stringify(tokenPair(deps, user!, answer.refresh)));
      return;
    }
    await reply.code(302).header('location', `/#oidc_code=${answer.code!}`).send();
  } catch (e) {
    const err = AppError.from(e);
    if (err.status < 500) {
      const details = { method: 'oidc', code: err.code, ...(err.details?.reason ? { reason: err.details.reason } : {}) };
      await appendAudit(store, undefined, [{ action: 'auth.login', outcome: 'failure', details }], gatewayAuditStamp(origin, deps, null));
    }
    throw err;
  }
}

/**
 * OpenID Connect sign-in routes (docs/auth.md "Sign in with OpenID Connect"), answered by the
 * gateway at the root and under `/api/v1`; each answers 404 when `OIDC_ISSUER` is not set.
 */
export const oidcRoutes: LocalRoute[] = [
  {
    method: 'GET',
    url: '/auth/methods',
    summary: 'How one may sign in here: with a password (unless LOCAL_LOGIN=false) and/or with the identity provider (its display name)',
    tag: 'auth',
    response: Type.Object({ password: Type.Boolean(), oidc: Type.Union([Type.Object({ name: Type.String() }), Type.Null()]) }),
    async handle(_req, deps) {
      return { password: deps.config.LOCAL_LOGIN, oidc: deps.oidc ? { name: deps.oidc.settings.providerName } : null };
    },
  },
  {
    method: 'GET',
    url: '/auth/oidc/login',
    summary: 'Start signing in with the identity provider: 302 to it, with state, nonce and PKCE verifier in a short-lived HttpOnly cookie; 404 when not configured',
    tag: 'auth',
    status: 302,
    rateLimited: true,
    async stream(_req, reply, deps) {
      const { location, cookie } = await configured(deps).begin();
      await reply.code(302).header('set-cookie', oidcCookie(deps.oidc!.settings, cookie)).header('location', location).send();
    },
  },
  {
    method: 'GET',
    url: '/auth/oidc/callback',
    summary: 'Where the identity provider sends the browser back: with Accept: application/json the token pair of login; otherwise 302 to the web board with a one-time code in the URL fragment',
    tag: 'auth',
    querystring: Type.Object({ code: Type.Optional(Type.String()), state: Type.Optional(Type.String()) }, { additionalProperties: true }),
    response: TokenPair,
    rateLimited: true,
    stream: callback,
  },
  localRoute({
    method: 'POST',
    url: '/auth/oidc/exchange',
    summary: 'Exchange the one-time code of an identity provider sign-in (valid 60 s, once) for the token pair of login',
    tag: 'auth',
    body: Type.Object({ code: Type.String({ minLength: 1, maxLength: 128 }) }, { additionalProperties: false }),
    response: TokenPair,
    rateLimited: true,
    async handle(req, deps) {
      configured(deps);
      const { store, clock } = deps;
      const id = oneTimeCodeHash(req.body.code);
      const found = await codesOf(store).findOne({ _id: id });
      const invalid = () => new AppError('OIDC_CODE_INVALID');
      if (!found || found.expires_at <= clock.now().toISOString()) throw invalid();
      // the delete is the one use: a second exchange of the same code finds nothing to delete
      if ((await codesOf(store).deleteOne({ _id: id })).deletedCount !== 1) throw invalid();
      const user = await findUserById(store, found.user_id);
      if (!user) throw invalid();
      return tokenPair(deps, user, await issueRefreshToken(store, clock, user._id));
    },
  }),
];
