import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tasksService } from '@app/tasks';
import { NatsBus, type Served } from '@app/shared/bus';
import { systemClock } from '@app/shared/domain';
import { silentLogger } from '@app/shared/log';
import { startNatsServer, testStore, uniquePrefix, type NatsServer, type TransactionRulesStore } from '@app/shared/testing';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../../src/index.js';
import { testConfig } from '../app/helpers.js';
import { startupIndexes } from '@app/shared/runtime';

/**
 * End to end over a real nats-server: the tasks service and the gateway are separate bus
 * participants (two NATS connections, as two processes would be) sharing one store; the gateway
 * listens on a real port and is called with fetch.
 */
let nats: NatsServer;
let store: TransactionRulesStore;
let serviceBus: NatsBus;
let gatewayBus: NatsBus;
let served: Served;
let app: FastifyInstance;
let base: string;

beforeAll(async () => {
  const log = silentLogger();
  const prefix = uniquePrefix();
  nats = await startNatsServer();
  store = await testStore();
  serviceBus = await NatsBus.connect({ servers: nats.url, prefix, name: 'tasks', log });
  gatewayBus = await NatsBus.connect({ servers: nats.url, prefix, name: 'gateway', log });
  await store.ensureIndexes(startupIndexes(tasksService));
  served = await serviceBus.serve(tasksService.bindings({ store, clock: systemClock, log }), { queue: 'tasks', log });
  app = await buildApp({ bus: gatewayBus, store, clock: systemClock, log, config: testConfig() });
  await app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await app?.close();
  await served?.close();
  await gatewayBus?.close();
  await serviceBus?.close();
  await store?.close();
  await nats?.stop();
});

async function call(method: string, path: string, body?: unknown, token?: string) {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (token) headers.authorization = `Bearer ${token}`;
  const res = await fetch(base + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text === '' ? undefined : (JSON.parse(text) as Record<string, any>) };
}

describe('gateway + tasks service over NATS', () => {
  it('register → login → create → read → patch → metadata → delete', async () => {
    const reg = await call('POST', '/auth/v2/register', { username: 'erin', password: 'e2e password 1' });
    expect(reg.status).toBe(201);
    const login = await call('POST', '/auth/v2/login', { username: 'erin', password: 'e2e password 1' });
    expect(login.status).toBe(200);
    const token = login.body!.accessToken as string;
    const userId = reg.body!.userId as string;

    const created = await call('POST', '/api/v1/tasks', { title: 'Write the e2e test', status: 'todo', tags: ['qa'] }, token);
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ title: 'Write the e2e test', status: 'todo', tags: ['qa'], created_by: userId });
    const id = created.body!.id as string;

    const read = await call('GET', `/api/v1/tasks/${id}`, undefined, token);
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({ id, title: 'Write the e2e test' });

    const legacy = await call('GET', `/api/v1/todolist/${id}`, undefined, token);
    expect(legacy.status).toBe(200);
    expect(legacy.body).toEqual(read.body);
    expect(legacy.headers.get('deprecation')).toBe('true');
    expect(legacy.headers.get('link')).toBe(`</api/v1/tasks/${id}>; rel="successor-version"`);

    const patched = await call('PATCH', `/api/v1/tasks/${id}`, { status: 'doing' }, token);
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ id, status: 'doing', updated_by: userId });

    const meta = await call('PATCH', `/api/v1/tasks/${id}/metadata`, { key: 'cf.priority', value: 2 }, token);
    expect(meta.status).toBe(200);
    expect(meta.body!.metadata).toMatchObject({ 'cf.priority': 2 });

    const unset = await call('DELETE', `/api/v1/tasks/${id}/metadata/cf.priority`, undefined, token);
    expect(unset.status).toBe(200);
    expect(unset.body!.metadata).not.toHaveProperty('cf.priority');

    const deleted = await call('DELETE', `/api/v1/tasks/${id}`, undefined, token);
    expect(deleted.status).toBe(204);
    expect(deleted.body).toBeUndefined();

    const gone = await call('GET', `/api/v1/tasks/${id}`, undefined, token);
    expect(gone.status).toBe(404);
    expect(gone.body).toMatchObject({ code: 'TASK_NOT_FOUND', traceId: expect.any(String) });
  });

  it('carries the caller request id to the error body and answers 401 without a token', async () => {
    const res = await fetch(`${base}/api/v1/tasks/any`, { headers: { 'x-request-id': 'e2e-trace-1' } });
    expect(res.status).toBe(401);
    expect(res.headers.get('x-request-id')).toBe('e2e-trace-1');
    expect(await res.json()).toMatchObject({ code: 'UNAUTHORIZED', traceId: 'e2e-trace-1' });
  });

  it('answers 503 SERVICE_UNAVAILABLE for an op no service serves (no responders)', async () => {
    await call('POST', '/auth/v2/register', { username: 'frank', password: 'e2e password 2' });
    const token = (await call('POST', '/auth/v2/login', { username: 'frank', password: 'e2e password 2' })).body!.accessToken as string;
    const res = await call('GET', '/api/v1/boards', undefined, token);
    expect(res.status).toBe(503);
    expect(res.body!.code).toBe('SERVICE_UNAVAILABLE');
  });

  it('is ready while NATS and the store answer', async () => {
    const res = await call('GET', '/health/ready');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ready', checks: { bus: 'ok', store: 'ok' } });
  });
});
