import { createHmac, generateKeyPairSync, sign } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { bind, MemoryBus, type Binding, type Bus } from '@app/shared/bus';
import { loadConfig } from '@app/shared/config';
import { op } from '@app/shared/contracts';
import { fixedClock } from '@app/shared/domain';
import { AppError } from '@app/shared/errors';
import { silentLogger } from '@app/shared/log';
import { Collections, type DocumentStore } from '@app/shared/store';
import { testStore } from '@app/shared/testing';
import { buildApp, GatewayConfig } from '../../src/index.js';
import { route, type RouteSpec } from '../../src/routes/route.js';

export const SECRET = 'gateway-test-secret-0123456789';

/** A gateway config as `main.ts` would load it, from env-style overrides. */
export function testConfig(env: Record<string, string> = {}): GatewayConfig {
  return loadConfig(GatewayConfig, { JWT_SECRET: SECRET, LOG_LEVEL: 'silent', ...env });
}

// ---- stub ops and a stub route table exercising every registrar feature -------------------------

const Echoed = Type.Object({ input: Type.Unknown(), userId: Type.Optional(Type.String()), requestId: Type.String() });
export const echoOp = op({ subject: 'test.echo', request: Type.Object({}, { additionalProperties: true }), response: Echoed });
export const removeOp = op({ subject: 'test.remove', request: Type.Object({ id: Type.String() }), response: Type.Null() });
export const failOp = op({ subject: 'test.fail', request: Type.Object({ kind: Type.String() }), response: Type.Null() });
export const slowOp = op({ subject: 'test.slow', request: Type.Object({}), response: Type.Null(), timeoutMs: 30 });
export const unservedOp = op({ subject: 'test.unserved', request: Type.Object({}), response: Type.Null() });

/** The conflict snapshot `failOp` attaches for kind `conflict`. */
export const SNAPSHOT = { id: 'w1', status: 'doing', tags: ['x'] };

/** Stub bindings: echo input + caller; remove → null; fail by kind; slow never answers. */
export const stubBindings: Binding[] = [
  bind(echoOp, async (input, ctx) => ({ input, userId: ctx.userId, requestId: ctx.requestId })),
  bind(removeOp, async () => null),
  bind(failOp, async ({ kind }) => {
    if (kind === 'conflict') throw new AppError('KANBAN_TASK_NOT_IN_SOURCE_COLUMN', { extra: { task: SNAPSHOT } });
    if (kind === 'missing') throw new AppError('TASK_NOT_FOUND');
    throw new Error('database password is hunter2');
  }),
  bind(slowOp, () => new Promise<null>(() => {})),
];

const IdParams = Type.Object({ id: Type.String({ minLength: 2 }) });
const WidgetPatch = Type.Object(
  { name: Type.String({ minLength: 1 }), count: Type.Optional(Type.Integer({ minimum: 0 })) },
  { additionalProperties: false },
);

export const stubRoutes: RouteSpec[] = [
  route({
    method: 'GET', url: '/api/v1/widgets/:id', legacy: [{ url: '/api/v1/old-widgets/:id' }], op: echoOp,
    input: (r) => ({ id: r.params.id, q: r.query.q }), summary: 'Read a widget', tag: 'test', maturity: 'live',
    params: IdParams, querystring: Type.Object({ q: Type.Optional(Type.String()) }),
  }),
  route({
    method: 'PATCH', url: '/api/v1/widgets/:id', legacy: [{ url: '/api/v1/old-widgets/:id', method: 'POST' }], op: echoOp,
    input: (r) => ({ ...(r.body as object), id: r.params.id }), summary: 'Update a widget', tag: 'test', maturity: 'live',
    params: IdParams, body: WidgetPatch,
  }),
  route({
    method: 'DELETE', url: '/api/v1/widgets/:id', op: removeOp, input: (r) => ({ id: r.params.id! }),
    summary: 'Delete a widget', tag: 'test', maturity: 'live', params: IdParams, status: 204,
  }),
  route({
    method: 'POST', url: '/api/v1/widgets/:id/fail', op: failOp, input: (r) => r.body as { kind: string },
    summary: 'Fail on purpose', tag: 'test', maturity: 'live', params: IdParams, body: Type.Object({ kind: Type.String() }),
  }),
  route({
    method: 'POST', url: '/api/v1/widgets/slow', op: slowOp, input: () => ({}),
    summary: 'Never answers', tag: 'test', maturity: 'live',
  }),
  route({
    method: 'POST', url: '/api/v1/widgets/unserved', op: unservedOp, input: () => ({}),
    summary: 'Nobody serves this', tag: 'test', maturity: 'live',
  }),
  route({
    method: 'POST', url: '/api/v1/widgets/draft', op: echoOp, input: (r) => ({ body: r.body }),
    summary: 'A draft operation', tag: 'test', maturity: 'draft', body: Type.Object({ note: Type.Optional(Type.String()) }),
    status: 201,
  }),
];

