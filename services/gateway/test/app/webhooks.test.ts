import { createHmac } from 'node:crypto';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { afterEach, describe, expect, it } from 'vitest';
import { aBoard, aGroup, aTask, appendTestEvents, eventually, insert } from '@app/shared/testing';
import { expectError, system, type System, type User } from './system.js';
import { Receiver } from './webhook-receiver.js';

/*
 * Webhooks end to end on the whole system: CRUD over HTTP, the query service's
 * dispatcher (fast tick, short attempt timeout, a clock the test moves) POSTing to a local
 * receiver on 127.0.0.1. Events are put in the outbox with `appendTestEvents`.
 */

let sys: System | undefined;
let receiver: Receiver | undefined;

afterEach(async () => {
  await sys?.[Symbol.asyncDispose]();
  await receiver?.close();
  sys = undefined;
  receiver = undefined;
});

/** The local receivers are on 127.0.0.1: the tests opt out of the address rules as a developer would, unless `env` says otherwise. */
const LOCAL = { WEBHOOK_ALLOW_PRIVATE: 'true' };

async function start(env: Record<string, string> = {}): Promise<{ sys: System; rx: Receiver; alice: User; bob: User; taskId: string }> {
  // The clock starts at the real time so the receiver's signature check accepts the timestamps.
  sys = await system({ env: { ...LOCAL, ...env }, webhooks: { tickMs: 20, attemptTimeoutMs: 300, random: () => 0.5 }, clockAt: new Date().toISOString() });
  receiver = await Receiver.start();
  const alice = await sys.user('alice');
  const bob = await sys.user('bob');
  const t = aTask({ owner: alice.id });
  await insert(sys.store, { tasks: [t] });
  return { sys, rx: receiver, alice, bob, taskId: t._id };
}

