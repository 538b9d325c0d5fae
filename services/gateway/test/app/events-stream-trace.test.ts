import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { Metrics } from '@app/shared/observability';
import { eventually, traceIntoMemory } from '@app/shared/testing';
import { SseClient } from './sse-client.js';
import { system } from './system.js';

/*
 * The event stream on the embedded default's path, traced as main.ts traces it (in-memory
 * exporter): while a stream is open, the gateway's outbox poller looks for new events every 20 ms;
 * those looks are no traces (docs/observability.md "Traces").
 */

const tracing = traceIntoMemory();

/** Reads of the `events` collection so far (`find` calls, as the store metrics count them). */
async function eventReads(metrics: Metrics): Promise<number> {
  const family = (await metrics.registry.getMetricsAsJSON()).find((f) => f.name === 'store_operation_duration_seconds');
  const values = (family?.values ?? []) as Array<{ value: number; labels: Record<string, unknown>; metricName?: string }>;
  return values
    .filter((v) => v.metricName === 'store_operation_duration_seconds_count' && v.labels.collection === 'events' && v.labels.op === 'find')
    .reduce((n, v) => n + v.value, 0);
}

describe('an open event stream', () => {
  it('polls the outbox without exporting a span', async () => {
    const metrics = new Metrics();
    await using sys = await system({ tracer: tracing.tracer, metrics });
    await sys.app.listen({ port: 0, host: '127.0.0.1' });
    const alice = await sys.user('alice');
    const c = await SseClient.open(`http://127.0.0.1:${(sys.app.server.address() as AddressInfo).port}/api/v1/events/stream`, alice.headers);
    try {
      expect(c.status).toBe(200);
      await c.until((x) => x.frames.some((f) => f.comment === 'connected'));
      // the stream's own start-up reads belong to its request; let them finish, then watch the polls alone
      const started = await eventReads(metrics);
      await eventually('10 polls of the outbox', () => eventReads(metrics), (n) => n >= started + 10);
      tracing.exporter.reset();
      const before = await eventReads(metrics);
      await eventually('10 more polls of the outbox', () => eventReads(metrics), (n) => n >= before + 10);
      expect(tracing.exporter.getFinishedSpans().map((s) => s.name)).toEqual([]);
    } finally {
      c.close();
    }
  });
});
