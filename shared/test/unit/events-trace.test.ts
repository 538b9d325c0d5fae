import { context, trace, TraceFlags } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import type { CallContext } from '@app/shared/bus';
import { runWrite, systemClock, type EventDoc, type OutboxDoc, type ServiceDeps } from '@app/shared/domain';
import { OutboxPoller, readOutbox, relayOutbox } from '@app/shared/events';
import { silentLogger } from '@app/shared/log';
import { instrumentStore, linksTo, MAX_SPAN_LINKS, spanContextOf } from '@app/shared/observability';
import { Collections, EmbeddedStore, type DocumentStore } from '@app/shared/store';
import { eventually, traceIntoMemory } from '@app/shared/testing';

/**
 * A write's trace context travels with its events (docs/observability.md "Links to the write"):
 * stored on the outbox document and the numbered events when the write is traced, never in the
 * envelope, and nothing at all when tracing is off.
 */

const ctx = (): CallContext => ({
  requestId: 'r1', userId: 'u1', traceparent: undefined, subject: 'tasks.update', log: silentLogger(), ifMatch: undefined, grant: undefined, idempotency: undefined, reply: {},
});

/** One write that emits one `task.updated` event, through the writers' own unit of work. */
const write = (deps: ServiceDeps) =>
  runWrite(deps, ctx(), async (w) => {
    w.emit({ type: 'task.updated', task_id: 't1', data: { task: { id: 't1', version: 2 }, changes: [] } });
    return 'ok';
  });


const outboxDocs = (store: DocumentStore) => store.collection<OutboxDoc>(Collections.outbox).find({});
const eventDocs = (store: DocumentStore) => store.collection<EventDoc>(Collections.events).find({}, { sort: { seq: 1 } });

describe('with tracing off', () => {
  it('stores no trace context on the outbox document or the numbered event', async () => {
    await using store = EmbeddedStore.memory();
    await write({ store, clock: systemClock, log: silentLogger() });
    const [entry] = await outboxDocs(store);
    expect(entry).toBeDefined();
    expect(Object.keys(entry!)).not.toContain('traceparent');

    await relayOutbox(store, { holder: 'p1', hold: true });
    const [event] = await eventDocs(store);
    expect(event?.seq).toBe(1);
    expect(Object.keys(event!)).not.toContain('traceparent');
  });
});