async function hook(s: System, as: User, body: Record<string, unknown>): Promise<{ id: string; secret: string }> {
  const res = await s.call('POST', '/api/v1/webhooks', as, body);
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

async function deliveries(s: System, as: User, id: string): Promise<any[]> {
  const res = await s.call('GET', `/api/v1/webhooks/${id}/deliveries`, as);
  expect(res.status).toBe(200);
  return res.body.data;
}

function untilDelivery(s: System, as: User, id: string, pred: (d: any[]) => boolean): Promise<any[]> {
  return eventually(`webhook ${id}'s delivery log`, () => deliveries(s, as, id), pred);
}

/**
 * A second receiver with an active webhook of `as` for `events`, as a marker: once it has received
 * an event, the dispatcher has fanned that event out to every webhook and its attempts have run,
 * so what another webhook has not received by then it was not sent.
 */
async function marker(s: System, as: User, events: string[]): Promise<Receiver> {
  const rx = await Receiver.start();
  await hook(s, as, { url: rx.url, events });
  return rx;
}

describe('webhook subscriptions', () => {
  it('creates with a secret shown once, lists, reads, changes and deletes', async () => {
    const { sys, rx, alice, bob } = await start();
    const created = await sys.call('POST', '/api/v1/webhooks', alice, { url: rx.url, events: ['card.moved', 'task.updated', 'card.moved'] });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ id: expect.any(String), url: rx.url, events: ['card.moved', 'task.updated'], active: true });
    expect(created.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    const id = created.body.id;
    const got = await sys.call('GET', `/api/v1/webhooks/${id}`, alice);
    expect(got.body.secret).toBeUndefined();
    expect(got.body.id).toBe(id);
    expect((await sys.call('GET', '/api/v1/webhooks', alice)).body.data.map((w: any) => w.id)).toEqual([id]);
    expect((await sys.call('GET', '/api/v1/webhooks', bob)).body.data).toEqual([]);
    expectError(await sys.call('GET', `/api/v1/webhooks/${id}`, bob), 404, 'WEBHOOK_NOT_FOUND');
    const patched = await sys.call('PATCH', `/api/v1/webhooks/${id}`, alice, { events: ['*'], query: "status = 'done'", active: false });
    expect(patched.body).toMatchObject({ events: ['*'], query: "status = 'done'", active: false });
    const cleared = await sys.call('PATCH', `/api/v1/webhooks/${id}`, alice, { query: '' });
    expect(cleared.body.query).toBeUndefined();
    expect((await sys.call('DELETE', `/api/v1/webhooks/${id}`, alice)).status).toBe(204);
    expectError(await sys.call('GET', `/api/v1/webhooks/${id}`, alice), 404, 'WEBHOOK_NOT_FOUND');
  });

  it('answers 400 naming the field, the query position or the URL reason, and 404 for an unreadable board', async () => {
    const { sys, rx, alice, bob } = await start();
    const scheme = expectError(await sys.call('POST', '/api/v1/webhooks', alice, { url: 'ftp://example.com/x', events: ['*'] }), 400, 'WEBHOOK_URL_REFUSED');
    expect(scheme.details.reason).toContain('ftp');
    expectError(await sys.call('POST', '/api/v1/webhooks', alice, { url: 'not a url', events: ['*'] }), 400, 'WEBHOOK_URL_REFUSED');
    // a URL with credentials is refused, and the error does not repeat them
    const creds = expectError(await sys.call('POST', '/api/v1/webhooks', alice, { url: 'https://hook:s3cret@example.com/x', events: ['*'] }), 400, 'WEBHOOK_URL_REFUSED');
    expect(creds.details.reason).toContain('credentials');
    expect(JSON.stringify(creds)).not.toContain('s3cret');
    const type = expectError(await sys.call('POST', '/api/v1/webhooks', alice, { url: rx.url, events: ['task.created', 'task.moved'] }), 400, 'VALIDATION_FAILED');
    expect(type.validationErrors[0].field).toBe('/events/1');
    const query = expectError(await sys.call('POST', '/api/v1/webhooks', alice, { url: rx.url, events: ['*'], query: "status = 'x' AND" }), 400, 'QUERY_SYNTAX');
    expect(query.details.position).toBe(16);
    const missing = expectError(await sys.call('POST', '/api/v1/webhooks', alice, { events: ['*'] }), 400, 'VALIDATION_FAILED');
    expect(missing.validationErrors.map((v: any) => v.field)).toEqual(['/url']);
    const bobsBoard = aBoard({ owner: bob.id });
    await insert(sys.store, { boards: [bobsBoard] });
    expectError(await sys.call('POST', '/api/v1/webhooks', alice, { url: rx.url, events: ['*'], board_id: bobsBoard._id }), 404, 'BOARD_NOT_FOUND');
  });

  it('refuses private and loopback targets by default, whatever NODE_ENV, unless allowed by WEBHOOK_ALLOWED_HOSTS', async () => {
    for (const env of [{}, { NODE_ENV: 'production', REGISTRATION_ENABLED: 'true' }, { NODE_ENV: 'staging' }] as Array<Record<string, string>>) {
      const plain = await system({ env });
      const dave = await plain.user('dave');
      for (const url of ['http://169.254.169.254/latest', 'http://127.0.0.1:3000/hooks']) {
        expectError(await plain.call('POST', '/api/v1/webhooks', dave, { url, events: ['*'] }), 400, 'WEBHOOK_URL_REFUSED');
      }
      await plain[Symbol.asyncDispose]();
    }
    const prod = await start({ WEBHOOK_ALLOW_PRIVATE: 'false' });
    for (const url of [prod.rx.url, 'http://localhost/x', 'http://10.1.2.3/x', 'http://169.254.169.254/latest', 'http://[::1]/x', 'http://192.168.0.1/']) {
      const body = expectError(await prod.sys.call('POST', '/api/v1/webhooks', prod.alice, { url, events: ['*'] }), 400, 'WEBHOOK_URL_REFUSED');
      expect(body.details.reason, url).toMatch(/is not an allowed target/);
    }
    await prod.sys[Symbol.asyncDispose]();
    const allowed = await system({ env: { WEBHOOK_ALLOWED_HOSTS: '127.0.0.1' } });
    sys = allowed;
    const rx = prod.rx;
    const carol = await allowed.user('carol');
    expect((await allowed.call('POST', '/api/v1/webhooks', carol, { url: rx.url, events: ['*'] })).status).toBe(201);
  });
});

