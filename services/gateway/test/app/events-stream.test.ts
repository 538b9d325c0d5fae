import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { aTask, appendTestEvents, eventually, insert, type TestEvent } from '@app/shared/testing';
import { claims, craftToken } from './helpers.js';
import { SseClient } from './sse-client.js';
import { system, type System, type User } from './system.js';

/*
 * The event stream `GET /api/v1/events/stream` over a real HTTP connection to the whole
 * system listening on 127.0.0.1. Events are put in the outbox with `appendTestEvents`.
 */

let sys: System | undefined;
const clients: SseClient[] = [];

afterEach(async () => {
  for (const c of clients.splice(0)) c.close();
  await sys?.[Symbol.asyncDispose]();
  sys = undefined;
});

async function start(opts: Parameters<typeof system>[0] = {}): Promise<{ sys: System; base: string; alice: User; bob: User; taskId: string }> {
  sys = await system(opts);
  await sys.app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(sys.app.server.address() as AddressInfo).port}`;
  const alice = await sys.user('alice');
  const bob = await sys.user('bob');
  const t = aTask({ owner: alice.id });
  await insert(sys.store, { tasks: [t] });
  return { sys, base, alice, bob, taskId: t._id };
}

async function open(base: string, as: User, query = '', headers: Record<string, string> = {}): Promise<SseClient> {
  const c = await SseClient.open(`${base}/api/v1/events/stream${query}`, { ...as.headers, ...headers });
  clients.push(c);
  return c;
}

const connected = (c: SseClient) => c.frames.some((f) => f.comment === 'connected');
const ids = (c: SseClient) => c.events.map((f) => Number(f.id));

describe('GET /api/v1/events/stream', () => {
  // how soon a frame is live is a figure of the bench's events section (docs/bench.md), not asserted here
  it('streams a committed event, framed id/event/data', async () => {
    const { sys, base, alice, taskId } = await start();
    const c = await open(base, alice);
    expect(c.status).toBe(200);
    expect(c.headers['content-type']).toMatch(/^text\/event-stream/);
    await c.until(connected);
    const [stored] = await appendTestEvents(sys.store, [{ type: 'task.updated', task_id: taskId, actor: alice.id, data: { n: 1 } }]);
    await c.until((x) => x.events.length === 1);
    const frame = c.events[0]!;
    expect(frame.id).toBe(String(stored!.seq));
    expect(frame.event).toBe('task.updated');
    expect(frame.data).toMatchObject({ id: stored!._id, seq: stored!.seq, type: 'task.updated', task_id: taskId, data: { n: 1 } });
  });

  it('resumes after Last-Event-ID (or ?after=) without gaps or repeats, also while events keep coming', async () => {
    const { sys, base, alice, taskId } = await start();
    const ev: TestEvent = { type: 'task.updated', task_id: taskId };
    await appendTestEvents(sys.store, [ev, ev, ev, ev, ev]);
    const writer = (async () => {
      for (let i = 0; i < 20; i++) await appendTestEvents(sys.store, [ev]);
    })();
    const c = await open(base, alice, '', { 'last-event-id': '2' });
    const d = await open(base, alice, '?after=4');
    await writer;
    await appendTestEvents(sys.store, [ev]);
    await c.until((x) => x.events.length === 24);
    await d.until((x) => x.events.length === 22);
    expect(ids(c)).toEqual(Array.from({ length: 24 }, (_, i) => i + 3));
    expect(ids(d)).toEqual(Array.from({ length: 22 }, (_, i) => i + 5));
    // Last-Event-ID wins over ?after=
    const e = await open(base, alice, '?after=0', { 'last-event-id': '25' });
    await e.until((x) => x.events.length === 1);
    expect(ids(e)).toEqual([26]);
  });

  it('sends a heartbeat comment at the configured interval', async () => {
    const { base, alice } = await start({ streamOptions: { heartbeatMs: 40 } });
    const c = await open(base, alice);
    await c.until((x) => x.frames.filter((f) => f.comment === 'heartbeat').length >= 2, 2_000);
  });

  it('delivers only events the caller can read, and applies the types and board_id filters', async () => {
    const { sys, base, alice, bob, taskId } = await start();
    const bobs = aTask({ owner: bob.id });
    await insert(sys.store, { tasks: [bobs] });
    const all = await open(base, alice);
    const moves = await open(base, alice, '?types=card.moved&board_id=b1');
    const bobStream = await open(base, bob);
    await Promise.all([all, moves, bobStream].map((c) => c.until(connected)));
    await appendTestEvents(sys.store, [
      { type: 'task.updated', task_id: bobs._id, actor: bob.id },
      { type: 'card.moved', task_id: taskId, board_id: 'b1' },
      { type: 'card.moved', task_id: taskId, board_id: 'b2' },
      { type: 'card.moved', task_id: bobs._id, board_id: 'b1' },
      { type: 'task.updated', task_id: taskId },
    ]);
    await all.until((x) => x.events.length === 3);
    await moves.until((x) => x.events.length === 1);
    await bobStream.until((x) => x.events.length === 2);
    await appendTestEvents(sys.store, [{ type: 'task.created', task_id: taskId }]);
    await all.until((x) => x.events.length === 4);
    expect(ids(all)).toEqual([2, 3, 5, 6]);
    expect(ids(moves)).toEqual([2]);
    expect(ids(bobStream)).toEqual([1, 4]);
  });

  it('bounds open streams per user (429 TOO_MANY_STREAMS) and frees a slot when one closes', async () => {
    const { base, alice, bob } = await start({ env: { EVENT_STREAMS_PER_USER: '2' } });
    const a1 = await open(base, alice);
    await open(base, alice);
    const third = await open(base, alice);
    await third.until((x) => x.ended);
    expect(third.status).toBe(429);
    expect(JSON.parse(third.body)).toMatchObject({ code: 'TOO_MANY_STREAMS', details: { limit: 2 } });
    expect((await open(base, bob)).status).toBe(200);
    a1.close();
    // the server frees the slot when it sees the connection close: a new stream is then let in
    const next = await eventually('a stream slot freed', () => open(base, alice), (c) => c.status === 200);
    expect(next.status).toBe(200);
  });

  it('answers 410 for a resume point past retention, 400 for a bad Last-Event-ID or type, 401 without a token', async () => {
    const { sys, base, alice, taskId } = await start();
    await appendTestEvents(sys.store, [{ type: 'task.created', task_id: taskId }], new Date('2020-01-01T00:00:00Z'));
    const { sweepEvents } = await import('@app/shared/events');
    await sweepEvents(sys.store, new Date(), 7);
    const gone = await open(base, alice, '', { 'last-event-id': '0' });
    await gone.until((x) => x.ended);
    expect(gone.status).toBe(410);
    expect(JSON.parse(gone.body).code).toBe('EVENTS_EXPIRED');
    const bad = await open(base, alice, '', { 'last-event-id': 'abc' });
    await bad.until((x) => x.ended);
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.body).validationErrors[0].field).toBe('/headers/last-event-id');
    // Last-Event-ID and ?after accept the same cursors: decimal digits up to Number.MAX_SAFE_INTEGER
    for (const cursor of ['9007199254740993', '0x10', '1e3']) {
      for (const [query, headers, field] of [[`?after=${cursor}`, {}, '/after'], ['', { 'last-event-id': cursor }, '/headers/last-event-id']] as const) {
        const refused = await open(base, alice, query, headers);
        await refused.until((x) => x.ended);
        expect(refused.status, `${query} ${JSON.stringify(headers)}`).toBe(400);
        expect(JSON.parse(refused.body).validationErrors[0].field).toBe(field);
      }
    }
    const badType = await open(base, alice, '?types=nope');
    await badType.until((x) => x.ended);
    expect(badType.status).toBe(400);
    const anon = await SseClient.open(`${base}/api/v1/events/stream`, {});
    clients.push(anon);
    expect(anon.status).toBe(401);
  });

  it('ends the stream when its access token expires', async () => {
    const { base, alice } = await start();
    const now = Math.floor(Date.now() / 1000);
    const token = craftToken(claims({ sub: alice.id, iat: now, exp: now + 1 }));
    const c = await open(base, { ...alice, headers: { authorization: `Bearer ${token}` } });
    expect(c.status).toBe(200);
    await c.until((x) => x.ended, 3_000);
  });

  it('streams a backlog over 1 MiB and an event larger than the unread-bytes mark whole, resuming with ?after= or Last-Event-ID', async () => {
    const { sys, base, alice, taskId } = await start();
    // 100,000 U+0002 characters: 600 KB of JSON each, 1.8 MB after seq 1
    const big = '\u0002'.repeat(100_000);
    await appendTestEvents(sys.store, [{ type: 'task.created', task_id: taskId }]);
    for (let i = 0; i < 3; i++) await appendTestEvents(sys.store, [{ type: 'task.updated', task_id: taskId, data: { big, i } }]);
    const after = await open(base, alice, '?after=1');
    const resumed = await open(base, alice, '', { 'last-event-id': '1' });
    for (const c of [after, resumed]) {
      await c.until((x) => x.events.length === 3);
      expect(ids(c)).toEqual([2, 3, 4]);
      expect(c.events.map((f) => f.data.data)).toEqual([0, 1, 2].map((i) => ({ big, i })));
      expect(c.ended).toBe(false);
    }
    // a small mark: a single event past it is still written whole
    await sys[Symbol.asyncDispose]();
    const small = await start({ streamOptions: { maxBufferedBytes: 16 * 1024 } });
    await appendTestEvents(small.sys.store, [{ type: 'task.updated', task_id: small.taskId, data: { big } }]);
    const c = await open(small.base, small.alice, '?after=0');
    await c.until((x) => x.events.length === 1);
    expect(c.events[0]!.data.data).toEqual({ big });
  });

  it('waits for a client that reads slowly instead of dropping it, and sends it every event in order', async () => {
    const { sys, base, alice, taskId } = await start({ streamOptions: { maxBufferedBytes: 64 * 1024 } });
    const c = await open(base, alice);
    await c.until(connected);
    c.res!.pause();
    const big = 'x'.repeat(100_000);
    for (let i = 0; i < 60; i++) await appendTestEvents(sys.store, [{ type: 'task.updated', task_id: taskId, data: { big, i } }]);
    c.res!.resume();
    await c.until((x) => x.events.length === 60, 10_000);
    expect(c.events.map((f) => f.data.data.i)).toEqual(Array.from({ length: 60 }, (_, i) => i));
    expect(ids(c)).toEqual(Array.from({ length: 60 }, (_, i) => i + 1));
    expect(c.ended).toBe(false);
  });

  it('drops a client that stops reading for the stall time instead of buffering without limit', async () => {
    const { sys, base, alice, taskId } = await start({ streamOptions: { maxBufferedBytes: 64 * 1024, stallMs: 200, perUser: 1 } });
    const c = await open(base, alice);
    await c.until(connected);
    c.res!.pause();
    const big = 'x'.repeat(100_000);
    for (let i = 0; i < 60; i++) await appendTestEvents(sys.store, [{ type: 'task.updated', task_id: taskId, data: { big } }]);
    // its one stream slot frees once it is dropped (while it still reads nothing)
    const slot = async (): Promise<number> => {
      const d = await SseClient.open(`${base}/api/v1/events/stream`, alice.headers);
      d.close();
      return d.status;
    };
    await expect.poll(slot, { timeout: 5_000 }).toBe(200);
    c.res!.resume();
    await c.until((x) => x.ended, 5_000);
    expect(c.events.length).toBeLessThan(60);
  });
});
