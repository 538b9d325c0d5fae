import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { boardsService } from '@app/boards';
import { tasksService } from '@app/tasks';
import { NatsBus, type Served } from '@app/shared/bus';
import { systemClock } from '@app/shared/domain';
import { silentLogger } from '@app/shared/log';
import { catchUpOutbox } from '@app/shared/events';
import { Collections } from '@app/shared/store';
import { startNatsServer, testStore, uniquePrefix, type NatsServer, type TransactionRulesStore } from '@app/shared/testing';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/index.js';
import { bearer, login, register, testConfig } from '../app/helpers.js';
import { startupIndexes } from '@app/shared/runtime';

/** Events of the feed matching `filter`, once the committed writes are numbered (as a reader sees them). */
async function eventCount(filter: Record<string, unknown>): Promise<number> {
  await catchUpOutbox(store);
  return store.collection(Collections.events).countDocuments(filter);
}

/**
 * Concurrency over a real nats-server: the gateway and TWO replicas of the tasks and
 * boards services (queue groups, four more NATS connections) share one store; requests go over
 * real HTTP. Conditional writes and Idempotency-Keys must hold whichever replica serves a request.
 */
let nats: NatsServer;
let store: TransactionRulesStore;
let buses: NatsBus[] = [];
let served: Served[] = [];
let app: FastifyInstance;
let base: string;
let headers: Record<string, string>;
/** Requests each replica served (its clock is asked once or more per write). */
const perReplica = [0, 0];

beforeAll(async () => {
  const log = silentLogger();
  const prefix = uniquePrefix();
  nats = await startNatsServer();
  store = await testStore();
  const connect = (name: string) => NatsBus.connect({ servers: nats.url, prefix, name, log });
  buses = await Promise.all(['gateway', 'replica-a', 'replica-b'].map(connect));
  for (const def of [tasksService, boardsService]) await store.ensureIndexes(startupIndexes(def));
  for (const [i, bus] of buses.slice(1).entries()) {
    const clock = { now: () => (perReplica[i]!++, systemClock.now()) };
    for (const def of [tasksService, boardsService]) served.push(await bus.serve(def.bindings({ store, clock, log }), { queue: def.name, log }));
  }
  app = await buildApp({ bus: buses[0]!, store, clock: systemClock, log, config: testConfig({ RATE_LIMIT_AUTH_MAX: '1000' }) });
  await app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  await register(app, 'racer');
  headers = bearer((await login(app, 'racer')).accessToken);
});

afterAll(async () => {
  await app?.close();
  for (const s of served) await s.close();
  for (const b of buses) await b.close();
  await store?.close();
  await nats?.stop();
});

async function call(method: string, path: string, body?: unknown, extra: Record<string, string> = {}) {
  const h: Record<string, string> = { ...headers, ...extra };
  if (body !== undefined) h['content-type'] = 'application/json';
  const res = await fetch(base + path, { method, headers: h, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text === '' ? undefined : (JSON.parse(text) as Record<string, any>) };
}

describe('concurrent writes over NATS with two service replicas', () => {
  it('20 concurrent PATCHes with the same If-Match: exactly one 200, nineteen 412 naming the new version', async () => {
    const task = await call('POST', '/api/v1/tasks', { title: 'contended' });
    const before = [...perReplica];
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => call('PATCH', `/api/v1/tasks/${task.body!.id}`, { title: `writer ${i}` }, { 'if-match': '"1"' })),
    );
    const codes = answers.map((a) => a.status);
    expect(codes.filter((c) => c === 200)).toHaveLength(1);
    expect(codes.filter((c) => c === 412)).toHaveLength(19);
    for (const a of answers.filter((x) => x.status === 412)) expect(a.body).toMatchObject({ code: 'PRECONDITION_FAILED', details: { current_version: 2 } });
    const winner = answers.find((a) => a.status === 200)!;
    expect(winner.headers.get('etag')).toBe('"2"');
    const read = await call('GET', `/api/v1/tasks/${task.body!.id}`);
    expect([read.body!.title, read.body!.version]).toEqual([winner.body!.title, 2]);
    // both replicas took part
    expect(perReplica[0]! - before[0]!).toBeGreaterThan(0);
    expect(perReplica[1]! - before[1]!).toBeGreaterThan(0);
    expect(await eventCount({ type: 'task.updated', task_id: task.body!.id })).toBe(1);
  });

  it('20 concurrent creates with the same Idempotency-Key: one task; every success is the same answer', async () => {
    const answers = await Promise.all(
      Array.from({ length: 20 }, () => call('POST', '/api/v1/tasks', { title: 'exactly once' }, { 'idempotency-key': 'nats-burst-1' })),
    );
    const codes = answers.map((a) => a.status);
    expect(codes.every((c) => c === 201 || c === 409), codes.join()).toBe(true);
    expect(await store.collection(Collections.tasks).countDocuments({ title: 'exactly once' })).toBe(1);
    const ids = new Set(answers.filter((a) => a.status === 201).map((a) => a.body!.id));
    expect(ids.size).toBe(1);
    const replay = await call('POST', '/api/v1/tasks', { title: 'exactly once' }, { 'idempotency-key': 'nats-burst-1' });
    expect([replay.status, replay.headers.get('idempotency-replayed'), replay.body!.id]).toEqual([201, 'true', [...ids][0]]);
    expect(await eventCount({ type: 'task.created', task_id: replay.body!.id })).toBe(1);
  });

  it('20 concurrent moves of one card with the same If-Match: one moves it, one card.moved', async () => {
    const columns = [{ name: 'To Do', query: "status = 'todo'" }, { name: 'Doing', query: "status = 'doing'" }];
    const board = await call('POST', '/api/v1/boards', { name: 'race', board_type: 'private', columns });
    const card = await call('POST', `/api/v1/boards/${board.body!.id}/tasks`, { title: 'card', status: 'todo' });
    const answers = await Promise.all(
      Array.from({ length: 20 }, () =>
        call('POST', `/api/v1/boards/${board.body!.id}/tasks/${card.body!.id}/move`, { from_column_id: 'col-to-do', to_column_id: 'col-doing' }, { 'if-match': '"1"' })),
    );
    expect(answers.filter((a) => a.status === 200)).toHaveLength(1);
    // the losers see the card gone from the source column (409) before the version (412)
    expect(answers.every((a) => a.status === 200 || a.status === 409 || a.status === 412)).toBe(true);
    expect(await eventCount({ type: 'card.moved', task_id: card.body!.id })).toBe(1);
  });
});
