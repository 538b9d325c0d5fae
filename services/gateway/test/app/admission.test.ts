import { Type } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import { bind, type Bus, type BusReply, type MemoryBus } from '@app/shared/bus';
import { op, QueryOps } from '@app/shared/contracts';
import { Metrics } from '@app/shared/observability';
import { Admission } from '../../src/admission/admission.js';
import { route } from '../../src/routes/route.js';
import { allRoutes } from '../../src/routes/table.js';
import { bearer, claims, craftToken, stubRoutes, testApp } from './helpers.js';

/**
 * Admission control and cost budgets through HTTP (docs/http.md "Fair use"): one principal over
 * its bounds waits, then gets 429 `RATE_LIMITED` with `Retry-After`, while another principal is
 * served at once. Real concurrency: requests are in flight together on one gateway.
 */

const held = op({ subject: 'test.held', request: Type.Object({}), response: Type.Object({ ok: Type.Boolean() }) });
/** An expensive op (the `query.` family) whose handler really spends `ms` of server time. */
const costly = op({ subject: 'query.testCostly', request: Type.Object({ ms: Type.Integer() }), response: Type.Object({ spent: Type.Number() }) });

const routes = [
  ...stubRoutes,
  route({ method: 'GET', url: '/api/v1/held', op: held, input: () => ({}), summary: 'Held until released', tag: 'test', maturity: 'live' }),
  route({
    method: 'POST', url: '/api/v1/costly', op: costly, input: (r) => r.body as { ms: number }, summary: 'Spends server time', tag: 'test', maturity: 'live',
    body: Type.Object({ ms: Type.Integer() }),
  }),
];

const alice = bearer(craftToken(claims({ sub: 'user-1' })));
const bob = bearer(craftToken(claims({ sub: 'user-42' })));

/** A gateway with the held and costly ops served; `release()` answers every held request. */
async function gateway(env: Record<string, string>) {
  const t = await testApp({ routes, env });
  let releases: Array<() => void> = [];
  await t.bus.serve(
    [
      bind(held, () => new Promise((resolve) => releases.push(() => resolve({ ok: true })))),
      bind(costly, async ({ ms }) => {
        const start = performance.now();
        while (performance.now() - start < ms); // real server time, as a long scan spends it
        return { spent: performance.now() - start };
      }),
    ],
    { queue: 'test', log: t.app.log as never },
  );
  const release = () => {
    const now = releases;
    releases = [];
    for (const r of now) r();
  };
  return Object.assign(t, { release, held: () => releases.length });
}

const until = async (probe: () => boolean) => {
  for (let i = 0; i < 200 && !probe(); i++) await new Promise((r) => setTimeout(r, 5));
  expect(probe()).toBe(true);
};

