import { context, trace, type Tracer } from '@opentelemetry/api';
import { ReplyBus, type Binding, type Bus, type BusReply, type CallMeta, type Served, type ServeOptions } from '../bus/bus.js';
import { SprintsOps } from '../contracts/sprints.js';
import type { AnyOp, In } from '../contracts/op.js';
import type { HistogramSeries } from './histogram.js';
import type { Metrics } from './metrics.js';
import { outcomeOf } from './metrics.js';
import { contextFrom, failSpan, SpanKind, traceparentOf, type Span } from './tracing.js';

/** What a bus is instrumented with; either may be absent (nothing is measured or traced then). */
export interface Instruments {
  metrics?: Metrics | undefined;
  tracer?: Tracer | undefined;
}

/**
 * Runs one bus call, client or server side, and accounts for it: `observe` gets its outcome (`ok`,
 * or `outcomeOf` the error) and its duration in seconds; `span`, when tracing, is marked failed
 * with the error and ended. A thrown error counts and is rethrown; `fn` reports an error reply,
 * which is returned, not thrown, through `failed`.
 */
async function measured<R>(
  span: Span | undefined,
  observe: (outcome: string, seconds: number) => void,
  fn: (failed: (err: unknown) => void) => Promise<R>,
): Promise<R> {
  const t0 = performance.now();
  let outcome = 'ok';
  const failed = (err: unknown) => {
    outcome = outcomeOf(err);
    if (span) failSpan(span, err);
  };
  try {
    return await fn(failed);
  } catch (e) {
    failed(e);
    throw e;
  } finally {
    span?.end();
    observe(outcome, (performance.now() - t0) / 1000);
  }
}

/**
 * A {@link Bus} that measures and traces the one it wraps (docs/observability.md):
 * - client side (`request*`): `bus_request_duration_seconds{side="client"}` by subject and
 *   outcome (`ok`, the error reply's code, `timeout`, `no_responders`), and a CLIENT span whose
 *   context goes out as the request's `traceparent` header;
 * - server side (`serve`): each handler is timed (`side="server"`; close-sprint also in
 *   `sprint_close_duration_seconds`) and runs in a SERVER span that continues the request's
 *   `traceparent`, so the store calls it makes are its children.
 * Errors and replies pass through unchanged.
 */
export class InstrumentedBus extends ReplyBus {
  constructor(readonly inner: Bus, private readonly tools: Instruments) {
    super();
  }

  /** The client side's `ok` series by subject (an observation without building its label key). */
  private readonly clientOk = new Map<string, HistogramSeries>();

  requestReply<O extends AnyOp>(op: O, input: In<O>, meta: CallMeta = {}): Promise<BusReply> {
    const { tracer, metrics } = this.tools;
    const subject = op.subject;
    if (!tracer && metrics) {
      // metrics alone (the default): one `then` on the call, no span and no async frame
      let ok = this.clientOk.get(subject);
      if (!ok) this.clientOk.set(subject, (ok = metrics.busDuration.labels('client', subject, 'ok')));
      const t0 = performance.now();
      const series = ok;
      return this.inner.requestReply(op, input, meta).then(
        (reply) => {
          (reply.ok ? series : metrics.busDuration.labels('client', subject, outcomeOf(reply.error))).observe((performance.now() - t0) / 1000);
          return reply;
        },
        (e: unknown) => {
          metrics.busDuration.labels('client', subject, outcomeOf(e)).observe((performance.now() - t0) / 1000);
          throw e;
        },
      );
    }
    const span = tracer?.startSpan(`bus ${subject}`, { kind: SpanKind.CLIENT, attributes: { 'messaging.destination.name': subject } });
    const sent = span ? { ...meta, traceparent: traceparentOf(trace.setSpan(context.active(), span)) } : meta;
    return measured(
      span,
      (outcome, s) => metrics?.busDuration.labels('client', subject, outcome).observe(s),
      async (failed) => {
        const reply = await this.inner.requestReply(op, input, sent);
        if (!reply.ok) failed(reply.error);
        return reply;
      },
    );
  }

  serve(bindings: readonly Binding[], opts: ServeOptions): Promise<Served> {
    return this.inner.serve(bindings.map((b) => this.wrap(b)), opts);
  }

  ping(): Promise<void> {
    return this.inner.ping();
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  private wrap(binding: Binding): Binding {
    const { tracer, metrics } = this.tools;
    if (!tracer && !metrics) return binding;
    const subject = binding.op.subject;
    const closeSprint = subject === SprintsOps.close.subject ? metrics?.sprintCloseDuration : undefined;
    const inner = binding.handler;
    if (!tracer && metrics) {
      // metrics alone (the default): one `then` on the handler's promise, no span and no async frame
      const ok = metrics.busDuration.labels('server', subject, 'ok');
      const closeOk = closeSprint?.labels('ok');
      const succeeded = (t0: number): void => {
        const s = (performance.now() - t0) / 1000;
        ok.observe(s);
        closeOk?.observe(s);
      };
      const failed = (t0: number, e: unknown): void => {
        const s = (performance.now() - t0) / 1000;
        const outcome = outcomeOf(e);
        metrics.busDuration.labels('server', subject, outcome).observe(s);
        closeSprint?.labels(outcome).observe(s);
      };
      const timed: Binding['handler'] = (input, ctx) => {
        const t0 = performance.now();
        let called: ReturnType<Binding['handler']>;
        try {
          called = inner(input, ctx);
        } catch (e) {
          failed(t0, e);
          return Promise.reject(e as Error); // a rejection, as from the async handler it stands for
        }
        return called.then(
          (r: unknown) => {
            succeeded(t0);
            return r;
          },
          (e: unknown) => {
            failed(t0, e);
            throw e;
          },
        );
      };
      return { op: binding.op, handler: timed };
    }
    const handler: Binding['handler'] = (input, ctx) => {
      const parent = tracer ? contextFrom(ctx.traceparent) : undefined;
      const span = tracer?.startSpan(`bus ${subject} process`, { kind: SpanKind.SERVER, attributes: { 'messaging.destination.name': subject } }, parent);
      return measured(
        span,
        (outcome, s) => {
          metrics?.busDuration.labels('server', subject, outcome).observe(s);
          closeSprint?.labels(outcome).observe(s);
        },
        () => (span ? context.with(trace.setSpan(parent!, span), () => inner(input, ctx)) : inner(input, ctx)),
      );
    };
    return { op: binding.op, handler };
  }
}

/** The bus itself when there is nothing to instrument with, else an {@link InstrumentedBus} around it. */
export function instrumentBus(bus: Bus, tools: Instruments): Bus {
  return tools.metrics || tools.tracer ? new InstrumentedBus(bus, tools) : bus;
}

