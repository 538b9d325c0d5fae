import { context, propagation, ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Context, type Span, type Tracer } from '@opentelemetry/api';
import type { SpanExporter } from '@opentelemetry/sdk-trace-base';
import { traceIdOf } from '../bus/dispatch.js';
import { AppError } from '../errors/index.js';

/**
 * Distributed traces with OpenTelemetry (docs/observability.md). The gateway starts or continues a
 * W3C `traceparent`; the bus carries it in the request headers (`traceparent`, DESIGN §3); each
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
  const [{ OTLPTraceExporter }, { resourceFromAttributes }, { BatchSpanProcessor, SimpleSpanProcessor }, { NodeTracerProvider }] = await Promise.all([
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/sdk-trace-base'),
    import('@opentelemetry/sdk-trace-node'),
  ]);
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
    },
  };
}

/** The traces URL of an OTLP endpoint: the endpoint itself when it names a path, else `<base>/v1/traces`. */
export function tracesUrl(endpoint: string): string {
  const url = new URL(endpoint);
  if (url.pathname === '/' || url.pathname === '') url.pathname = '/v1/traces';
  return url.toString();
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

/** Marks `span` failed with the error's catalogue code. */
export function failSpan(span: Span, err: unknown): void {
  const e = AppError.from(err);
  span.setStatus({ code: SpanStatusCode.ERROR, message: e.code });
  span.setAttribute('error.type', e.code);
}

export { SpanKind };