describe('admission control per principal', () => {
  it('answers a principal over its in-flight bound and queue with 429 and Retry-After, while another principal is served at once', async () => {
    await using g = await gateway({ ADMISSION_IN_FLIGHT: '2', ADMISSION_QUEUE: '1', ADMISSION_QUEUE_WAIT_MS: '5000' });
    const inject = (headers: Record<string, string>) => g.app.inject({ method: 'GET', url: '/api/v1/held', headers });
    const running = [inject(alice), inject(alice)];
    await until(() => g.held() === 2);
    const queued = inject(alice);
    await new Promise((r) => setTimeout(r, 20));
    expect(g.held()).toBe(2); // the third waits at the gateway: the service never saw it

    const refused = await inject(alice);
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toMatchObject({ code: 'RATE_LIMITED', details: { reason: 'in_flight' } });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);

    // another principal is not behind alice's queue
    const other = inject(bob);
    await until(() => g.held() === 3);
    g.release();
    expect((await other).statusCode).toBe(200);
    for (const r of await Promise.all(running)) expect(r.statusCode).toBe(200);
    await until(() => g.held() === 1); // the queued one started once a slot was free
    g.release();
    expect((await queued).statusCode).toBe(200);
  });

  it('refuses a request that waited past ADMISSION_QUEUE_WAIT_MS with 429', async () => {
    await using g = await gateway({ ADMISSION_IN_FLIGHT: '1', ADMISSION_QUEUE: '4', ADMISSION_QUEUE_WAIT_MS: '50' });
    const first = g.app.inject({ method: 'GET', url: '/api/v1/held', headers: alice });
    await until(() => g.held() === 1);
    const late = await g.app.inject({ method: 'GET', url: '/api/v1/held', headers: alice });
    expect(late.statusCode).toBe(429);
    expect(late.json().details.reason).toBe('in_flight');
    g.release();
    expect((await first).statusCode).toBe(200);
  });

  it('charges measured server time to a cost budget: a principal that spent it gets 429 for expensive requests, nobody else does', async () => {
    await using g = await gateway({ COST_BUDGET_MS: '50', COST_REFILL_MS_PER_SECOND: '10', ADMISSION_QUEUE_WAIT_MS: '100' });
    const spend = (headers: Record<string, string>, ms: number) => g.app.inject({ method: 'POST', url: '/api/v1/costly', headers, payload: { ms } });
    expect((await spend(alice, 80)).statusCode).toBe(200); // within the budget when it started; now 30 ms in debt
    const refused = await spend(alice, 1);
    expect(refused.statusCode).toBe(429);
    expect(refused.json()).toMatchObject({ code: 'RATE_LIMITED', details: { reason: 'budget' } });
    // 30 ms of debt at 10 ms a second: back in about 3 s
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(3);
    // bob has his own budget; alice's cheap requests are not budgeted
    expect((await spend(bob, 5)).statusCode).toBe(200);
    expect((await g.app.inject({ method: 'GET', url: '/api/v1/widgets/w1', headers: alice })).statusCode).toBe(200);
  });

  it('limits a JWT user and each of its access tokens as separate principals', async () => {
    const a = new Admission({ inFlight: 1, queue: 0, queueWaitMs: 0, expensiveInFlight: 1, budgetMs: 10, refillMsPerSecond: 1 });
    const user = a.stateOf('user', 'u1');
    const token = a.stateOf('token', 'u1'); // even with the same id, a token is its own principal
    expect(a.enter(user, false)).toBe(true);
    expect(a.enter(token, false)).toBe(true);
    await expect(a.enter(user, false)).rejects.toMatchObject({ code: 'RATE_LIMITED' });
    a.leave(user, false, undefined);
    expect(a.enter(user, false)).toBe(true);
    a.close();
  });

  it('counts rejections and queue waits per reason in its metrics', async () => {
    const metrics = new Metrics({ defaultMetrics: false });
    const a = new Admission({ inFlight: 1, queue: 1, queueWaitMs: 1000, expensiveInFlight: 1, budgetMs: 10, refillMsPerSecond: 1 }, metrics);
    const s = a.stateOf('user', 'u1');
    expect(a.enter(s, false)).toBe(true);
    const waiting = a.enter(s, false);
    await expect(a.enter(s, false)).rejects.toMatchObject({ details: { reason: 'in_flight' } });
    a.leave(s, false, 500); // 500 ms charged: the budget is spent
    await waiting;
    a.leave(s, false, undefined);
    await expect(a.enter(s, true)).rejects.toMatchObject({ details: { reason: 'budget' } });
    const text = await metrics.text();
    expect(text).toMatch(/admission_rejections_total\{reason="in_flight"\} 1/);
    expect(text).toMatch(/admission_rejections_total\{reason="budget"\} 1/);
    expect(text).toMatch(/admission_queue_wait_seconds_count\{reason="in_flight"\} 1/);
    a.close();
  });
});

/**
 * The gateway's bus with every reply's `costMs` taken off: the services charge nothing here, so
 * whatever a principal's budget loses is the gateway's own time (the MCP adapter's).
 */
class Uncosted implements Bus {
  constructor(private readonly inner: MemoryBus) {}
  async requestReply(...args: Parameters<Bus['requestReply']>): Promise<BusReply> {
    const reply = await this.inner.requestReply(...args);
    delete reply.meta.costMs;
    return reply;
  }
  request: Bus['request'] = (...args) => this.inner.request(...args);
  requestText: Bus['requestText'] = (...args) => this.inner.requestText(...args);
  serve: Bus['serve'] = (...args) => this.inner.serve(...args);
  ping = () => this.inner.ping();
  close = () => this.inner.close();
  [Symbol.asyncDispose] = () => this.inner.close();
}