describe('with tracing on', () => {
  const tracing = traceIntoMemory();

  it('a traced write stores its trace context; the relay keeps it on the event, out of the envelope, and links its own root span to the write', async () => {
    await using inner = EmbeddedStore.memory();
    const { tracer } = tracing;
    const store = instrumentStore(inner, { tracer });
    tracing.exporter.reset();
    const writeTrace = await tracer.startActiveSpan('bus tasks.update process', async (span) => {
      await write({ store, clock: systemClock, log: silentLogger(), tracer });
      span.end();
      return span.spanContext().traceId;
    });
    const [entry] = await outboxDocs(inner);
    const stored = spanContextOf(entry?.traceparent);
    expect(stored?.traceId).toBe(writeTrace);
    // the write's store transaction span is the one whose commit carries the events
    const txn = tracing.exporter.getFinishedSpans().find((s) => s.name === 'store transaction' && s.spanContext().traceId === writeTrace);
    expect(stored?.spanId).toBe(txn?.spanContext().spanId);

    tracing.exporter.reset();
    const pass = await relayOutbox(store, { holder: 'p1', hold: true, tracer });
    expect(pass.numbered).toHaveLength(1);
    expect(Object.keys(pass.numbered[0]!)).not.toContain('traceparent');
    const [event] = await eventDocs(inner);
    expect(event?.traceparent).toBe(entry!.traceparent);

    const relay = tracing.exporter.getFinishedSpans().find((s) => s.name === 'events.relay');
    expect(relay).toBeDefined();
    expect(relay!.parentSpanContext).toBeUndefined();
    expect(relay!.spanContext().traceId).not.toBe(writeTrace);
    expect(relay!.links.map((l) => l.context.traceId)).toEqual([writeTrace]);
    expect(relay!.attributes).toMatchObject({ 'events.count': 1, 'events.write_count': 1, 'events.links_dropped': 0, 'events.seq.first': 1, 'events.seq.last': 1 });
    // the pass's store calls are children of the relay span
    const children = tracing.exporter.getFinishedSpans().filter((s) => s.parentSpanContext?.spanId === relay!.spanContext().spanId);
    expect(children.map((s) => s.name)).toContain('store transaction');

    // the feed's read gives the envelope only; a relay's read also gives the trace context, by event id
    const traces = new Map<string, string>();
    const [envelope] = await readOutbox(store, 0, 10, {}, traces);
    expect(Object.keys(envelope!)).not.toContain('traceparent');
    expect(traces.get(envelope!.id)).toBe(entry!.traceparent);

    // an idle pass (the relay's poll, 50 a second) makes no span at all, not even of its store reads;
    // neither does a pass that only renews the lease
    tracing.exporter.reset();
    await relayOutbox(store, { holder: 'p1', hold: true, leaseUntil: pass.leaseUntil, tracer });
    await relayOutbox(store, { holder: 'p1', hold: true, tracer });
    expect(tracing.exporter.getFinishedSpans().map((s) => s.name)).toEqual([]);
  });

  it('an open event stream’s idle polls (the outbox poller and its relay pass) export no spans; the poll that numbers a write is one events.relay trace linked to it', async () => {
    await using inner = EmbeddedStore.memory();
    const { tracer } = tracing;
    const store = instrumentStore(inner, { tracer });
    let passes = 0;
    const poller = new OutboxPoller(store, {
      intervalMs: 2,
      tracer,
      relay: () => {
        passes++;
        return relayOutbox(store, { tracer });
      },
    });
    const seen: number[] = [];
    tracing.exporter.reset();
    const off = poller.subscribe((batch) => seen.push(...batch.events.map((e) => e.seq)));
    try {
      await eventually('10 relay passes', () => passes >= 10);
      expect(tracing.exporter.getFinishedSpans().map((s) => s.name)).toEqual([]);

      const writeTrace = await tracer.startActiveSpan('bus tasks.update process', async (span) => {
        await write({ store, clock: systemClock, log: silentLogger(), tracer });
        span.end();
        return span.spanContext().traceId;
      });
      await eventually('one event seen', () => seen.length === 1);
      expect(seen).toEqual([1]);
      // outside the write's trace: one trace, the relay pass's (its span and its store calls), linked to the write
      const others = tracing.exporter.getFinishedSpans().filter((s) => s.spanContext().traceId !== writeTrace);
      const relay = others.find((s) => s.name === 'events.relay');
      expect(relay?.links.map((l) => l.context.traceId)).toEqual([writeTrace]);
      expect(new Set(others.map((s) => s.spanContext().traceId))).toEqual(new Set([relay!.spanContext().traceId]));
    } finally {
      off();
      await poller.close();
    }
  });

  it('a write in an unsampled trace stores nothing', async () => {
    await using store = EmbeddedStore.memory();
    const unsampled = trace.setSpanContext(context.active(), { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', traceFlags: TraceFlags.NONE });
    await context.with(unsampled, () => write({ store: instrumentStore(store, { tracer: tracing.tracer }), clock: systemClock, log: silentLogger(), tracer: tracing.tracer }));
    const [entry] = await outboxDocs(store);
    expect(entry).toBeDefined();
    expect(Object.keys(entry!)).not.toContain('traceparent');
  });
});

describe('links to writes', () => {
  const tp = (n: number) => `00-${n.toString(16).padStart(32, '0')}-${'1'.padStart(16, '0')}-01`;

  it('links each distinct write once, in order, at most MAX_SPAN_LINKS, and counts the rest', () => {
    const many = Array.from({ length: 200 }, (_, i) => tp(i + 1));
    const { links, dropped } = linksTo([undefined, ...many, tp(1), 'garbage']);
    expect(MAX_SPAN_LINKS).toBe(128);
    expect(links).toHaveLength(128);
    expect(links[0]!.context.traceId).toBe(tp(1).split('-')[1]);
    expect(links[127]!.context.traceId).toBe(tp(128).split('-')[1]);
    expect(dropped).toBe(72);
  });

  it('reads a stored traceparent as a remote span context and refuses malformed or all-zero ones', () => {
    expect(spanContextOf('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01')).toEqual({
      traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', traceFlags: 1, isRemote: true,
    });
    expect(spanContextOf('00-00000000000000000000000000000000-00f067aa0ba902b7-01')).toBeUndefined();
    expect(spanContextOf('00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01')).toBeUndefined();
    expect(spanContextOf('not a traceparent')).toBeUndefined();
    expect(spanContextOf(undefined)).toBeUndefined();
  });
});
