import {
  context, isSpanContextValid, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, TraceFlags, type Attributes, type Context, type Link, type Span, type SpanContext, type Tracer,
} from '@opentelemetry/api';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import { traceIdOf } from '../bus/dispatch.js';
import { AppError } from '../errors/index.js';

/**
 * Distributed traces with OpenTelemetry (docs/observability.md). The gateway starts or continues a
 * W3C `traceparent`; the bus carries it in the request headers (`traceparent`, docs/architecture.md §3); each
 * service continues it with a server span, and store calls are child spans of whatever span is
 * active. Without {@link startTracing} nothing is traced and no span object is made.
 */

/** Name of the tracer every span of this service comes from. */
export const TRACER_NAME = 'board-task-service';

/** A running tracer provider; {@link Tracing.shutdown} flushes and unregisters it. */
export interface Tracing {
  readonly tracer: Tracer;
  /** Flushes pending spans, then removes the global tracer, context manager and propagator. */
  shutdown(): Promise<void>;
}

/** Options of {@link startTracing}. */
export interface TracingOptions {
  /** `service.name` of every span (`gateway`, `tasks`, …, `all-in-one`). */
  serviceName: string;
  /**
   * Where spans go: an OTLP/HTTP traces endpoint URL (`OTEL_EXPORTER_OTLP_ENDPOINT`, `/v1/traces`
   * appended when it is the base URL), or an exporter (tests: the SDK's in-memory exporter,
   * exported span by span).
   */
  exporter: string | SpanExporter;
}

/**
 * Registers a tracer provider for the process (AsyncLocalStorage context, W3C trace-context
 * propagator) and returns its tracer. Every request is sampled (the SDK's default, parent-based).
 * Called by entry points when `OTEL_EXPORTER_OTLP_ENDPOINT` is set, and by tests.
 */
export async function startTracing(opts: TracingOptions): Promise<Tracing> {
  const [{ OTLPTraceExporter }, { resourceFromAttributes }, { BatchSpanProcessor, SimpleSpanProcessor }, { NodeTracerProvider }, { suppressTracing }] = await Promise.all([
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/sdk-trace-base'),
    import('@opentelemetry/sdk-trace-node'),
    import('@opentelemetry/core'),
  ]);
  suppress = suppressTracing;
  const processor =
    typeof opts.exporter === 'string'
      ? new BatchSpanProcessor(new OTLPTraceExporter({ url: tracesUrl(opts.exporter) }))
      : new SimpleSpanProcessor(opts.exporter);
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': opts.serviceName }),
    spanProcessors: [processor],
  });
  provider.register();
  return {
    tracer: provider.getTracer(TRACER_NAME),
    async shutdown() {
      await provider.shutdown();
      trace.disable();
      context.disable();
      propagation.disable();
      suppress = undefined;
    },
  };
}

/** The traces URL of an OTLP endpoint: the endpoint itself when it names a path, else `<base>/v1/traces`. */
export function tracesUrl(endpoint: string): string {
  const url = new URL(endpoint);
  if (url.pathname === '/' || url.pathname === '') url.pathname = '/v1/traces';
  return url.toString();
}

/** The SDK's "suppress tracing" context marker, once {@link startTracing} loaded the SDK. */
let suppress: ((ctx: Context) => Context) | undefined;

/**
 * Runs `fn` where the store and bus wrappers make no spans (the SDK's suppressed context), when
 * `tracer` is set; else just runs it. For background polling (the relays' "anything new?"
 * reads, the stream poller's reads, the dispatcher's tick): without it every poll, 50 a second,
 * would be a trace of its own.
 * The background spans themselves ({@link inRootSpan}) start from the root context and are made.
 */
export function untraced<R>(tracer: Tracer | undefined, fn: () => R): R {
  return tracer && suppress ? context.with(suppress(ROOT_CONTEXT), fn) : fn();
}

/** The trace id of the active span (for log lines), or undefined outside a traced request. */
export function activeTraceId(): string | undefined {
  const span = trace.getActiveSpan();
  return span ? span.spanContext().traceId : undefined;
}

export { traceIdOf };

/** The `traceparent` of a context (for the bus headers), or undefined when it has no span. */
export function traceparentOf(ctx: Context): string | undefined {
  const carrier: Record<string, string> = {};
  propagation.inject(ctx, carrier);
  return carrier.traceparent;
}

