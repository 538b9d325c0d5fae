import fastifyJwt from '@fastify/jwt';
import { Type } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { LRUCache } from 'lru-cache';
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import type { TokenGrant } from '@app/shared/contracts';
import { AppError } from '@app/shared/errors';
import { TOKEN_PREFIX, type AccessTokenResolver } from '../auth/access-tokens.js';

/**
 * The authenticated caller (docs/architecture.md §5): `sub` = user id, `name` = username (the claims of a
 * JWT); `grant` when the caller used a personal access token (`bts_…`, docs/auth.md "Access
 * tokens"): its id, scopes and boards.
 */
export interface AccessClaims {
  sub: string;
  name: string;
  grant?: TokenGrant;
}

declare module '@fastify/jwt' {
  interface FastifyJWT {
    payload: AccessClaims;
    user: AccessClaims;
  }
}

/** How many verified access tokens the gateway remembers (least recently used dropped first). */
const VERIFIED_TOKENS = 10_000;

/**
 * Access tokens this gateway has verified, by their exact `Authorization` header value, with their
 * claims and expiry (ms). A hit skips decoding and the HMAC check; an entry is used only before
 * the token's `exp`, and a header differing in any byte (another signature) is a miss. Failures
 * are never remembered; least recently used dropped first. Per app, so apps with different
 * secrets never share entries.
 */
export class VerifiedTokens {
  private readonly entries: LRUCache<string, { user: AccessClaims; expiresAtMs: number }>;

  constructor(max = VERIFIED_TOKENS) {
    this.entries = new LRUCache({ max });
  }

  /** The claims of a remembered, unexpired header; `undefined` otherwise. */
  get(header: string, nowMs: number): AccessClaims | undefined {
    const hit = this.entries.get(header);
    if (hit === undefined) return undefined;
    if (hit.expiresAtMs > nowMs) return hit.user;
    this.entries.delete(header);
    return undefined;
  }

  /** Remembers a header whose token was just verified (`exp` in seconds, as in the JWT). */
  remember(header: string, user: AccessClaims, exp: unknown): void {
    if (typeof exp !== 'number') return;
    this.entries.set(header, { user, expiresAtMs: exp * 1000 });
  }
}

/** Clock difference tolerated between the token's issuer and this gateway, in seconds (`iat`, `exp`). */
export const CLOCK_SKEW_SECONDS = 60;

/**
 * The claims a JWT access token must carry, by type (docs/auth.md "Access tokens"): `sub` a user
 * id (a string of 1..128 characters: never an object a store could read as an operator), `name`
 * a string when present, `iat` and `exp` numbers of seconds. Other claims are ignored.
 */
const JwtClaims = Type.Object({
  sub: Type.String({ minLength: 1, maxLength: 128 }),
  name: Type.Optional(Type.String()),
  iat: Type.Number(),
  exp: Type.Number(),
});

/**
 * Why the verified claims of a JWT are not acceptable, or undefined when they are: not of the
 * {@link JwtClaims} types, `iat` in the future beyond {@link CLOCK_SKEW_SECONDS}, or a lifetime
 * (`exp - iat`) longer than the configured one (`JWT_EXPIRATION_MINUTES`) plus the skew.
 * `nowSeconds` and `lifetimeSeconds` in seconds.
 */
export function claimsFault(claims: unknown, nowSeconds: number, lifetimeSeconds: number): string | undefined {
  if (!Value.Check(JwtClaims, claims)) return 'its claims are not of the expected types';
  if (claims.iat > nowSeconds + CLOCK_SKEW_SECONDS) return 'it was issued in the future';
  if (claims.exp - claims.iat > lifetimeSeconds + CLOCK_SKEW_SECONDS) return 'its lifetime is longer than this service issues';
  return undefined;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The access token lifetime this gateway issues, in seconds (`JWT_EXPIRATION_MINUTES`). */
    accessTokenLifetimeSeconds: number;
    verifiedTokens: VerifiedTokens;
    /** Resolves personal access tokens (set by `buildApp`). */
    accessTokens: AccessTokenResolver;
    /** Whether a user id names a stored user (set by `buildApp`): a signed JWT for no user is refused. */
    userExists: (userId: string) => Promise<boolean>;
  }
}