describe('webhook targets and bodies', () => {
  it('says only that a target is not allowed: no resolved address, the same reason for an internal and an unresolvable name', async () => {
    const prod = await start({ WEBHOOK_ALLOW_PRIVATE: 'false' });
    const reason = async (url: string): Promise<string> =>
      expectError(await prod.sys.call('POST', '/api/v1/webhooks', prod.alice, { url, events: ['*'] }), 400, 'WEBHOOK_URL_REFUSED').details.reason;
    const internal = await reason('http://localhost/x');
    const unresolvable = await reason('http://no-such-host.invalid/x');
    expect(internal).not.toMatch(/127\.0\.0\.1|::1|resolves/);
    expect(internal.replace('localhost', 'H')).toBe(unresolvable.replace('no-such-host.invalid', 'H'));
  });

  it('refuses IPv6 forms that embed an internal IPv4 address (mapped, compatible, NAT64, 6to4, Teredo)', async () => {
    const prod = await start({ WEBHOOK_ALLOW_PRIVATE: 'false' });
    for (const url of [
      'http://[64:ff9b::7f00:1]/', 'http://[::7f00:1]/', 'http://[::ffff:0:7f00:1]/', 'http://[2002:7f00:1::]/',
      'http://[64:ff9b::a9fe:a9fe]/latest', 'http://[64:ff9b:1:7f00:1::]/', 'http://[2001:0:808:808::80ff:fefe]/', 'http://[::ffff:a00:1]/',
    ]) {
      const body = expectError(await prod.sys.call('POST', '/api/v1/webhooks', prod.alice, { url, events: ['*'] }), 400, 'WEBHOOK_URL_REFUSED');
      expect(body.details.reason, url).toMatch(/is not an allowed target/);
    }
    // the same forms around a public IPv4 address are accepted
    for (const url of ['http://[64:ff9b::808:808]/', 'http://[2002:808:808::]/']) {
      expect((await prod.sys.call('POST', '/api/v1/webhooks', prod.alice, { url, events: ['*'] })).status, url).toBe(201);
    }
  });

  it('refuses whitespace and control characters in the URL and stores the normalized form', async () => {
    const { sys, rx, alice } = await start();
    for (const url of [` ${rx.url}`, `${rx.url}\r\nX-Injected: 1`, `${rx.url} `, 'http://exa\tmple.com/', `${rx.url}\u0000`]) {
      const body = expectError(await sys.call('POST', '/api/v1/webhooks', alice, { url, events: ['*'] }), 400, 'WEBHOOK_URL_REFUSED');
      expect(body.details, JSON.stringify(url)).toMatchObject({ field: '/url', reason: expect.stringMatching(/whitespace or a control character/) });
    }
    const port = new URL(rx.url).port;
    const created = await sys.call('POST', '/api/v1/webhooks', alice, { url: `HTTP:/127.0.0.1:${port}/a/../hook`, events: ['*', 'task.created'] });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ url: `http://127.0.0.1:${port}/hook`, events: ['*'] });
    const patched = await sys.call('PATCH', `/api/v1/webhooks/${created.body.id}`, alice, { url: `http://LOCALHOST:${port}`, events: ['task.created', 'task.updated', 'task.created'] });
    expect(patched.body).toMatchObject({ url: `http://localhost:${port}/`, events: ['task.created', 'task.updated'] });
  });

  it('creates a paused webhook with active: false; it receives nothing until resumed', async () => {
    const { sys, rx, alice, taskId } = await start();
    const created = await sys.call('POST', '/api/v1/webhooks', alice, { url: rx.url, events: ['*'], active: false });
    expect(created.status).toBe(201);
    expect(created.body.active).toBe(false);
    expect((await sys.call('GET', `/api/v1/webhooks/${created.body.id}`, alice)).body.active).toBe(false);
    const other = await marker(sys, alice, ['task.updated']);
    try {
      await appendTestEvents(sys.store, [{ type: 'task.updated', task_id: taskId }]);
      await other.until(1);
    } finally {
      await other.close();
    }
    expect(rx.received).toHaveLength(0);
    expect(await deliveries(sys, alice, created.body.id)).toEqual([]);
    expect((await sys.call('PATCH', `/api/v1/webhooks/${created.body.id}`, alice, { active: true })).body.active).toBe(true);
    await appendTestEvents(sys.store, [{ type: 'task.updated', task_id: taskId }]);
    await rx.until(1);
  });
});

