import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Tracer } from '@opentelemetry/api';
import closeWithGrace from 'close-with-grace';
import type { Logger } from 'pino';
import { bind, MemoryBus, NatsBus, type Bus, type Served } from '../bus/index.js';
import { HealthOps } from '../contracts/index.js';
import { CommonConfig, ConfigError, loadConfig } from '../config/index.js';
import { OutboxSignal, systemClock, type Clock, type ServiceDefinition } from '../domain/index.js';
import { createLogger } from '../log/index.js';
import { AppError } from '../errors/index.js';
import { EmbeddedStore, MongoStore, NotAReplicaSetError, SCHEMA_INDEXES, StoreInUseError, type DocumentStore, type IndexSpec } from '../store/index.js';
import { instrumentBus, instrumentStore, Metrics, serveMetrics, startTracing, type Instruments, type MetricsServer, type Tracing } from '../observability/index.js';

/** Connections a process opens once: the bus and the store (docs/architecture.md §2). */
export interface Connections {
  bus: Bus;
  store: DocumentStore;
  /** `nats` or `memory`; `mongo` or `embedded` — for the start-up log line. */
  kinds: { bus: 'nats' | 'memory'; store: 'mongo' | 'embedded' };
}

/**
 * A start-up refusal the operator can act on: the process prints its message as one
 * line on stderr, without a stack, and exits with code 1 ({@link exitOnStartupError}).
 */
export class StartupError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StartupError';
  }
}

/**
 * The one line a start-up failure is reported with: a {@link StartupError}'s message, a
 * `ConfigError`'s list of every bad variable, an AppError's catalogue message (with its cause's
 * message, e.g. why MongoDB cannot be reached); undefined for anything else (a bug: its stack is
 * worth printing).
 */
export function startupFailureMessage(err: unknown): string | undefined {
  if (err instanceof StartupError || err instanceof ConfigError) return err.message;
  if (AppError.is(err)) {
    const cause = err.cause instanceof Error ? ` (${err.cause.message})` : '';
    return `${err.message}${cause}`;
  }
  return undefined;
}

/** Ends the process for a start-up failure: {@link startupFailureMessage} (or the stack of anything else) on stderr, exit code 1. */
export function exitOnStartupError(err: unknown): never {
  const line = startupFailureMessage(err) ?? (err instanceof Error ? err.stack ?? err.message : String(err));
  process.stderr.write(`${line}\n`);
  process.exit(1);
}

/**
 * Guards an entry point's start-up: until the returned function is called (once the
 * process serves), an uncaught error, including a rejected top-level await, ends the process
 * through {@link exitOnStartupError}. After it, graceful shutdown ({@link onShutdown}) handles them.
 */
export function guardStartup(): () => void {
  const onError = (err: unknown) => exitOnStartupError(err);
  process.on('uncaughtException', onError);
  return () => {
    process.off('uncaughtException', onError);
  };
}

/**
 * The store rule of a separately started process (the gateway without `--all`, or
 * `node services/<name>/dist/main.js`): the embedded store is single-process, so such a
 * process needs `MONGO_URL` to share data with the others, unless `EMBEDDED_STANDALONE=1` says it
 * runs alone on its own `DATA_DIR`. Throws a {@link StartupError} otherwise.
 */
export function checkSeparateProcessStore(config: CommonConfig, name: string): void {
  if (config.MONGO_URL || config.EMBEDDED_STANDALONE) return;
  throw new StartupError(
    `MONGO_URL is required for a separately started ${name} (the embedded store is single-process; ` +
      'run everything in one process with npm start, or set EMBEDDED_STANDALONE=1 to run it alone on its own DATA_DIR)',
  );
}

/**
 * Opens the bus and the store the config names (docs/architecture.md §2): NATS when `NATS_URL` is set, else the
 * in-process bus (only valid when every participant runs in this process); MongoDB when `MONGO_URL`
 * is set, else the embedded store in `DATA_DIR` with `EMBEDDED_SYNC` durability. Called only from
 * entry points. A `DATA_DIR` another process holds is a {@link StartupError}
 * ("DATA_DIR ./data is in use by another process").
 */
export async function openConnections(config: CommonConfig, log: Logger, name: string): Promise<Connections> {
  const store = config.MONGO_URL
    ? await connectMongo(config.MONGO_URL, config.MONGO_DB, log)
    : await openEmbedded(config, log);
  const bus = config.NATS_URL
    ? await NatsBus.connect({ servers: config.NATS_URL, prefix: config.BUS_PREFIX, name, log })
    : new MemoryBus();
  return {
    bus,
    store,
    kinds: { bus: config.NATS_URL ? 'nats' : 'memory', store: config.MONGO_URL ? 'mongo' : 'embedded' },
  };
}

