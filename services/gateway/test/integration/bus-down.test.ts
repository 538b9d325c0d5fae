import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { boardsService } from '@app/boards';
import { queryService } from '@app/query';
import { tasksService } from '@app/tasks';
import { NatsBus, type Served } from '@app/shared/bus';
import { systemClock } from '@app/shared/domain';
import { silentLogger } from '@app/shared/log';
import { startupIndexes } from '@app/shared/runtime';
import { eventually, startNatsServer, testStore, uniquePrefix, type NatsServer, type TransactionRulesStore } from '@app/shared/testing';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/index.js';
import { bearer, login, register, testConfig } from '../app/helpers.js';

/**
 * The bus down (docs/bus.md "Connection behaviour"): once the gateway's NATS connection knows
 * the server is gone, every request answers 503 `SERVICE_UNAVAILABLE` with `Retry-After` at
 * once, instead of waiting its op's timeout (5 s for a write, 10 s for a board summary) for a 504.
 */
let nats: NatsServer;
let store: TransactionRulesStore;
const buses: NatsBus[] = [];
const served: Served[] = [];
let app: FastifyInstance;
let headers: Record<string, string>;

beforeAll(async () => {
  const log = silentLogger();
  const prefix = uniquePrefix();
  nats = await startNatsServer();
  store = await testStore();
  const connect = (name: string) => NatsBus.connect({ servers: nats.url, prefix, name, log });
  buses.push(...(await Promise.all(['gateway', 'services'].map(connect))));
  for (const def of [tasksService, boardsService, queryService]) {
    await store.ensureIndexes(startupIndexes(def));
    served.push(await buses[1]!.serve(def.bindings({ store, clock: systemClock, log }), { queue: def.name, log }));
  }
  app = await buildApp({ bus: buses[0]!, store, clock: systemClock, log, config: testConfig({ RATE_LIMIT_AUTH_MAX: '1000' }), webRoot: false });
  await register(app, 'offline');
  headers = bearer((await login(app, 'offline')).accessToken);
});

afterAll(async () => {
  await app?.close();
  for (const s of served) await s.close();
  for (const b of buses) await b.close();
  await store?.close();
  await nats?.stop();
});

describe('with the bus down', () => {
  it('answers 503 SERVICE_UNAVAILABLE with Retry-After within a second, for reads and writes alike', async () => {
    const created = await app.inject({ method: 'POST', url: '/api/v1/tasks', headers, payload: { title: 'before the outage' } });
    expect(created.statusCode).toBe(201);
    await nats.stop();
    // the readiness check sees the outage first; requests follow from the same connection state
    await eventually('readiness to fail', async () => (await app.inject({ method: 'GET', url: '/health/ready' })).statusCode, (status) => status === 503);
    const requests = [
      { method: 'POST' as const, url: '/api/v1/tasks', payload: { title: 'during the outage' } },
      { method: 'POST' as const, url: '/api/v1/tasks/query', payload: { query: '' } },
      { method: 'GET' as const, url: `/api/v1/tasks/${created.json().id}` },
    ];
    for (const r of requests) {
      const started = performance.now();
      const res = await app.inject({ ...r, headers });
      const took = performance.now() - started;
      expect(res.statusCode, `${r.method} ${r.url}: ${res.body}`).toBe(503);
      expect(res.json().code).toBe('SERVICE_UNAVAILABLE');
      expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(took).toBeLessThan(1_000);
    }
  }, 20_000);
});
