import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { describe, expect, it } from 'vitest';
import { Metrics, serveMetrics } from '@app/shared/observability';
import { system } from './system.js';

interface Sample {
  labels?: Record<string, string>;
  value?: string;
}
interface Family {
  name: string;
  type: string;
  metrics: Sample[];
}

/** A scrape: the metric families as the Prometheus text parser reads them, and the exposition text. */
interface Scrape {
  families: Map<string, Family>;
  text: string;
}

/** Scrapes `/metrics` as Prometheus would; the Prometheus text parser must accept it. */
async function scrape(s: Awaited<ReturnType<typeof system>>): Promise<Scrape> {
  const res = await s.app.inject({ method: 'GET', url: '/metrics' });
  expect(res.statusCode).toBe(200);
  expect(res.headers['content-type']).toMatch(/^text\/plain/);
  const families = parsePrometheusTextFormat(res.body) as Family[];
  return { families: new Map(families.map((f) => [f.name, f])), text: res.body };
}

/**
 * The observation count of the series of histogram `family` whose labels include `labels`, summed
 * (0 when absent), read from its `_count` samples (the parser folds a histogram's label sets into
 * one, so the counts are read from the exposition lines it accepted).
 */
function countOf(s: Scrape, family: string, labels: Record<string, string>): number {
  let n = 0;
  for (const line of s.text.split('\n')) {
    const m = /^(\w+)_count\{(.*)\} (\S+)$/.exec(line);
    if (!m || m[1] !== family) continue;
    const set = Object.fromEntries([...m[2]!.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(labels).every(([k, v]) => set[k] === v)) n += Number(m[3]);
  }
  return n;
}

describe('GET /metrics (Prometheus text format)', () => {
  it('counts HTTP requests by route template, bus requests on both sides and store calls by collection', async () => {
    await using s = await system({ metrics: new Metrics() });
    const ada = await s.user('ada');
    const created = await s.call('POST', '/api/v1/tasks', ada, { title: 'Measure me' });
    expect(created.status).toBe(201);
    for (let i = 0; i < 3; i++) expect((await s.call('GET', `/api/v1/tasks/${created.body.id}`, ada)).status).toBe(200);
    expect((await s.call('GET', '/api/v1/tasks/no-such-task', ada)).status).toBe(404);
    expect((await s.call('GET', '/api/v1/no-such-route', ada)).status).toBe(404);

    const m = await scrape(s);
    expect(m.families.get('http_request_duration_seconds')?.type).toBe('HISTOGRAM');
    // the route template, never the id
    expect(countOf(m, 'http_request_duration_seconds', { route: '/api/v1/tasks/:taskId', method: 'GET', status_class: '2xx' })).toBe(3);
    expect(countOf(m, 'http_request_duration_seconds', { route: '/api/v1/tasks/:taskId', method: 'GET', status_class: '4xx' })).toBe(1);
    expect(countOf(m, 'http_request_duration_seconds', { route: '/api/v1/tasks', method: 'POST', status_class: '2xx' })).toBe(1);
    // a path no route serves, by one label for all of them
    expect(countOf(m, 'http_request_duration_seconds', { route: 'unmatched', method: 'GET', status_class: '4xx' })).toBe(1);
    expect(m.text).not.toContain(created.body.id);

    expect(countOf(m, 'bus_request_duration_seconds', { side: 'client', subject: 'tasks.get', outcome: 'ok' })).toBe(3);
    expect(countOf(m, 'bus_request_duration_seconds', { side: 'server', subject: 'tasks.get', outcome: 'ok' })).toBe(3);
    expect(countOf(m, 'bus_request_duration_seconds', { side: 'client', subject: 'tasks.get', outcome: 'task_not_found' })).toBe(1);
    expect(countOf(m, 'store_operation_duration_seconds', { collection: 'tasks' })).toBeGreaterThanOrEqual(4);
    expect(countOf(m, 'store_transaction_duration_seconds', { outcome: 'ok' })).toBeGreaterThanOrEqual(1);
    // the process's default metrics are there too
    expect(m.families.has('process_cpu_seconds_total')).toBe(true);
    expect(m.families.has('nodejs_eventloop_lag_seconds')).toBe(true);
  });

  it('reports open event streams, the webhook backlog gauge and close-sprint durations', async () => {
    await using s = await system({ metrics: new Metrics(), webhooks: { tickMs: 50 } });
    const ada = await s.user('ada');
    const sprint = await s.call('POST', '/api/v1/tasks', ada, { title: 'Sprint 1', metadata: { 'app.type': 'sprint' } });
    expect(sprint.status).toBe(201);
    expect((await s.call('POST', `/api/v1/tasks/${sprint.body.id}/close-sprint`, ada, {})).status).toBe(200);
    const m = await scrape(s);
    expect(countOf(m, 'sprint_close_duration_seconds', { outcome: 'ok' })).toBe(1);
    expect(m.families.get('events_sse_streams_open')?.metrics[0]?.value).toBe('0');
    expect(m.families.get('webhook_oldest_pending_age_seconds')?.metrics[0]?.value).toBe('0');
  });

  it('in production is not on the public port: 404 without METRICS_TOKEN, 401 without its bearer token, 200 with it', async () => {
    await using prod = await system({ metrics: new Metrics(), env: { NODE_ENV: 'production', JWT_SECRET: 'x'.repeat(32) } });
    const hidden = await prod.app.inject({ method: 'GET', url: '/metrics' });
    expect(hidden.statusCode).toBe(404);
    expect(hidden.body).not.toMatch(/http_request_duration_seconds/);

    const token = 'metrics-token-0123456789';
    await using guarded = await system({ metrics: new Metrics(), env: { NODE_ENV: 'production', JWT_SECRET: 'x'.repeat(32), METRICS_TOKEN: token } });
    for (const authorization of [undefined, 'Bearer wrong-token-0123456789', token]) {
      const res = await guarded.app.inject({ method: 'GET', url: '/metrics', headers: authorization === undefined ? {} : { authorization } });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toMatchObject({ code: 'UNAUTHORIZED' });
    }
    const ok = await guarded.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${token}` } });
    expect(ok.statusCode).toBe(200);
    expect(ok.body).toMatch(/http_request_duration_seconds/);
  });

  it('on METRICS_PORT asks for the METRICS_TOKEN bearer token when one is set', async () => {
    const token = 'metrics-token-0123456789';
    const server = await serveMetrics(new Metrics(), { port: 0, host: '127.0.0.1', token });
    try {
      const url = `http://127.0.0.1:${server.port}/metrics`;
      expect((await fetch(url)).status).toBe(401);
      const ok = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
      expect(ok.status).toBe(200);
      expect(await ok.text()).toMatch(/process_cpu/);
    } finally {
      await server.close();
    }
  });

  it('answers 404 when metrics are off', async () => {
    await using s = await system();
    const res = await s.app.inject({ method: 'GET', url: '/metrics' });
    expect(res.statusCode).toBe(404);
  });
});