/**
 * Registers @fastify/jwt on `app` (root scope; a number `expiresIn` is seconds there): HS256 only, tokens must carry `sub` and `exp`.
 * Restricting `algorithms` matters: without it an HS512 token made with the same secret passes
 * (docs/architecture.md §11). Also decorates `app.verifiedTokens` ({@link VerifiedTokens}).
 */
export async function registerJwt(app: FastifyInstance, opts: { secret: string; expiresInSeconds: number }): Promise<void> {
  await app.register(fastifyJwt, {
    secret: opts.secret,
    sign: { algorithm: 'HS256', expiresIn: opts.expiresInSeconds },
    verify: { algorithms: ['HS256'], requiredClaims: ['sub', 'exp'] },
  });
  app.decorate('verifiedTokens', new VerifiedTokens());
  app.decorate('accessTokenLifetimeSeconds', opts.expiresInSeconds);
}

/** A bearer header carrying a personal access token rather than a JWT. */
const ACCESS_TOKEN_SCHEME = `Bearer ${TOKEN_PREFIX}`;

/** Sets `req.user` from a personal access token (`secret` without its prefix); unknown, revoked or expired: 401. */
function resolveAccessToken(req: FastifyRequest, secret: string, done: HookHandlerDoneFunction): void {
  req.server.accessTokens.resolve(TOKEN_PREFIX + secret).then(
    (token) => {
      if (!token) return done(new AppError('UNAUTHORIZED', { message: 'The access token is unknown, revoked or expired' }));
      req.user = { sub: token.userId, name: token.username, grant: token.grant };
      done();
    },
    (e: unknown) => done(AppError.from(e)),
  );
}

const EXPIRED = new Set(['FST_JWT_AUTHORIZATION_TOKEN_EXPIRED', 'FAST_JWT_EXPIRED']);

/**
 * `onRequest` guard of every non-public route: verifies the bearer token and sets `req.user`.
 * Every failure is 401 `UNAUTHORIZED` (missing, empty, malformed, expired, wrongly signed,
 * `alg:none` or another algorithm, claims refused by {@link claimsFault}, or a `sub` that is no
 * stored user, checked once per token through `app.userExists`) — @fastify/jwt alone
 * answers 400 or 500 for some of these.
 * A header verified before and not yet expired is taken from `app.verifiedTokens`: verification
 * is a large share of a cheap request's CPU (docs/bench.md). Callback-style, so a remembered
 * token costs no promise turn. A personal access token (`Bearer bts_…`) is resolved through
 * `app.accessTokens` instead, and `req.user.grant` then says what it may do.
 */
export function authenticate(req: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void {
  const header = req.headers.authorization;
  if (header === undefined) return done(new AppError('UNAUTHORIZED'));
  if (header.startsWith(ACCESS_TOKEN_SCHEME)) return resolveAccessToken(req, header.slice(ACCESS_TOKEN_SCHEME.length), done);
  const known = req.server.verifiedTokens.get(header, Date.now());
  if (known) {
    req.user = known;
    return done();
  }
  req.jwtVerify().then(
    () => {
      const fault = claimsFault(req.user, Date.now() / 1000, req.server.accessTokenLifetimeSeconds);
      if (fault !== undefined) return done(new AppError('UNAUTHORIZED', { message: `The access token is invalid: ${fault}` }));
      const user = req.user;
      req.server.userExists(user.sub).then(
        (exists) => {
          if (!exists) return done(new AppError('UNAUTHORIZED', { message: 'The access token names no user of this service' }));
          req.server.verifiedTokens.remember(header, user, (user as { exp?: unknown }).exp);
          done();
        },
        (e: unknown) => done(AppError.from(e)),
      );
    },
    (e: unknown) => {
      const code = (e as { code?: unknown }).code;
      const expired = typeof code === 'string' && EXPIRED.has(code);
      done(new AppError('UNAUTHORIZED', { message: expired ? 'The access token has expired' : 'The access token is invalid' }));
    },
  );
}
