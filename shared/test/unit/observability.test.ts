import { readFileSync } from 'node:fs';
import { Histogram, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { MemoryBus, bind } from '@app/shared/bus';
import { TasksOps } from '@app/shared/contracts';
import { AppError } from '@app/shared/errors';
import { silentLogger } from '@app/shared/log';
import { FastHistogram, instrumentBus, instrumentStore, Metrics, traceIdOf, tracesUrl } from '@app/shared/observability';
import { EmbeddedStore, type DocumentStore, type Session } from '@app/shared/store';

const repo = new URL('../../../', import.meta.url);

/** The value of one series of the exposition text (a `_count` for histograms), 0 when absent. */
async function sample(m: Metrics, name: string, labels: Record<string, string> = {}): Promise<number> {
  const json = await m.registry.getMetricsAsJSON();
  const family = json.find((f) => f.name === name.replace(/_count$/, ''));
  const values = (family?.values ?? []) as Array<{ value: number; labels: Record<string, unknown>; metricName?: string }>;
  const wanted = values.filter(
    (v) => (name.endsWith('_count') ? v.metricName === name : true) && Object.entries(labels).every(([k, x]) => String(v.labels[k]) === x),
  );
  return wanted.reduce((n, v) => n + v.value, 0);
}

describe('the fast histogram', () => {
  it('exposes exactly what prom-client\'s Histogram exposes for the same observations', async () => {
    const ours = new Registry();
    const theirs = new Registry();
    const buckets = [0.001, 0.01, 0.1, 1];
    const fast = new FastHistogram('t_seconds', 'help text', ['a', 'b'], buckets, ours);
    const reference = new Histogram({ name: 't_seconds', help: 'help text', labelNames: ['a', 'b'], buckets, registers: [theirs] });
    const observations: Array<[string, string, number]> = [['x', 'y', 0.0005], ['x', 'y', 0.01], ['x', 'z "q"', 0.5], ['x', 'y', 3], ['w', 'y', 0.1]];
    for (const [a, b, v] of observations) {
      fast.labels(a, b).observe(v);
      reference.labels(a, b).observe(v);
    }
    expect(await ours.metrics()).toBe(await theirs.metrics());
  });
});

describe('the instrumented store', () => {
  it('times every call by collection, operation and outcome, and counts retried transaction attempts', async () => {
    const metrics = new Metrics({ defaultMetrics: false });
    const inner = EmbeddedStore.memory();
    // a backend whose first transaction attempt fails with a transient conflict, as MongoDB's may
    let first = true;
    const flaky: DocumentStore = Object.create(inner) as DocumentStore;
    flaky.withTransaction = async <R>(fn: (s: Session) => Promise<R>): Promise<R> => {
      if (first) {
        first = false;
        // the first attempt runs and is rolled back, then the backend runs it again
        await inner.withTransaction(async (s) => {
          await fn(s);
          throw new Error('transient');
        }).catch(() => undefined);
      }
      return inner.withTransaction(fn);
    };
    const store = instrumentStore(flaky, { metrics });
    const tasks = store.collection('tasks');
    await tasks.insertOne({ _id: 'a', title: 'one' });
    await expect(tasks.insertOne({ _id: 'a', title: 'again' })).rejects.toMatchObject({ code: 'CONFLICT' });
    await tasks.findOne({ _id: 'a' });
    await store.withTransaction(async (session) => tasks.updateOne({ _id: 'a' }, { $set: { title: 'two' } }, { session }));
    expect(await sample(metrics, 'store_operation_duration_seconds_count', { collection: 'tasks', op: 'insertOne', outcome: 'ok' })).toBe(1);
    expect(await sample(metrics, 'store_operation_duration_seconds_count', { collection: 'tasks', op: 'insertOne', outcome: 'conflict' })).toBe(1);
    expect(await sample(metrics, 'store_operation_duration_seconds_count', { collection: 'tasks', op: 'findOne', outcome: 'ok' })).toBe(1);
    expect(await sample(metrics, 'store_transaction_duration_seconds_count', { outcome: 'ok' })).toBe(1);
    expect(await sample(metrics, 'store_transaction_retries_total')).toBe(1);
    expect((await tasks.findOne({ _id: 'a' }))?.title).toBe('two');
    await store.close();
  });

  it('counts the last attempt of a transaction that gives up with CONFLICT as a write conflict', async () => {
    const metrics = new Metrics({ defaultMetrics: false });
    const inner = EmbeddedStore.memory();
    // a backend whose transaction keeps conflicting at its commit, then gives up (as the driver's does past its deadline)
    const conflicting: DocumentStore = Object.create(inner) as DocumentStore;
    conflicting.withTransaction = async <R>(fn: (s: Session) => Promise<R>): Promise<R> => {
      await inner.withTransaction(async (s) => {
        await fn(s);
        throw new Error('rolled back');
      }).catch(() => undefined);
      throw new AppError('CONFLICT', { message: 'The transaction kept conflicting' });
    };
    const store = instrumentStore(conflicting, { metrics });
    await expect(store.withTransaction(async (session) => store.collection('tasks').insertOne({ _id: 'a' }, { session }))).rejects.toMatchObject({ code: 'CONFLICT' });
    expect(await sample(metrics, 'store_transaction_duration_seconds_count', { outcome: 'conflict' })).toBe(1);
    expect(await sample(metrics, 'store_write_conflicts_total')).toBe(1);
    await store.close();
  });

  it('is the store itself when neither metrics nor a tracer is given', () => {
    const store = EmbeddedStore.memory();
    expect(instrumentStore(store, {})).toBe(store);
  });
});

describe('the instrumented bus', () => {
  it('labels outcomes with the error reply’s code, timeouts and missing responders', async () => {
    const metrics = new Metrics({ defaultMetrics: false });
    const bus = instrumentBus(new MemoryBus(), { metrics });
    await bus.serve([bind(TasksOps.get, async () => { throw new AppError('TASK_NOT_FOUND'); })], { queue: 'tasks', log: silentLogger() });
    await expect(bus.request(TasksOps.get, { taskId: 'x' })).rejects.toMatchObject({ code: 'TASK_NOT_FOUND' });
    await expect(bus.request(TasksOps.create, { title: 'x' } as never)).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    expect(await sample(metrics, 'bus_request_duration_seconds_count', { side: 'client', subject: 'tasks.get', outcome: 'task_not_found' })).toBe(1);
    expect(await sample(metrics, 'bus_request_duration_seconds_count', { side: 'server', subject: 'tasks.get', outcome: 'task_not_found' })).toBe(1);
    expect(await sample(metrics, 'bus_request_duration_seconds_count', { side: 'client', subject: 'tasks.create', outcome: 'no_responders' })).toBe(1);
    await bus.close();
  });

  it('labels a 503 of a closed bus service_unavailable, not no_responders', async () => {
    const metrics = new Metrics({ defaultMetrics: false });
    const bus = instrumentBus(new MemoryBus(), { metrics });
    await bus.serve([bind(TasksOps.get, async () => { throw new AppError('TASK_NOT_FOUND'); })], { queue: 'tasks', log: silentLogger() });
    await bus.close();
    await expect(bus.request(TasksOps.get, { taskId: 'x' })).rejects.toMatchObject({ code: 'SERVICE_UNAVAILABLE' });
    expect(await sample(metrics, 'bus_request_duration_seconds_count', { side: 'client', subject: 'tasks.get', outcome: 'service_unavailable' })).toBe(1);
    expect(await sample(metrics, 'bus_request_duration_seconds_count', { side: 'client', subject: 'tasks.get', outcome: 'no_responders' })).toBe(0);
  });
});

describe('trace context helpers', () => {
  it('reads the trace id of a W3C traceparent and refuses other text', () => {
    expect(traceIdOf('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01')).toBe('4bf92f3577b34da6a3ce929d0e0e4736');
    expect(traceIdOf('00-00000000000000000000000000000000-00f067aa0ba902b7-01')).toBeUndefined();
    expect(traceIdOf('not a traceparent')).toBeUndefined();
    expect(traceIdOf(undefined)).toBeUndefined();
  });

  it('sends traces to /v1/traces of an OTLP base URL, or to the path given', () => {
    expect(tracesUrl('http://collector:4318')).toBe('http://collector:4318/v1/traces');
    expect(tracesUrl('http://collector:4318/custom/traces')).toBe('http://collector:4318/custom/traces');
  });
});

describe('the observability profile of docker-compose', () => {
  it('the dashboard queries only metrics the service exports, and Prometheus scrapes the services’ METRICS_PORT', async () => {
    const metrics = new Metrics();
    const exported = new Set((await metrics.registry.getMetricsAsJSON()).map((f) => f.name));
    const dashboard = JSON.parse(readFileSync(new URL('observability/grafana/dashboards/board-task-service.json', repo), 'utf8')) as {
      panels: Array<{ targets: Array<{ expr: string }> }>;
    };
    const used = new Set<string>();
    for (const p of dashboard.panels) for (const t of p.targets) for (const m of t.expr.matchAll(/\b([a-z_]+?)(?:_bucket|_count|_sum)?\{|\b([a-z_]+?)(?:_bucket|_count|_sum)?\[/g)) used.add((m[1] ?? m[2])!);
    expect(used.size).toBeGreaterThan(5);
    for (const name of used) expect(exported, `dashboard uses ${name}`).toContain(name);
    const compose = readFileSync(new URL('docker-compose.yml', repo), 'utf8');
    const prometheus = readFileSync(new URL('observability/prometheus.yml', repo), 'utf8');
    for (const svc of ['gateway', 'tasks', 'boards', 'sprints', 'query']) expect(compose).toContain(`environment: { SERVICE: ${svc}, METRICS_PORT: 9464 }`);
    expect(prometheus).toContain('port: 9464');
  });
});