describe('webhook delivery', () => {
  it('POSTs the envelope with Standard Webhooks headers that verify with the secret, and logs the delivery', async () => {
    const { sys, rx, alice, taskId } = await start();
    const { id, secret } = await hook(sys, alice, { url: rx.url, events: ['*'] });
    const [event] = await appendTestEvents(sys.store, [{ type: 'task.updated', task_id: taskId, actor: alice.id, data: { n: 1 } }]);
    await rx.until(1);
    const got = rx.received[0]!;
    expect(got.headers['webhook-id']).toBe(event!._id);
    expect(got.headers['content-type']).toBe('application/json');
    expect(got.json).toMatchObject({ id: event!._id, seq: event!.seq, type: 'task.updated', task_id: taskId, data: { n: 1 } });
    expect(new StandardWebhook(secret).verify(got.body, got.headers as Record<string, string>)).toEqual(got.json);
    // The same check by hand, as docs/events.md shows a receiver.
    const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
    const mac = createHmac('sha256', key).update(`${got.headers['webhook-id']}.${got.headers['webhook-timestamp']}.${got.body}`).digest('base64');
    expect(got.headers['webhook-signature']).toBe(`v1,${mac}`);
    expect(() => new StandardWebhook(secret).verify(got.body.replace('"n":1', '"n":2'), got.headers as Record<string, string>)).toThrow();
    const log = await untilDelivery(sys, alice, id, (d) => d[0]?.status === 'delivered');
    expect(log).toEqual([
      expect.objectContaining({ event_id: event!._id, event_type: 'task.updated', seq: event!.seq, status: 'delivered', attempt: 1, status_code: 200, duration_ms: expect.any(Number) }),
    ]);
  });

  it('retries after a 500 and after a timeout with backoff, with the same webhook-id, and keeps per-webhook order', async () => {
    const { sys, rx, alice, taskId } = await start();
    const { id } = await hook(sys, alice, { url: rx.url, events: ['task.updated'] });
    const other = await marker(sys, alice, ['task.updated']);
    rx.plan.push(500, 'hang');
    const events = await appendTestEvents(sys.store, [1, 2, 3].map((n) => ({ type: 'task.updated', task_id: taskId, data: { n } })));
    await rx.until(1);
    let log = await untilDelivery(sys, alice, id, (d) => d.find((x) => x.seq === 1)?.attempt === 1);
    const first = log.find((x) => x.seq === 1);
    expect(first).toMatchObject({ status: 'pending', status_code: 500, error: 'HTTP 500' });
    const wait = Date.parse(first.next_attempt_at) - sys.clock.now().getTime();
    expect(wait).toBeGreaterThan(0);
    expect(wait).toBeLessThanOrEqual(30_000);
    try {
      await other.until(3); // the other webhook has had all three
    } finally {
      await other.close();
    }
    expect(rx.received).toHaveLength(1); // events 2 and 3 wait behind event 1
    sys.clock.advance(wait);
    await rx.until(2);
    log = await untilDelivery(sys, alice, id, (d) => d.find((x) => x.seq === 1)?.attempt === 2);
    expect(log.find((x) => x.seq === 1)).toMatchObject({ status: 'pending', error: expect.stringMatching(/timed out/) });
    expect(log.find((x) => x.seq === 1).status_code).toBeUndefined();
    sys.clock.advance(5 * 60_000);
    await rx.until(5);
    expect(rx.received.map((r) => r.json.seq)).toEqual([1, 1, 1, 2, 3]);
    expect(new Set(rx.received.slice(0, 3).map((r) => r.headers['webhook-id']))).toEqual(new Set([events[0]!._id]));
    log = await untilDelivery(sys, alice, id, (d) => d.every((x) => x.status === 'delivered'));
    expect(log.map((d) => [d.seq, d.attempt])).toEqual([[3, 1], [2, 1], [1, 3]]);
    expect(log[2].attempts.map((a: any) => a.status_code ?? a.error)).toEqual([500, expect.stringMatching(/timed out/), 200]);
  });

  it("a receiver that hangs delays only its own webhook: another webhook's deliveries all arrive while it hangs", async () => {
    // attempts may take 30 s, longer than this test: the hanging one stays in flight throughout
    sys = await system({ env: LOCAL, webhooks: { tickMs: 20, attemptTimeoutMs: 30_000, random: () => 0.5 }, clockAt: new Date().toISOString() });
    const alice = await sys.user('alice');
    const bob = await sys.user('bob');
    const [aliceTask, bobTask] = [aTask({ owner: alice.id }), aTask({ owner: bob.id })];
    await insert(sys.store, { tasks: [aliceTask, bobTask] });
    receiver = await Receiver.start();
    const slow = await Receiver.start();
    try {
      slow.plan.push('hang', 'hang', 'hang');
      const bobHook = await hook(sys, bob, { url: slow.url, events: ['*'] });
      await hook(sys, alice, { url: receiver.url, events: ['*'] });
      await appendTestEvents(sys.store, [{ type: 'task.updated', task_id: bobTask._id, data: { n: 0 } }]);
      await slow.until(1);
      for (let n = 1; n <= 10; n++) {
        await appendTestEvents(sys.store, [{ type: 'task.updated', task_id: aliceTask._id, data: { n } }]);
        await receiver.until(n, 10_000);
      }
      expect(receiver.received.map((r) => r.json.data.n)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
      // Bob's one attempt is still in flight, unanswered and not yet recorded
      expect(slow.received).toHaveLength(1);
      expect(slow.received[0]!.answered).toBe(0);
      expect((await deliveries(sys, bob, bobHook.id)).map((d) => d.attempt)).toEqual([0]);
    } finally {
      await slow.close();
    }
  });

  it('gives up after WEBHOOK_MAX_ATTEMPTS, retries on request, and disables a webhook failing for 24 h', async () => {
    const { sys, rx, alice, taskId } = await start({ WEBHOOK_MAX_ATTEMPTS: '2' });
    const { id } = await hook(sys, alice, { url: rx.url, events: ['*'] });
    rx.plan.push(500, 500, 500, 500);
    await appendTestEvents(sys.store, [{ type: 'task.updated', task_id: taskId }]);
    await rx.until(1);
    // the first attempt's outcome is recorded (its retry scheduled from the clock's time then) before the clock moves on
    await untilDelivery(sys, alice, id, (x) => x[0]?.attempt === 1 && x[0]?.status === 'pending');
    sys.clock.advance(60_000);
    await rx.until(2);
    let [d] = await untilDelivery(sys, alice, id, (x) => x[0]?.status === 'failed');
    expect(d.attempt).toBe(2);
    const retried = await sys.call('POST', `/api/v1/webhooks/${id}/deliveries/${d.id}/retry`, alice);
    expect(retried.status).toBe(202);
    expect(retried.body).toMatchObject({ id: d.id, status: 'pending' });
    await rx.until(3);
    [d] = await untilDelivery(sys, alice, id, (x) => x[0]?.attempt === 3);
    expect(d.status).toBe('failed');
    expectError(await sys.call('POST', `/api/v1/webhooks/${id}/deliveries/nope/retry`, alice), 404, 'DELIVERY_NOT_FOUND');
    // A day later it still fails: the webhook is disabled and says why.
    sys.clock.advance(24 * 3_600_000);
    await appendTestEvents(sys.store, [{ type: 'task.updated', task_id: taskId }]);
    await rx.until(4);
    const w = await eventually('the webhook disabled', async () => (await sys.call('GET', `/api/v1/webhooks/${id}`, alice)).body, (x) => !x.active);
    expect(w).toMatchObject({ active: false, disabled_reason: expect.stringContaining('24 h') });
    const enabled = await sys.call('PATCH', `/api/v1/webhooks/${id}`, alice, { active: true });
    expect(enabled.body.active).toBe(true);
    expect(enabled.body.disabled_reason).toBeUndefined();
  });

  it('a manual retry of a pending delivery adds an attempt now and the scheduled retries go on', async () => {
    const { sys, rx, alice, taskId } = await start({ WEBHOOK_MAX_ATTEMPTS: '3' });
    const { id } = await hook(sys, alice, { url: rx.url, events: ['*'] });
    rx.plan.push(500, 500, 500, 500);
    await appendTestEvents(sys.store, [{ type: 'task.updated', task_id: taskId }]);
    await rx.until(1);
    let [d] = await untilDelivery(sys, alice, id, (x) => x[0]?.attempt === 1 && x[0]?.status === 'pending');
    const scheduled = d.next_attempt_at;
    expect((await sys.call('POST', `/api/v1/webhooks/${id}/deliveries/${d.id}/retry`, alice)).status).toBe(202);
    await rx.until(2);
    [d] = await untilDelivery(sys, alice, id, (x) => x[0]?.attempt === 2);
    expect(d).toMatchObject({ status: 'pending', next_attempt_at: scheduled });
    // the schedule's own attempts 2 and 3 still come
    sys.clock.advance(60_000);
    await rx.until(3);
    [d] = await untilDelivery(sys, alice, id, (x) => x[0]?.attempt === 3);
    expect(d.status).toBe('pending');
    sys.clock.advance(10 * 60_000);
    await rx.until(4);
    [d] = await untilDelivery(sys, alice, id, (x) => x[0]?.attempt === 4);
    expect(d.status).toBe('failed');
  });

  it('delivers a task event only when the task after the change matches the query, and only what the owner can read', async () => {
    const { sys, rx, alice, bob, taskId } = await start();
    await hook(sys, alice, { url: rx.url, events: ['task.updated'], query: "status = 'done' AND 'q4' IN tags" });
    const bobs = aTask({ owner: bob.id });
    await insert(sys.store, { tasks: [bobs] });
    const task = (status: string, tags: string[], id = taskId) => ({ id, title: 't', status, path: '', tags, checkInCount: 0, metadata: {}, created_by: alice.id });
    await appendTestEvents(sys.store, [
      { type: 'task.updated', task_id: taskId, data: { task: task('todo', ['q4']) } },
      { type: 'task.updated', task_id: taskId, data: { task: task('done', []) } },
      { type: 'task.updated', task_id: bobs._id, data: { task: task('done', ['q4'], bobs._id) } },
      { type: 'task.created', task_id: taskId, data: { task: task('done', ['q4']) } },
      { type: 'task.updated', task_id: taskId, data: { task: task('done', ['q4']) } },
      { type: 'task.updated', task_id: taskId, data: { task: task('done', ['q4']), marker: true } },
    ]);
    // deliveries keep the events' order: once the matching marker (seq 6) is in, nothing before it can still come
    await rx.until(2);
    expect(rx.received.map((r) => r.json.seq)).toEqual([5, 6]);
  });

  it("filters by a saved view's current query, its functions resolved for the owner", async () => {
    const { sys, rx, alice, bob, taskId } = await start();
    const view = await sys.call('POST', '/api/v1/views', alice, { name: 'Mine done', query: "assignee = me() AND status = 'done'" });
    expect(view.status, JSON.stringify(view.body)).toBe(201);
    expectError(await sys.call('POST', '/api/v1/webhooks', alice, { url: rx.url, events: ['*'], view_id: view.body.id, query: "status = 'x'" }), 400, 'VALIDATION_FAILED');
    expectError(await sys.call('POST', '/api/v1/webhooks', bob, { url: rx.url, events: ['*'], view_id: view.body.id }), 404, 'VIEW_NOT_FOUND');
    const { id } = await hook(sys, alice, { url: rx.url, events: ['task.updated'], view_id: view.body.id });
    expect((await sys.call('GET', `/api/v1/webhooks/${id}`, alice)).body.view_id).toBe(view.body.id);
    const task = (status: string, assignee: string) => ({ id: taskId, title: 't', status, path: '', tags: [], checkInCount: 0, metadata: {}, created_by: alice.id, assignee });
    await appendTestEvents(sys.store, [
      { type: 'task.updated', task_id: taskId, data: { task: task('done', bob.id) } },
      { type: 'task.updated', task_id: taskId, data: { task: task('todo', alice.id) } },
      { type: 'task.updated', task_id: taskId, data: { task: task('done', alice.id) } },
    ]);
    // deliveries keep the events' order: once seq 4, the last event, is in, nothing before it can still come
    await rx.until(1);
    expect(rx.received.map((r) => r.json.seq)).toEqual([4]); // seq 1 is the view's own view.created
    // the deliveries follow the view as it is now
    const changed = await sys.call('PATCH', `/api/v1/views/${view.body.id}`, alice, { query: "status = 'todo'" });
    expect(changed.status).toBe(200);
    await appendTestEvents(sys.store, [
      { type: 'task.updated', task_id: taskId, data: { task: task('done', alice.id) } },
      { type: 'task.updated', task_id: taskId, data: { task: task('todo', bob.id) } },
    ]);
    await rx.until(2); // seq 7 is the last event: nothing before it can still come
    expect(rx.received.map((r) => r.json.seq)).toEqual([4, 7]); // seq 5 is view.updated
  });

  it('does not send an event whose task the owner can no longer read when the attempt is due', async () => {
    const { sys, rx, alice, bob } = await start();
    const group = aGroup(bob.id, [alice.id]);
    const shared = aTask({ owner: bob.id, groupId: group._id, groupPermission: 'r' });
    await insert(sys.store, { groups: [group], tasks: [shared] });
    const { id } = await hook(sys, alice, { url: rx.url, events: ['*'] });
    rx.plan.push(500);
    await appendTestEvents(sys.store, [{ type: 'task.updated', task_id: shared._id, actor: bob.id }]);
    await rx.until(1);
    await untilDelivery(sys, alice, id, (x) => x[0]?.attempt === 1 && x[0]?.status === 'pending'); // its retry is scheduled
    await sys.store.collection('groups').updateOne({ _id: group._id }, { $set: { members: [{ user_id: bob.id, role: 'owner' }] } });
    sys.clock.advance(60_000);
    const [d] = await untilDelivery(sys, alice, id, (x) => x[0]?.status === 'failed');
    expect(d.error).toMatch(/can no longer read/);
    expect(rx.received).toHaveLength(1);
  });

  it('refuses, at connect time, a target that resolves to loopback, without naming the address', async () => {
    const { httpSender } = await import('../../../query/src/webhooks/send.js');
    const { targetPolicy } = await import('../../../query/src/webhooks/ssrf.js');
    receiver = await Receiver.start();
    const port = new URL(receiver.url).port;
    const send = httpSender(targetPolicy({}), 1_000);
    const post = { id: 'e1', body: '{}', secret: 'whsec_' + Buffer.alloc(32).toString('base64'), at: new Date() };
    const out = await send({ ...post, url: `http://localhost:${port}/hook` });
    expect(out).toMatchObject({ ok: false, error: expect.stringMatching(/refused: localhost is not an allowed target/) });
    expect(out.error).not.toMatch(/127\.0\.0\.1|::1/);
    for (const host of ['[::ffff:7f00:1]', '[64:ff9b::7f00:1]', '[::7f00:1]', '[2002:7f00:1::]']) {
      expect(await send({ ...post, url: `http://${host}:${port}/hook` }), host).toMatchObject({ ok: false, error: expect.stringMatching(/refused/) });
    }
    expect(receiver.received).toHaveLength(0);
    const allowed = httpSender(targetPolicy({ WEBHOOK_ALLOWED_HOSTS: 'localhost' }), 1_000);
    expect(await allowed({ ...post, url: `http://localhost:${port}/hook` })).toMatchObject({ ok: true, status_code: 200 });
  });
});
