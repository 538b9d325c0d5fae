import fastifyJwt from '@fastify/jwt';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '@app/shared/errors';

/** Claims of an access token (DESIGN §5): `sub` = user id, `name` = username. */
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

/**
 * Registers @fastify/jwt on `app` (root scope; a number `expiresIn` is seconds there): HS256 only, tokens must carry `sub` and `exp`.
 * Restricting `algorithms` matters: without it an HS512 token made with the same secret passes
 * (research/spike.md §3).
 */
export async function registerJwt(app: FastifyInstance, opts: { secret: string; expiresInSeconds: number }): Promise<void> {
  await app.register(fastifyJwt, {
    secret: opts.secret,
    sign: { algorithm: 'HS256', expiresIn: opts.expiresInSeconds },
    // Verified tokens are cached (LRU, entries never outlive the token's `exp`; failures are not
    // cached): verification is a large share of a cheap request's CPU.
    verify: { algorithms: ['HS256'], requiredClaims: ['sub', 'exp'], cache: 10_000, cacheTTL: 60_000 },
  });
}

const EXPIRED = new Set(['FST_JWT_AUTHORIZATION_TOKEN_EXPIRED', 'FAST_JWT_EXPIRED']);

/**
 * `onRequest` guard of every non-public route: verifies the bearer token and sets `req.user`.
 * Every failure is 401 `UNAUTHORIZED` (missing, empty, malformed, expired, wrongly signed,
 * `alg:none` or another algorithm) — @fastify/jwt alone answers 400 or 500 for some of these.
 */
export async function authenticate(req: FastifyRequest): Promise<void> {
  if (req.headers.authorization === undefined) throw new AppError('UNAUTHORIZED');
  try {
    await req.jwtVerify();
  } catch (e) {
    const code = (e as { code?: unknown }).code;
    const expired = typeof code === 'string' && EXPIRED.has(code);
    throw new AppError('UNAUTHORIZED', { message: expired ? 'The access token has expired' : 'The access token is invalid' });
  }
}
