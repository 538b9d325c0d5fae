import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { describe, expect, it } from 'vitest';
import { aTask, eventually, insert, traceIntoMemory } from '@app/shared/testing';
import { system } from './system.js';
import { Receiver } from './webhook-receiver.js';

/*
 * Background spans link to the write that caused them (docs/observability.md "Links to the
 * write"), on the embedded default's path: the whole system in one process on the in-process bus,
 * traced as main.ts traces it (in-memory exporter), the relay numbering the outbox and the
 * dispatcher fanning out from its store cursor and POSTing to local receivers on 127.0.0.1.
 */

const tracing = traceIntoMemory();

/** Waits until the finished spans include `n` named `name` linked to trace `traceId`, and returns them. */
function linkedSpans(name: string, traceId: string, n: number): Promise<ReadableSpan[]> {
  return eventually(
    `${n} ${name} spans linked to the request's trace`,
    () => tracing.exporter.getFinishedSpans().filter((s) => s.name === name && s.links.some((l) => l.context.traceId === traceId)),
    (found) => found.length >= n,
  );
}

describe('webhook delivery spans', () => {
  it('one PATCH yields a relay span and a span per delivery attempt, each the root of its own trace and linked to the request’s trace', async () => {
    await using sys = await system({ env: { WEBHOOK_ALLOW_PRIVATE: 'true' }, webhooks: { tickMs: 20, attemptTimeoutMs: 1_000, random: () => 0.5 }, clockAt: new Date().toISOString(), tracer: tracing.tracer });
    const ok = await Receiver.start();
    const failing = await Receiver.start();
    try {
      failing.plan.push(500);
      const alice = await sys.user('alice');
      const t = aTask({ owner: alice.id, status: 'todo' });
      await insert(sys.store, { tasks: [t] });
      // the receivers' URLs carry a secret in their query: it must not reach a span
      for (const rx of [ok, failing]) {
        const res = await sys.call('POST', '/api/v1/webhooks', alice, { url: `${rx.url}?token=s3cret`, events: ['task.updated'] });
        expect(res.status, JSON.stringify(res.body)).toBe(201);
      }
      tracing.exporter.reset();

      const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
      const patched = await sys.call('PATCH', `/api/v1/tasks/${t._id}`, alice, { status: 'done' }, { traceparent: `00-${traceId}-00f067aa0ba902b7-01` });
      expect(patched.status, JSON.stringify(patched.body)).toBe(200);
      await ok.until(1);
      await failing.until(1);

      const [relay] = await linkedSpans('events.relay', traceId, 1);
      expect(relay, 'a relay span linked to the PATCH').toBeDefined();
      expect(relay!.parentSpanContext).toBeUndefined();
      expect(relay!.spanContext().traceId).not.toBe(traceId);
      // the link points at the write's store transaction, a span of the request's trace
      const link = relay!.links.find((l) => l.context.traceId === traceId)!;
      const txn = tracing.exporter.getFinishedSpans().find((s) => s.spanContext().spanId === link.context.spanId);
      expect(txn?.name).toBe('store transaction');
      expect(txn?.spanContext().traceId).toBe(traceId);

      const attempts = await linkedSpans('webhook deliver', traceId, 2);
      for (const span of attempts) {
        expect(span.links.map((l) => l.context.traceId)).toEqual([traceId]);
        expect(span.links[0]!.context.spanId).toBe(link.context.spanId);
        expect(span.parentSpanContext).toBeUndefined();
        expect(span.spanContext().traceId).not.toBe(traceId);
        expect(span.attributes).toMatchObject({ 'webhook.attempt': 1, 'event.type': 'task.updated', 'server.address': '127.0.0.1', 'http.request.method': 'POST' });
        expect(JSON.stringify(span.attributes)).not.toMatch(/s3cret|\/hook/);
      }
      const byStatus = Object.fromEntries(attempts.map((s) => [s.attributes['http.response.status_code'], s.attributes]));
      expect(byStatus[200]).toMatchObject({ 'webhook.outcome': 'delivered', 'http.response.status_class': '2xx' });
      expect(byStatus[500]).toMatchObject({ 'webhook.outcome': 'retry', 'http.response.status_class': '5xx' });

      // the trace context is internal: not in the webhook body, the feed or the delivery log
      expect(Object.keys(ok.received[0]!.json)).not.toContain('traceparent');
      const feed = await sys.call('GET', '/api/v1/events', alice);
      expect(feed.status).toBe(200);
      expect(JSON.stringify(feed.body)).not.toContain('traceparent');
      const hooks = await sys.call('GET', '/api/v1/webhooks', alice);
      for (const w of hooks.body.data) expect(JSON.stringify((await sys.call('GET', `/api/v1/webhooks/${w.id}/deliveries`, alice)).body)).not.toContain('traceparent');
    } finally {
      await ok.close();
      await failing.close();
    }
  });
});