/** The context a `traceparent` header continues (the root context when there is none). */
export function contextFrom(traceparent: string | undefined): Context {
  return traceparent === undefined ? ROOT_CONTEXT : propagation.extract(ROOT_CONTEXT, { traceparent });
}

/**
 * Span links a background span (the events relay, the JetStream publisher) makes at most, one per
 * write it carries; the writes beyond are counted in an attribute but not linked. The SDK's own
 * default link limit per span is the same.
 */
export const MAX_SPAN_LINKS = 128;

/**
 * The W3C `traceparent` of the active span when it is valid and sampled (`00-<trace id>-<span
 * id>-<flags>`), else undefined. A write stores it with its events, so the background work that
 * carries them on (relay, JetStream, webhook deliveries) can link to it (docs/observability.md
 * "Links to the write"). Callers ask only when a tracer is set: without one there is nothing to read.
 */
export function activeTraceparent(): string | undefined {
  const sc = trace.getSpanContext(context.active());
  if (!sc || (sc.traceFlags & TraceFlags.SAMPLED) === 0 || !isSpanContextValid(sc)) return undefined;
  return `00-${sc.traceId}-${sc.spanId}-${(sc.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}

/**
 * The span context a stored `traceparent` names (remote, version `00`), or undefined when it is
 * absent or malformed (an all-zero trace or span id included).
 */
export function spanContextOf(traceparent: string | undefined): SpanContext | undefined {
  if (traceparent === undefined) return undefined;
  const m = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/.exec(traceparent);
  if (!m) return undefined;
  const sc: SpanContext = { traceId: m[1]!, spanId: m[2]!, traceFlags: parseInt(m[3]!, 16), isRemote: true };
  return isSpanContextValid(sc) ? sc : undefined;
}

/**
 * Span links to the writes whose `traceparent`s are given, in order: each distinct valid one once,
 * at most {@link MAX_SPAN_LINKS}. `dropped` counts the distinct ones left out by the cap.
 */
export function linksTo(traceparents: Iterable<string | undefined>): { links: Link[]; dropped: number } {
  const seen = new Set<string>();
  const links: Link[] = [];
  let dropped = 0;
  for (const tp of traceparents) {
    if (tp === undefined || seen.has(tp)) continue;
    seen.add(tp);
    const sc = spanContextOf(tp);
    if (!sc) continue;
    if (links.length < MAX_SPAN_LINKS) links.push({ context: sc });
    else dropped++;
  }
  return { links, dropped };
}

/**
 * Runs `fn` in a new span of `kind` under `parent` (default: the active context) and ends it: an
 * error marks the span failed (with its catalogue code) and is rethrown.
 */
export async function inSpan<R>(
  tracer: Tracer, name: string, kind: SpanKind, attributes: Record<string, string>, fn: (span: Span) => Promise<R>, parent: Context = context.active(),
): Promise<R> {
  const span = tracer.startSpan(name, { kind, attributes }, parent);
  try {
    return await context.with(trace.setSpan(parent, span), () => fn(span));
  } catch (e) {
    failSpan(span, e);
    throw e;
  } finally {
    span.end();
  }
}

/** How {@link inRootSpan} starts its span: kind, links to other spans (the writes a background job carries on), attributes. */
export interface RootSpanOptions {
  kind: SpanKind;
  links?: Link[];
  attributes?: Attributes;
}

/**
 * Runs background work `fn` in a new span `name` that is the root of its own trace (a background
 * job is no part of the request or tick that happened to start it; links say what it carries
 * on), in whose context `fn` runs (so store calls are its children), and ends it. An error marks
 * the span failed (with its catalogue code) and is rethrown.
 */
export async function inRootSpan<R>(tracer: Tracer, name: string, opts: RootSpanOptions, fn: (span: Span) => Promise<R>): Promise<R> {
  const span = tracer.startSpan(name, { kind: opts.kind, root: true, ...(opts.links ? { links: opts.links } : {}), ...(opts.attributes ? { attributes: opts.attributes } : {}) }, ROOT_CONTEXT);
  try {
    return await context.with(trace.setSpan(ROOT_CONTEXT, span), () => fn(span));
  } catch (e) {
    failSpan(span, e);
    throw e;
  } finally {
    span.end();
  }
}

/** Marks `span` failed with the error's catalogue code. */
export function failSpan(span: Span, err: unknown): void {
  const e = AppError.from(err);
  span.setStatus({ code: SpanStatusCode.ERROR, message: e.code });
  span.setAttribute('error.type', e.code);
}

export { SpanKind, SpanStatusCode, type Span, type Tracer };