// ---- the app fixture --------------------------------------------------------------------------

/** User ids the hand-made tokens of the stub-route suites carry as `sub` ({@link claims}' default among them). */
export const JWT_USERS = ['user-1', 'user-42'];

export interface TestApp extends AsyncDisposable {
  app: FastifyInstance;
  bus: MemoryBus;
  store: DocumentStore;
  clock: ReturnType<typeof fixedClock>;
  config: GatewayConfig;
}

/**
 * Builds the gateway on a MemoryBus serving {@link stubBindings} and the suite's test store (`testStore`).
 * `routes` defaults to {@link stubRoutes}; `env` overrides config variables; `wrapBus` puts a
 * bus of the test's own between the gateway and the MemoryBus (`bus` stays the MemoryBus).
 */
export async function testApp(
  opts: { env?: Record<string, string>; routes?: readonly RouteSpec[]; store?: DocumentStore; webRoot?: string | false; wrapBus?: (bus: MemoryBus) => Bus } = {},
): Promise<TestApp> {
  const bus = new MemoryBus();
  const log = silentLogger();
  await bus.serve(stubBindings, { queue: 'test', log });
  const store = opts.store ?? (await testStore());
  // the users the hand-made tokens of these suites name (a signed JWT for no user is a 401)
  const users = store.collection(Collections.users);
  for (const id of JWT_USERS) {
    if (!(await users.findOne({ _id: id }))) await users.insertOne({ _id: id, username: `jwt-${id}`, created_at: '2026-01-01T00:00:00.000Z' });
  }
  const clock = fixedClock('2026-01-05T10:00:00.000Z');
  const config = testConfig(opts.env);
  const app = await buildApp({
    bus: opts.wrapBus ? opts.wrapBus(bus) : bus, store, clock, log, config, routes: opts.routes ?? stubRoutes, ...(opts.webRoot !== undefined ? { webRoot: opts.webRoot } : {}),
  });
  return {
    app, bus, store, clock, config,
    async [Symbol.asyncDispose]() {
      await app.close();
      await bus.close();
      await store.close();
    },
  };
}

// ---- tokens -----------------------------------------------------------------------------------

const b64u = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 });

/**
 * Hand-made JWT (no library, so bad tokens can be anything): HS256/384/512 with `secret`,
 * RS256 with a fresh key, or `none` with an empty signature.
 */
export function craftToken(payload: Record<string, unknown>, alg = 'HS256', secret = SECRET): string {
  const input = `${b64u({ alg, typ: 'JWT' })}.${b64u(payload)}`;
  let sig = '';
  if (alg.startsWith('HS')) sig = createHmac(`sha${alg.slice(2)}`, secret).update(input).digest('base64url');
  else if (alg === 'RS256') sig = sign('RSA-SHA256', Buffer.from(input), rsa.privateKey).toString('base64url');
  return `${input}.${sig}`;
}

/** Standard claims valid for ten minutes of wall-clock time (JWT expiry is real time). */
export function claims(extra: Record<string, unknown> = {}): Record<string, unknown> {
  const now = Math.floor(Date.now() / 1000);
  return { sub: 'user-1', name: 'alice', iat: now, exp: now + 600, ...extra };
}

export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

// ---- auth calls ---------------------------------------------------------------------------------

export interface Tokens {
  accessToken: string;
  refreshToken: string;
  tokenType: string;
  expiresIn: number;
  userId: string;
  userName: string;
  userRole: string;
  userEmail: string;
  userTimezone: string;
  userAvatarUrl: string;
}

export function post(app: FastifyInstance, url: string, payload: unknown, headers: Record<string, string> = {}): Promise<LightMyRequestResponse> {
  return app.inject({ method: 'POST', url, payload: payload as object, headers });
}

export async function register(app: FastifyInstance, username: string, password = 'correct horse battery'): Promise<LightMyRequestResponse> {
  return post(app, '/auth/v2/register', { username, password });
}

export async function login(app: FastifyInstance, username: string, password = 'correct horse battery'): Promise<Tokens> {
  const res = await post(app, '/auth/v2/login', { username, password });
  if (res.statusCode !== 200) throw new Error(`login failed: ${res.statusCode} ${res.body}`);
  return res.json<Tokens>();
}
