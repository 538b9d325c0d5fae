export { Metrics, outcomeOf, statusClass, type MetricsOptions } from './metrics.js';
export { FastHistogram, HistogramSeries } from './histogram.js';
export { InstrumentedBus, instrumentBus, type Instruments } from './instrumented-bus.js';
export { InstrumentedStore, instrumentStore } from './instrumented-store.js';
export {
  startTracing, traceIdOf, activeTraceId, traceparentOf, contextFrom, tracesUrl, TRACER_NAME, activeTraceparent, spanContextOf, linksTo, failSpan, MAX_SPAN_LINKS,
  inRootSpan, untraced, SpanKind, SpanStatusCode, type RootSpanOptions, type Span, type Tracer, type Tracing, type TracingOptions,
} from './tracing.js';
export { serveMetrics, publicMetricsAccess, bearerMatches, type MetricsAccess, type MetricsServer } from './server.js';
