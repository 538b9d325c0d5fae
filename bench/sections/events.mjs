// Section `events`: commit-to-SSE latency with 100 connected streams (the embedded
// default's outbox poller, which runs a relay pass before each read, at 50, 20 (the default) and
// 10 ms; the distributed numbering relay → JetStream →
// gateway path over a private nats-server), and a feed page of 100 events vs a
// task detail read, on the all-in-one gateway (MemoryBus + EmbeddedStore) listening on 127.0.0.1.
import { randomUUID } from 'node:crypto';
import { request } from 'node:http';
import { boardsService } from '@app/boards';
import { buildApp, GatewayConfig } from '@app/gateway';
import { queryService } from '@app/query';
import { sprintsService } from '@app/sprints';
import { tasksService } from '@app/tasks';
import { MemoryBus, NatsBus } from '@app/shared/bus';
import { loadConfig } from '@app/shared/config';
import { appendEvents, systemClock } from '@app/shared/domain';
import { JetStreamHub, OutboxPoller, relayOutbox } from '@app/shared/events';
import { silentLogger } from '@app/shared/log';
import { serveServices } from '@app/shared/runtime';
import { Collections, EmbeddedStore } from '@app/shared/store';
import { startNatsServer } from '@app/shared/testing';
import { accessToken, ensureBenchUsers, JWT_SECRET, measure, pct, row, TABLE_HEAD, target } from '../lib.mjs';
import { insertChunks, rng, taskDoc } from '../seed.mjs';

const STREAMS = 100;
const COMMITS = 100;
const GAP_MS = 30;