/** The MongoDB store; a standalone server (no replica set, so no transactions) refuses the start. */
async function connectMongo(url: string, db: string, log: Logger): Promise<MongoStore> {
  try {
    return await MongoStore.connect({ url, db, log });
  } catch (e) {
    if (e instanceof NotAReplicaSetError) throw new StartupError(e.message);
    throw e;
  }
}

async function openEmbedded(config: CommonConfig, log: Logger): Promise<EmbeddedStore> {
  try {
    return await EmbeddedStore.open({ dir: config.DATA_DIR, log, sync: config.EMBEDDED_SYNC });
  } catch (e) {
    if (e instanceof StoreInUseError) throw new StartupError(`DATA_DIR ${config.DATA_DIR} is in use by another process`);
    throw e;
  }
}

/**
 * The indexes a process ensures before it serves `def`: every collection's unique and TTL indexes
 * (`SCHEMA_INDEXES`, docs/store.md "One definition per collection"), then the service's own.
 */
export function startupIndexes(def: Pick<ServiceDefinition, 'indexes'>): IndexSpec[] {
  return [...SCHEMA_INDEXES, ...def.indexes];
}

/**
 * Ensures the indexes every collection's writes rely on (`SCHEMA_INDEXES`, docs/store.md "One
 * definition per collection"), then each service's own indexes, and serves its bindings on the bus with queue group = service
 * name (docs/architecture.md §3), and with `background: true` starts each service's background work.
 * Returns one handle per service; disposing it stops taking requests, then its background work.
 */
export async function serveServices(
  defs: readonly ServiceDefinition[],
  deps: {
    bus: Bus; store: DocumentStore; log: Logger; clock?: Clock; config?: Readonly<CommonConfig>; background?: boolean; idempotencyTtlHours?: number;
    metrics?: Metrics | undefined;
    /** The process's tracer when tracing is on ({@link Observability.tools}); the services' writes and background work use it. */
    tracer?: Tracer | undefined;
  },
): Promise<Served[]> {
  const served: Served[] = [];
  // commits of these services' writes reach the relay of this process at once (docs/concurrency.md)
  const outbox = new OutboxSignal();
  for (const def of defs) {
    await deps.store.ensureIndexes(startupIndexes(def));
    const log = deps.log.child({ component: def.name });
    const store = deps.store;
    const health = bind(HealthOps[def.name], async () => {
      await store.ping();
      return { status: 'ok' as const, service: def.name };
    });
    const serviceDeps = {
      store, clock: deps.clock ?? systemClock, log, outbox,
      ...(deps.config ? { config: deps.config } : {}),
      ...(deps.idempotencyTtlHours === undefined ? {} : { idempotencyTtlHours: deps.idempotencyTtlHours }),
      ...(deps.metrics ? { metrics: deps.metrics } : {}),
      ...(deps.tracer ? { tracer: deps.tracer } : {}),
    };
    const bindings = [...def.bindings(serviceDeps), health];
    const handle = await deps.bus.serve(bindings, { queue: def.name, log });
    const work = deps.background && def.background ? await def.background({ ...serviceDeps, bus: deps.bus }) : undefined;
    served.push(
      work
        ? {
            close: async () => {
              await handle.close();
              await work.close();
            },
            [Symbol.asyncDispose]: async () => {
              await handle.close();
              await work.close();
            },
          }
        : handle,
    );
  }
  return served;
}

/** A process's metrics and tracing, started from its configuration (docs/observability.md). */
export interface Observability {
  /** The registry, unless `METRICS_ENABLED=false`. */
  metrics: Metrics | undefined;
  /** The tracer provider, when `OTEL_EXPORTER_OTLP_ENDPOINT` is set. */
  tracing: Tracing | undefined;
  /** What the bus and store are instrumented with. */
  tools: Instruments;
  /** Wraps the process's bus and store ({@link instrumentBus}, {@link instrumentStore}); the same objects when nothing is on. */
  instrument(c: Pick<Connections, 'bus' | 'store'>): { bus: Bus; store: DocumentStore };
  /** Serves `/metrics` on `METRICS_HOST:METRICS_PORT` when both metrics and the port are set. */
  serve(log: Logger): Promise<MetricsServer | undefined>;
  /** Flushes and stops tracing. */
  close(): Promise<void>;
}

