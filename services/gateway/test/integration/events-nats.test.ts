import { CommonConfig, loadConfig } from '@app/shared/config';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventWork, queryService } from '@app/query';
import { tasksService } from '@app/tasks';
import { NatsBus, type Served } from '@app/shared/bus';
import { systemClock } from '@app/shared/domain';
import { jetstreamManager } from '@nats-io/jetstream';
import { eventsStreamNames, JetStreamHub } from '@app/shared/events';
import { silentLogger } from '@app/shared/log';
import { serveServices } from '@app/shared/runtime';
import { aTask, appendTestEvents, eventually, insert, startNatsServer, testStore, uniquePrefix, type NatsServer, type TransactionRulesStore } from '@app/shared/testing';
import { buildApp } from '../../src/index.js';
import { login, register, testConfig } from '../app/helpers.js';
import { SseClient } from '../app/sse-client.js';
import { Receiver } from '../app/webhook-receiver.js';

/**
 * The distributed event path over a real nats-server with JetStream: two query-service
 * replicas (each with its outbox relay and its share of the durable webhook consumer) and two
 * gateway replicas (each following the events stream for SSE), all separate NATS connections on one
 * store, as separate processes sharing MongoDB would be. Events are committed with `appendTestEvents`.
 */
let nats: NatsServer;
let store: TransactionRulesStore;
const buses: NatsBus[] = [];
const served: Served[] = [];
const hubs: JetStreamHub[] = [];
const gateways: FastifyInstance[] = [];
const bases: string[] = [];
let receiver: Receiver;
const clients: SseClient[] = [];
let alice: { id: string; headers: Record<string, string> };
let taskId: string;
let prefix: string;

beforeAll(async () => {
  const log = silentLogger();
  prefix = uniquePrefix();
  nats = await startNatsServer({ jetstream: true });
  store = await testStore();
  receiver = await Receiver.start();
  const bus = async (name: string) => {
    const b = await NatsBus.connect({ servers: nats.url, prefix, name, log });
    buses.push(b);
    return b;
  };
  for (const name of ['query-1', 'query-2']) {
    const query = { ...queryService, background: eventWork({ tickMs: 20 }) };
    // the receiver is on 127.0.0.1: the local-development opt-out of the webhook address rules
    const config = loadConfig(CommonConfig, { WEBHOOK_ALLOW_PRIVATE: 'true' });
    served.push(...(await serveServices([query], { bus: await bus(name), store, log, background: true, config })));
  }
  served.push(...(await serveServices([tasksService], { bus: await bus('tasks'), store, log })));
  for (const name of ['gateway-1', 'gateway-2']) {
    const b = await bus(name);
    const hub = await JetStreamHub.start({ store, nc: b.connection, prefix, log });
    hubs.push(hub);
    const app = await buildApp({ bus: b, store, clock: systemClock, log, config: testConfig({ RATE_LIMIT_AUTH_MAX: '1000' }), events: hub });
    await app.listen({ port: 0, host: '127.0.0.1' });
    gateways.push(app);
    bases.push(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}`);
  }
  await register(gateways[0]!, 'alice');
  const tokens = await login(gateways[0]!, 'alice');
  alice = { id: tokens.userId, headers: { authorization: `Bearer ${tokens.accessToken}` } };
  const t = aTask({ owner: alice.id });
  await insert(store, { tasks: [t] });
  taskId = t._id;
}, 30_000);

afterAll(async () => {
  for (const c of clients) c.close();
  for (const app of gateways) await app.close();
  for (const h of hubs) await h.close();
  for (const s of served) await s.close();
  for (const b of buses) await b.close();
  await receiver?.close();
  await store?.close();
  await nats?.stop();
});

describe('events over NATS JetStream', () => {
  it('streams every event to a client of each gateway replica, in order, once', async () => {
    for (const base of bases) {
      const c = await SseClient.open(`${base}/api/v1/events/stream`, alice.headers);
      clients.push(c);
      expect(c.status).toBe(200);
      await c.until((x) => x.frames.some((f) => f.comment === 'connected'));
    }
    // 20 events, then a marker: events arrive in order, so a repeat of the 20 would come before it
    const stored = await appendTestEvents(store, Array.from({ length: 21 }, (_, n) => ({ type: 'task.updated', task_id: taskId, data: { n } })));
    const want = stored.map((e) => String(e.seq));
    for (const c of clients) {
      await c.until((x) => x.events.some((f) => f.id === want[20]), 5_000);
      expect(c.events.map((f) => f.id)).toEqual(want);
    }
  });

  it('delivers each event to a webhook exactly once, in seq order, with two dispatcher replicas', async () => {
    const created = await fetch(`${bases[1]}/api/v1/webhooks`, {
      method: 'POST',
      headers: { ...alice.headers, 'content-type': 'application/json' },
      body: JSON.stringify({ url: receiver.url, events: ['task.updated'] }),
    });
    expect(created.status).toBe(201);
    // 20 events, then a marker: deliveries keep the events' order, so a repeat would come before it
    const stored = await appendTestEvents(store, Array.from({ length: 21 }, (_, n) => ({ type: 'task.updated', task_id: taskId, data: { n } })));
    await eventually('the marker delivered', () => receiver.received.some((r) => r.headers['webhook-id'] === stored[20]!._id), Boolean, { timeoutMs: 10_000 });
    expect(receiver.received.map((r) => r.headers['webhook-id'])).toEqual(stored.map((e) => e._id));
    // It went through JetStream: every event is in the stream once, and the durable consumer acked them.
    const jsm = await jetstreamManager(buses[0]!.connection);
    const names = eventsStreamNames(prefix);
    expect((await jsm.streams.info(names.stream)).state.messages).toBe(42);
    expect((await jsm.consumers.info(names.stream, 'webhooks')).ack_floor.stream_seq).toBe(42);
  });

  it('a task created through HTTP on one gateway reaches the streams of both and the webhook', async () => {
    const before = receiver.received.length;
    const res = await fetch(`${bases[0]}/api/v1/tasks`, {
      method: 'POST',
      headers: { ...alice.headers, 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'over nats', status: 'todo' }),
    });
    expect(res.status).toBe(201);
    const { id } = (await res.json()) as { id: string };
    for (const c of clients) {
      await c.until((x) => x.events.some((f) => f.event === 'task.created' && f.data.task_id === id), 5_000);
    }
    // The webhook subscribes to task.updated only: a PATCH reaches it.
    await fetch(`${bases[1]}/api/v1/tasks/${id}`, {
      method: 'PATCH',
      headers: { ...alice.headers, 'content-type': 'application/json' },
      body: JSON.stringify({ status: 'done' }),
    });
    await receiver.until(before + 1, 5_000);
    expect(receiver.received[before]!.json).toMatchObject({ type: 'task.updated', task_id: id, data: { changes: [{ field: 'status', from: 'todo', to: 'done' }] } });
  });
});