/** Opens one SSE stream; calls `onEvent(eventId, atMs)` for each event frame. Resolves when connected. */
function openStream(base, token, onEvent) {
  return new Promise((resolve, reject) => {
    const req = request(`${base}/api/v1/events/stream`, { headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' } });
    req.on('response', (res) => {
      if (res.statusCode !== 200) return reject(new Error(`stream: ${res.statusCode}`));
      let buf = '';
      res.setEncoding('utf8');
      res.on('data', (chunk) => {
        buf += chunk;
        let i;
        while ((i = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          if (block.startsWith(': connected')) resolve(req);
          // the envelope starts with its event id: `data: {"id":"…"`
          const id = /^data: \{"id":"([^"]+)"/m.exec(block);
          if (id) onEvent(id[1], performance.now());
        }
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * Commits one event about `taskId` as a write's transaction would (into the outbox, unnumbered:
 * the relay numbers it after the commit); returns {id, at} after the commit.
 */
async function commit(store, owner, taskId) {
  const [doc] = await store.withTransaction((session) =>
    appendEvents(store, session, [{ type: 'task.updated', task_id: taskId, data: { changes: [] } }], { actor: owner, request_id: randomUUID(), occurred_at: new Date().toISOString() }),
  );
  return { id: doc._id, at: performance.now() };
}

/** Commit-to-SSE latency (ms) of {@link COMMITS} commits, {@link GAP_MS} apart, over every stream. */
async function latency(store, base, token, owner, taskId) {
  const sent = new Map();
  // frames are matched to their commits afterwards: with durable acknowledgements (EMBEDDED_SYNC=full)
  // a frame can arrive before its commit resolves (docs/store.md), and then counts as 0 ms
  const arrived = [];
  const streams = [];
  for (let i = 0; i < STREAMS; i++) streams.push(await openStream(base, token, (seq, at) => arrived.push([seq, at])));
  for (let i = 0; i < COMMITS; i++) {
    const { id, at } = await commit(store, owner, taskId);
    sent.set(id, at);
    await new Promise((r) => setTimeout(r, GAP_MS));
  }
  const deadline = Date.now() + 5_000;
  while (arrived.length < STREAMS * COMMITS && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  for (const s of streams) s.destroy();
  return arrived.filter(([id]) => sent.has(id)).map(([id, at]) => Math.max(0, at - sent.get(id)));
}

export async function eventsSection(scope) {
  const log = silentLogger();
  const store = await EmbeddedStore.open({ dir: scope.tempDir('bench-events-'), log });
  scope.add(() => store.close());
  const bus = new MemoryBus();
  scope.add(() => bus.close());
  // without background work: the poller below numbers the outbox itself (a relay pass before each
  // read, as buildApp's default does), and the distributed leg's query replica is the only running relay
  const served = await serveServices([tasksService, boardsService, sprintsService, queryService], { bus, store, log });
  scope.add(async () => {
    for (const s of served) await s.close();
  });
  // one bench user is the whole load: its admission bounds and cost budget are lifted (docs/http.md "Fair use")
  const config = loadConfig(GatewayConfig, {
    JWT_SECRET, LOG_LEVEL: 'silent', EVENT_STREAMS_PER_USER: String(STREAMS),
    ADMISSION_IN_FLIGHT: '10000', ADMISSION_QUEUE: '100000', ADMISSION_EXPENSIVE_IN_FLIGHT: '10000', COST_BUDGET_MS: '3600000', COST_REFILL_MS_PER_SECOND: '1000000',
  });

  const r = rng(10);
  const owner = randomUUID();
  await ensureBenchUsers(store, [owner]);
  const token = accessToken(owner);
  const task = taskDoc(r, owner, { deleted: false });
  await insertChunks(store, Collections.tasks, [task, ...Array.from({ length: 5_000 }, () => taskDoc(r, randomUUID()))]);

  const rows = [];
  const results = {};
  for (const intervalMs of [50, 20, 10]) {
    // as buildApp's default poller: a relay pass before each read (one hop from commit to stream)
    const hub = new OutboxPoller(store, { intervalMs, log, relay: () => relayOutbox(store) });
    const app = await buildApp({ bus, store, clock: systemClock, log, config, events: hub });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const base = `http://127.0.0.1:${app.server.address().port}`;
    const lat = await latency(store, base, token, owner, task._id);
    await app.close();
    await hub.close();
    results[intervalMs] = { p50: pct(lat, 50), p99: pct(lat, 99), n: lat.length };
    rows.push(`| outbox poller every ${intervalMs} ms | ${STREAMS} | ${COMMITS} | ${lat.length} of ${STREAMS * COMMITS} | ${pct(lat, 50).toFixed(1)} | ${pct(lat, 99).toFixed(1)} |`);
  }

  // Distributed path: the query service's relay (outbox → JetStream) and a gateway following the
  // stream with an ordered consumer, over a private nats-server with JetStream (same store).
  {
    const nats = await startNatsServer({ jetstream: true });
    scope.add(() => nats.stop());
    const prefix = `bench${Date.now()}`;
    const qbus = await NatsBus.connect({ servers: nats.url, prefix, name: 'bench-query', log });
    scope.add(() => qbus.close());
    const q = await serveServices([queryService], { bus: qbus, store, log, background: true });
    scope.add(async () => {
      for (const s of q) await s.close();
    });
    const gbus = await NatsBus.connect({ servers: nats.url, prefix, name: 'bench-gateway', log });
    scope.add(() => gbus.close());
    const hub = await JetStreamHub.start({ store, nc: gbus.connection, prefix, log });
    const app = await buildApp({ bus: gbus, store, clock: systemClock, log, config, events: hub });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const lat = await latency(store, `http://127.0.0.1:${app.server.address().port}`, token, owner, task._id);
    await app.close();
    await hub.close();
    results.jetstream = { p50: pct(lat, 50), p99: pct(lat, 99), n: lat.length };
    rows.push(`| relay (outbox poll every 20 ms, numbering) → JetStream → gateway ordered consumer | ${STREAMS} | ${COMMITS} | ${lat.length} of ${STREAMS * COMMITS} | ${pct(lat, 50).toFixed(1)} | ${pct(lat, 99).toFixed(1)} |`);
  }

  // Feed page vs task detail: 1,000 more events about the caller's task, pages of 100.
  for (let i = 0; i < 10; i++) {
    await store.withTransaction((session) =>
      appendEvents(store, session, Array.from({ length: 100 }, () => ({ type: 'task.updated', task_id: task._id, data: { changes: [{ field: 'status', from: 'todo', to: 'doing' }] } })), {
        actor: owner, request_id: randomUUID(), occurred_at: new Date().toISOString(),
      }),
    );
  }
  const app = await buildApp({ bus, store, clock: systemClock, log, config });
  await app.listen({ port: 0, host: '127.0.0.1' });
  scope.add(() => app.close());
  const base = `http://127.0.0.1:${app.server.address().port}`;
  const headers = { authorization: `Bearer ${token}` };
  const m = await measure(
    {
      detail: { url: `${base}/api/v1/tasks/${task._id}`, headers },
      feed: { url: `${base}/api/v1/events?after=${COMMITS * 4 + 100}&limit=100`, headers },
    },
    { interleave: false },
  );
  const ratio = m.feed.rps / m.detail.rps;
  return [
    `All-in-one gateway in this process (MemoryBus + EmbeddedStore file in a temp dir, 5,000 tasks), 127.0.0.1. ` +
      `Latency: ${STREAMS} SSE streams of one user open, ${COMMITS} single-event commits ${GAP_MS} ms apart (a write's transaction appending its event); ` +
      'latency = the frame parsed by each stream minus the commit resolving, over every (commit, stream) pair; clients and server share the process and its CPU.',
    '',
    '| live source | streams | commits | frames | p50 ms | p99 ms |',
    '| --- | ---: | ---: | ---: | ---: | ---: |',
    ...rows,
    '',
    'Feed page (`GET /api/v1/events?limit=100`, 100 visible events) vs task detail (`GET /api/v1/tasks/:id`), autocannon, 10 connections, median of 3 runs; ratio = req/s ÷ detail.',
    '',
    TABLE_HEAD,
    row('task detail', m.detail, m.detail),
    row('feed page of 100 events', m.feed, m.detail),
    '',
    target(results[20].p99 < 1_000 && results[20].n === STREAMS * COMMITS, 'every event on every stream, live within 1 s of the commit (p99, default 20 ms poller)', `p99 ${results[20].p99.toFixed(1)} ms, ${results[20].n} frames`),
    target(results.jetstream.p99 < 1_000 && results.jetstream.n === STREAMS * COMMITS, 'distributed path: every event on every stream within 1 s (p99)', `p99 ${results.jetstream.p99.toFixed(1)} ms, ${results.jetstream.n} frames`),
    `- feed page of 100 ÷ task detail: ${ratio.toFixed(2)}× the req/s`,
  ];
}
