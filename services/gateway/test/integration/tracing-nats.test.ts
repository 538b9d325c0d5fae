import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventWork, queryService } from '@app/query';
import { tasksService } from '@app/tasks';
import { NatsBus, type Served } from '@app/shared/bus';
import { CommonConfig, loadConfig } from '@app/shared/config';
import { systemClock } from '@app/shared/domain';
import { createLogger, silentLogger } from '@app/shared/log';
import { instrumentBus, instrumentStore, startTracing, type Tracing } from '@app/shared/observability';
import { serveServices } from '@app/shared/runtime';
import { eventually, startNatsServer, testStore, uniquePrefix, type NatsServer, type TransactionRulesStore } from '@app/shared/testing';
import { buildApp } from '../../src/index.js';
import { login, register, testConfig } from '../app/helpers.js';
import { Receiver } from '../app/webhook-receiver.js';

/**
 * One trace from the gateway through NATS to the store: the gateway, the tasks service and the
 * query service (with its background work: relay, JetStream publisher, webhook dispatcher) on
 * their own NATS connections to a private nats-server with JetStream (as separate processes would
 * be), each with the instrumented bus and store and the tracer `main.ts` uses, spans collected by
 * the SDK's in-memory exporter, the tasks service's log lines captured, webhooks received on 127.0.0.1.
 */
let nats: NatsServer;
let tracing: Tracing;
const exporter = new InMemorySpanExporter();
const serviceLog: Array<Record<string, unknown>> = [];
let app: FastifyInstance;
let store: TransactionRulesStore;
let receiver: Receiver;
const buses: NatsBus[] = [];
const served: Served[] = [];

beforeAll(async () => {
  nats = await startNatsServer({ jetstream: true });
  receiver = await Receiver.start();
  tracing = await startTracing({ serviceName: 'test', exporter });
  const tools = { tracer: tracing.tracer };
  const prefix = uniquePrefix();
  store = await testStore();
  const traced = instrumentStore(store, tools);
  const lines = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split('\n')) if (line) serviceLog.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const serviceBus = await NatsBus.connect({ servers: nats.url, prefix, name: 'tasks', log: silentLogger() });
  const queryBus = await NatsBus.connect({ servers: nats.url, prefix, name: 'query', log: silentLogger() });
  const gatewayBus = await NatsBus.connect({ servers: nats.url, prefix, name: 'gateway', log: silentLogger() });
  buses.push(serviceBus, queryBus, gatewayBus);
  served.push(
    ...(await serveServices([tasksService], {
      bus: instrumentBus(serviceBus, tools), store: traced, log: createLogger({ name: 'tasks', level: 'debug', destination: lines }),
      config: loadConfig(CommonConfig, { WEBHOOK_ALLOW_PRIVATE: 'true' }), tracer: tracing.tracer,
    })),
    ...(await serveServices([{ ...queryService, background: eventWork({ tickMs: 20 }) }], {
      bus: instrumentBus(queryBus, tools), store: traced, log: silentLogger(), config: loadConfig(CommonConfig, { WEBHOOK_ALLOW_PRIVATE: 'true' }), background: true, tracer: tracing.tracer,
    })),
  );
  app = await buildApp({
    bus: instrumentBus(gatewayBus, tools), store: traced, clock: systemClock, log: silentLogger(),
    config: testConfig({ RATE_LIMIT_AUTH_MAX: '1000' }), tracer: tracing.tracer, webRoot: false,
  });
});

afterAll(async () => {
  await app?.close();
  for (const s of served) await s.close();
  for (const b of buses) await b.close();
  await receiver?.close();
  await store?.close();
  await tracing?.shutdown();
  await nats?.stop();
});

const byTrace = (traceId: string) => exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === traceId);
const parentOf = (s: ReadableSpan) => s.parentSpanContext?.spanId;

