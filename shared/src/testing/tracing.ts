import type { Tracer } from '@opentelemetry/api';
import type { InMemorySpanExporter } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll } from 'vitest';
import { startTracing, type Tracing } from '../observability/tracing.js';

/** What {@link traceIntoMemory} hands a test file: read after its `beforeAll` has run. */
export interface MemoryTracing {
  /** The process's tracer (pass it as `ServiceDeps.tracer` / `GatewayDeps.tracer`, as main.ts does). */
  readonly tracer: Tracer;
  /** Every finished span, exported one by one (`getFinishedSpans()`, `reset()`). */
  readonly exporter: InMemorySpanExporter;
}

/**
 * Traces the test file's process into the SDK's in-memory exporter ({@link startTracing}, every
 * request sampled): registers a `beforeAll` that starts tracing and an `afterAll` that shuts it
 * down (flushing and removing the global tracer, context manager and propagator). Call it at the
 * top level of a file or inside a `describe`. Reading `tracer` or `exporter` before the
 * `beforeAll` has run throws.
 */
export function traceIntoMemory(serviceName = 'test'): MemoryTracing {
  let tracing: Tracing | undefined;
  let exporter: InMemorySpanExporter | undefined;
  beforeAll(async () => {
    const sdk = await import('@opentelemetry/sdk-trace-base');
    exporter = new sdk.InMemorySpanExporter();
    tracing = await startTracing({ serviceName, exporter });
  });
  afterAll(async () => {
    await tracing?.shutdown();
  });
  const started = <T>(v: T | undefined): T => {
    if (v === undefined) throw new Error('traceIntoMemory: tracing starts in beforeAll; read it inside a test');
    return v;
  };
  return {
    get tracer() { return started(tracing).tracer; },
    get exporter() { return started(exporter); },
  };
}