/**
 * Starts metrics (unless `METRICS_ENABLED=false`) and tracing (when `OTEL_EXPORTER_OTLP_ENDPOINT`
 * is set, as `OTEL_SERVICE_NAME` or `name`) for one process. Called only from entry points.
 */
export async function startObservability(config: CommonConfig, name: string): Promise<Observability> {
  const metrics = config.METRICS_ENABLED ? new Metrics() : undefined;
  const tracing = config.OTEL_EXPORTER_OTLP_ENDPOINT
    ? await startTracing({ serviceName: config.OTEL_SERVICE_NAME ?? name, exporter: config.OTEL_EXPORTER_OTLP_ENDPOINT })
    : undefined;
  const tools: Instruments = { metrics, tracer: tracing?.tracer };
  return {
    metrics, tracing, tools,
    instrument: (c) => ({ bus: instrumentBus(c.bus, tools), store: instrumentStore(c.store, tools) }),
    async serve(log) {
      if (!metrics || config.METRICS_PORT === undefined) return undefined;
      const server = await serveMetrics(metrics, { port: config.METRICS_PORT, host: config.METRICS_HOST ?? config.HOST, token: config.METRICS_TOKEN });
      log.info({ port: server.port }, 'metrics endpoint listening');
      return server;
    },
    close: async () => {
      await tracing?.shutdown();
    },
  };
}

/**
 * The embedded default's JWT secret (docs/architecture.md §5): `JWT_SECRET` when set; in production it is
 * required (throws `ConfigError`); otherwise one is generated once and kept in `<DATA_DIR>/jwt-secret`.
 */
export function resolveJwtSecret(config: CommonConfig): string {
  if (config.JWT_SECRET) return config.JWT_SECRET;
  if (config.NODE_ENV === 'production') throw new ConfigError(['JWT_SECRET: required when NODE_ENV=production']);
  const file = join(config.DATA_DIR, 'jwt-secret');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  mkdirSync(config.DATA_DIR, { recursive: true });
  const secret = randomBytes(48).toString('base64url');
  writeFileSync(file, secret, { mode: 0o600 });
  return secret;
}

/**
 * Installs graceful shutdown (close-with-grace): on SIGINT/SIGTERM or a fatal error, runs
 * `closers` in order (stop serving first, then drain the bus, then close the store).
 */
export function onShutdown(log: Logger, closers: Array<() => Promise<unknown>>): void {
  closeWithGrace({ delay: 10_000, logger: { error: (m: unknown) => log.error(m) } }, async ({ err }) => {
    if (err) log.error({ err }, 'shutting down after error');
    for (const close of closers) {
      try {
        await close();
      } catch (e) {
        log.warn({ err: e }, 'error during shutdown');
      }
    }
  });
}

/**
 * Entry point of one service process (`node services/<name>/dist/main.js`): reads the config from
 * `env` (passed in by main.ts), requires NATS, requires `MONGO_URL` unless `EMBEDDED_STANDALONE`
 * ({@link checkSeparateProcessStore}), opens the store, serves the service and shuts down
 * gracefully. A start-up failure (bad variables, the store rule, a `DATA_DIR` in use, an
 * unreachable store) ends the process with one line on stderr and exit code 1.
 */
export async function runServiceProcess(def: ServiceDefinition, env: Record<string, string | undefined>): Promise<void> {
  const started = guardStartup();
  const config = loadConfig(CommonConfig, env);
  const log = createLogger({ name: def.name, level: config.LOG_LEVEL });
  if (!config.NATS_URL) throw new ConfigError([`NATS_URL: required for a standalone ${def.name} service (npm start runs the all-in-one)`]);
  checkSeparateProcessStore(config, `${def.name} service`);
  const obs = await startObservability(config, def.name);
  const connections = await openConnections(config, log, def.name);
  const { bus, store } = obs.instrument(connections);
  const served = await serveServices([def], {
    bus, store, log, config, background: true, idempotencyTtlHours: config.IDEMPOTENCY_TTL_HOURS, metrics: obs.metrics, tracer: obs.tools.tracer,
  });
  const metricsServer = await obs.serve(log);
  log.info({ bus: connections.kinds.bus, store: connections.kinds.store, queue: def.name }, 'service ready');
  onShutdown(log, [
    ...served.map((s) => () => s.close()),
    ...(metricsServer ? [() => metricsServer.close()] : []),
    () => bus.close(), () => store.close(), () => obs.close(),
  ]);
  started();
}
