import type { Tracer } from '@opentelemetry/api';
import type { Logger } from 'pino';
import { bind, type Binding, type Bus, type Handler } from '../bus/bus.js';
import type { CommonConfig } from '../config/load-config.js';
import type { AnyOp } from '../contracts/op.js';
import type { Metrics } from '../observability/metrics.js';
import type { DocumentStore, IndexSpec } from '../store/port.js';
import type { Clock } from './clock.js';

/**
 * In-process notice that a write committed events to the outbox (`runWrite` calls
 * {@link committed}; the relay of the same process listens and numbers them at once instead of
 * polling for them). One per `serveServices` call, shared by the services it serves.
 */
export class OutboxSignal {
  private readonly listeners = new Set<() => void>();

  /** Adds a listener; returns its remover. */
  listen(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  /** A write committed events. */
  committed(): void {
    for (const l of this.listeners) l();
  }
}

/** What every service's handlers are built from (docs/architecture.md §10: typed deps, no env, no connect). */
export interface ServiceDeps {
  store: DocumentStore;
  clock: Clock;
  log: Logger;
  /** `IDEMPOTENCY_TTL_HOURS`: how long an Idempotency-Key's answer is replayed (default 24). */
  idempotencyTtlHours?: number;
  /** The process configuration, for settings a service reads (events: retention, webhook limits); defaults apply when absent. */
  config?: Readonly<CommonConfig>;
  /** Told after each write that committed events (the outbox relay of this process listens). */
  outbox?: OutboxSignal;
  /** The process's metrics (docs/observability.md); absent when metrics are off (tests, `METRICS_ENABLED=false`). */
  metrics?: Metrics;
  /**
   * The process's tracer when tracing is on (docs/observability.md "Traces"): writes then store
   * their trace context with their events, and the background work (relay, JetStream publisher,
   * webhook deliveries) makes spans linked to it. Absent: none of that is read, stored or made.
   */
  tracer?: Tracer;
}

/** What a service's background work is started with: its deps plus the bus (NATS gives JetStream). */
export interface BackgroundDeps extends ServiceDeps {
  bus: Bus;
}

/** Handle of running background work; `close` stops it and waits for work in flight. */
export interface BackgroundWork {
  close(): Promise<void>;
}

/**
 * A service as the process entry points see it: its name (= NATS queue group, docs/architecture.md §3), its
 * bindings, and the indexes its own reads need at start-up (the indexes writes rely on, unique
 * keys and TTL, are defined once per collection in the store's schema and ensured by
 * `serveServices` for every service). Built by `services/<name>/src/service.ts`.
 */
export interface ServiceDefinition {
  name: 'tasks' | 'boards' | 'sprints' | 'query';
  bindings(deps: ServiceDeps): Binding[];
  indexes: IndexSpec[];
  /**
   * Work that runs beside the bindings in every replica (the query service's outbox
   * relay, webhook dispatcher and retention sweep). Started by `serveServices` when asked.
   */
  background?(deps: BackgroundDeps): Promise<BackgroundWork>;
}

/** One handler factory per op of `Ops`, under the op's key (`TasksOps` → `{create, get, …}`). */
export type HandlerFactories<Ops extends Record<string, AnyOp>> = { [K in keyof Ops]: (deps: ServiceDeps) => Handler<Ops[K]> };

/**
 * Binds every op of an ops object (`TasksOps`, `BoardsOps`, …) to the handler its factory builds
 * from `deps`, in the ops object's order. Exhaustive: an op without a factory is a type error.
 */
export function bindOps<Ops extends Record<string, AnyOp>>(deps: ServiceDeps, ops: Ops, factories: HandlerFactories<Ops>): Binding[] {
  return (Object.keys(ops) as Array<keyof Ops & string>).map((key) => bind(ops[key], factories[key](deps)));
}
