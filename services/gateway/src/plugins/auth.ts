import fastifyJwt from '@fastify/jwt';
import { LRUCache } from 'lru-cache';
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { AppError } from '@app/shared/errors';

/** Claims of an access token (docs/architecture.md §5): `sub` = user id, `name` = username. */
export interface AccessClaims {
  sub: string;
  name: string;
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

declare module 'fastify' {
  interface FastifyInstance {
    verifiedTokens: VerifiedTokens;
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
}

const EXPIRED = new Set(['FST_JWT_AUTHORIZATION_TOKEN_EXPIRED', 'FAST_JWT_EXPIRED']);

/**
 * `onRequest` guard of every non-public route: verifies the bearer token and sets `req.user`.
 * Every failure is 401 `UNAUTHORIZED` (missing, empty, malformed, expired, wrongly signed,
 * `alg:none` or another algorithm) — @fastify/jwt alone answers 400 or 500 for some of these.
 * A header verified before and not yet expired is taken from `app.verifiedTokens`: verification
 * is a large share of a cheap request's CPU (docs/bench.md). Callback-style, so a remembered
 * token costs no promise turn.
 */
export function authenticate(req: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void {
  const header = req.headers.authorization;
  if (header === undefined) return done(new AppError('UNAUTHORIZED'));
  const known = req.server.verifiedTokens.get(header, Date.now());
  if (known) {
    req.user = known;
    return done();
  }
  req.jwtVerify().then(
    () => {
      req.server.verifiedTokens.remember(header, req.user, (req.user as { exp?: unknown }).exp);
      done();
    },
    (e: unknown) => {
      const code = (e as { code?: unknown }).code;
      const expired = typeof code === 'string' && EXPIRED.has(code);
      done(new AppError('UNAUTHORIZED', { message: expired ? 'The access token has expired' : 'The access token is invalid' }));
    },
  );
}