describe('a trace across the gateway, NATS and the store', () => {
  it('continues the caller’s traceparent through the gateway, the bus and the service to the store, and the service logs its trace id', async () => {
    await register(app, 'ada');
    const { accessToken } = await login(app, 'ada');
    const created = await app.inject({ method: 'POST', url: '/api/v1/tasks', headers: { authorization: `Bearer ${accessToken}` }, payload: { title: 'Trace me' } });
    expect(created.statusCode).toBe(201);
    exporter.reset();
    serviceLog.length = 0;

    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const res = await app.inject({
      method: 'GET', url: `/api/v1/tasks/${created.json<{ id: string }>().id}`,
      headers: { authorization: `Bearer ${accessToken}`, traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
    });
    expect(res.statusCode).toBe(200);

    const spans = byTrace(traceId);
    const names = spans.map((s) => s.name);
    const client = spans.find((s) => s.name === 'bus tasks.get');
    const server = spans.find((s) => s.name === 'bus tasks.get process');
    // (the detail read: the task and its subtasks in one find)
    const read = spans.find((s) => s.name === 'store find tasks');
    expect(client, names.join(', ')).toBeDefined();
    expect(server, names.join(', ')).toBeDefined();
    expect(read, names.join(', ')).toBeDefined();
    // the HTTP request's span (@fastify/otel) continues the caller's span; its handler span is the bus call's parent
    const request = spans.find((s) => s.name === 'request' && s.instrumentationScope.name === '@fastify/otel');
    const handler = spans.find((s) => s.spanContext().spanId === parentOf(client!));
    expect(request, names.join(', ')).toBeDefined();
    expect(parentOf(request!)).toBe('00f067aa0ba902b7');
    expect(parentOf(handler!)).toBe(request!.spanContext().spanId);
    // the service's span continues the bus client span (carried in the NATS headers), the store read is its child
    expect(parentOf(server!)).toBe(client!.spanContext().spanId);
    expect(parentOf(read!)).toBe(server!.spanContext().spanId);
    // every span of the request has the caller's trace id; none of the request's spans started another trace
    expect(exporter.getFinishedSpans().filter((s) => s.name.startsWith('bus tasks.get')).every((s) => s.spanContext().traceId === traceId)).toBe(true);

    const line = serviceLog.find((l) => l.subject === 'tasks.get' && l.msg === 'request handled');
    expect(line, JSON.stringify(serviceLog)).toBeDefined();
    expect(line!.trace_id).toBe(traceId);
  });

  it('starts a new trace for a request without traceparent, one trace id from gateway to store', async () => {
    exporter.reset();
    const res = await app.inject({ method: 'GET', url: '/api/v1/tasks/none-such', headers: { authorization: 'Bearer x' } });
    expect(res.statusCode).toBe(401);
    const { accessToken } = await login(app, 'ada');
    exporter.reset();
    const list = await app.inject({ method: 'POST', url: '/api/v1/tasks', headers: { authorization: `Bearer ${accessToken}` }, payload: { title: 'Another' } });
    expect(list.statusCode).toBe(201);
    const server = exporter.getFinishedSpans().find((s) => s.name === 'bus tasks.create process');
    expect(server).toBeDefined();
    const traceId = server!.spanContext().traceId;
    const trace = byTrace(traceId).map((s) => s.name);
    expect(trace).toContain('bus tasks.create');
    expect(trace).toContain('store transaction');
    expect(trace.some((n) => n.startsWith('store insertOne tasks') || n.startsWith('store ') && n.endsWith(' tasks'))).toBe(true);
  });
});

describe('background spans linked to the write', () => {
  /** The first finished span named `name` linked to trace `traceId`, once there is one. */
  async function linkedSpan(name: string, traceId: string): Promise<ReadableSpan> {
    const found = await eventually(`a ${name} span linked to ${traceId}`, () =>
      exporter.getFinishedSpans().find((s) => s.name === name && s.links.some((l) => l.context.traceId === traceId)),
    );
    return found!;
  }

  it('one PATCH over NATS yields relay, JetStream publish and webhook delivery spans, each a root of its own, linked to the request’s trace', async () => {
    const { accessToken } = await login(app, 'ada');
    const auth = { authorization: `Bearer ${accessToken}` };
    const hook = await app.inject({ method: 'POST', url: '/api/v1/webhooks', headers: auth, payload: { url: receiver.url, events: ['task.updated'] } });
    expect(hook.statusCode, hook.body).toBe(201);
    const created = await app.inject({ method: 'POST', url: '/api/v1/tasks', headers: auth, payload: { title: 'Link me', status: 'todo' } });
    expect(created.statusCode).toBe(201);
    exporter.reset();

    const traceId = '0af7651916cd43dd8448eb211c80319c';
    const res = await app.inject({
      method: 'PATCH', url: `/api/v1/tasks/${created.json<{ id: string }>().id}`, payload: { status: 'done' },
      headers: { ...auth, traceparent: `00-${traceId}-b7ad6b7169203331-01` },
    });
    expect(res.statusCode).toBe(200);
    await receiver.until(1, 10_000);

    const write = byTrace(traceId).find((s) => s.name === 'store transaction');
    expect(write, byTrace(traceId).map((s) => s.name).join(', ')).toBeDefined();
    for (const name of ['events.relay', 'events.publish', 'webhook deliver']) {
      const span = await linkedSpan(name, traceId);
      // linked to the write's span (a relay pass or a published batch may carry earlier writes too),
      // in a trace of its own (a background job, not the request's child)
      expect(span.links.find((l) => l.context.traceId === traceId)!.context.spanId, name).toBe(write!.spanContext().spanId);
      expect(span.parentSpanContext, name).toBeUndefined();
      expect(span.spanContext().traceId, name).not.toBe(traceId);
    }
    const delivery = await linkedSpan('webhook deliver', traceId);
    expect(delivery.links.map((l) => l.context.traceId)).toEqual([traceId]);
    expect(delivery.attributes).toMatchObject({ 'webhook.attempt': 1, 'webhook.outcome': 'delivered', 'http.response.status_code': 200, 'http.response.status_class': '2xx' });
    // the webhook body is the public envelope: the trace context travelled beside it (a JetStream header)
    expect(Object.keys(receiver.received[0]!.json)).not.toContain('traceparent');
  });
});