describe('the MCP adapter’s own time', () => {
  /** A gateway whose services report no cost, serving `POST /api/v1/tasks/query` and MCP `find_tasks` (the same op) with an empty page. */
  async function uncosted(env: Record<string, string>) {
    const queryRow = allRoutes.find((r) => r.op === QueryOps.tasks)!;
    const t = await testApp({ routes: [...stubRoutes, queryRow], env, wrapBus: (bus) => new Uncosted(bus) });
    await t.bus.serve([bind(QueryOps.tasks, async () => ({ data: [], total: 0, page: 1, pageSize: 20, totalPages: 0 }))], { queue: 'test', log: t.app.log as never });
    return t;
  }

  /** One MCP `tools/call` of find_tasks with `headers`: whether it failed, and its JSON text parsed. */
  async function findTasks(app: Awaited<ReturnType<typeof uncosted>>['app'], headers: Record<string, string>) {
    const res = await app.inject({
      method: 'POST', url: '/mcp', headers: { ...headers, accept: 'application/json, text/event-stream' },
      payload: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'find_tasks', arguments: { query: "status = 'todo'", page_size: 20 } } },
    });
    expect(res.statusCode).toBe(200);
    const { result } = res.json() as { result: { isError?: boolean; content: Array<{ text: string }> } };
    return { isError: result.isError === true, body: JSON.parse(result.content[0]!.text) as Record<string, any> };
  }

  /** MCP find_tasks calls with `headers` until one is refused (at most 500); the refusal, or undefined. */
  async function callUntilRefused(app: Awaited<ReturnType<typeof uncosted>>['app'], headers: Record<string, string>) {
    for (let i = 0; i < 500; i++) {
      const r = await findTasks(app, headers);
      if (r.isError) return r.body;
    }
    return undefined;
  }

  const query = (app: Awaited<ReturnType<typeof uncosted>>['app'], headers: Record<string, string>) =>
    app.inject({ method: 'POST', url: '/api/v1/tasks/query', headers, payload: { query: "status = 'todo'" } });

  it('is charged to the caller’s budget: MCP calls alone spend it, then MCP and REST get the same 429 refusal, and nobody else does', async () => {
    await using g = await uncosted({ COST_BUDGET_MS: '5', COST_REFILL_MS_PER_SECOND: '1', ADMISSION_QUEUE_WAIT_MS: '0' });
    expect((await query(g.app, alice)).statusCode).toBe(200); // nothing spent yet

    const refused = await callUntilRefused(g.app, alice);
    expect(refused).toMatchObject({ code: 'RATE_LIMITED', details: { reason: 'budget' } });
    expect(refused!.details.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    // REST's refusal of the same principal: the same code and reason, with Retry-After
    const rest = await query(g.app, alice);
    expect(rest.statusCode).toBe(429);
    expect(rest.json()).toMatchObject({ code: 'RATE_LIMITED', details: { reason: 'budget' } });
    expect(Number(rest.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    // another principal has its own budget; alice's cheap requests are not held
    expect((await query(g.app, bob)).statusCode).toBe(200);
    expect((await findTasks(g.app, bob)).isError).toBe(false);
    expect((await g.app.inject({ method: 'GET', url: '/api/v1/widgets/w1', headers: alice })).statusCode).toBe(200);
  });

  it('is charged to the access token an MCP call uses, not to its user', async () => {
    await using g = await uncosted({ COST_BUDGET_MS: '5', COST_REFILL_MS_PER_SECOND: '1', ADMISSION_QUEUE_WAIT_MS: '0' });
    const created = await g.app.inject({ method: 'POST', url: '/api/v1/tokens', headers: alice, payload: { name: 'agent', scopes: ['read'] } });
    expect(created.statusCode).toBe(201);
    const agent = bearer(created.json().token as string);

    expect(await callUntilRefused(g.app, agent)).toMatchObject({ code: 'RATE_LIMITED', details: { reason: 'budget' } });
    expect((await query(g.app, agent)).statusCode).toBe(429);
    expect((await query(g.app, alice)).statusCode).toBe(200);
  });
});
