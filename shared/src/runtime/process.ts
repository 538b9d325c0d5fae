import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import closeWithGrace from 'close-with-grace';
import type { Logger } from 'pino';
import { bind, MemoryBus, NatsBus, type Bus, type Served } from '../bus/index.js';
import { HealthOps } from '../contracts/index.js';
import { CommonConfig, ConfigError, loadConfig } from '../config/index.js';
import { systemClock, type Clock, type ServiceDefinition } from '../domain/index.js';
import { createLogger } from '../log/index.js';
import { EmbeddedStore, MongoStore, type DocumentStore } from '../store/index.js';

/** Connections a process opens once: the bus and the store (DESIGN §2). */
export interface Connections {
  bus: Bus;
  store: DocumentStore;
  /** `nats` or `memory`; `mongo` or `embedded` — for the start-up log line. */
  kinds: { bus: 'nats' | 'memory'; store: 'mongo' | 'embedded' };
}

/**
 * Opens the bus and the store the config names (DESIGN §2): NATS when `NATS_URL` is set, else the
 * in-process bus (only valid when every participant runs in this process); MongoDB when `MONGO_URL`
 * is set, else the embedded store in `DATA_DIR`. Called only from entry points.
 */
export async function openConnections(config: CommonConfig, log: Logger, name: string): Promise<Connections> {
  const store = config.MONGO_URL
    ? await MongoStore.connect({ url: config.MONGO_URL, db: config.MONGO_DB, log })
    : await EmbeddedStore.open({ dir: config.DATA_DIR, log });
  const bus = config.NATS_URL
    ? await NatsBus.connect({ servers: config.NATS_URL, prefix: config.BUS_PREFIX, name, log })
    : new MemoryBus();
  return {
    bus,
    store,
    kinds: { bus: config.NATS_URL ? 'nats' : 'memory', store: config.MONGO_URL ? 'mongo' : 'embedded' },
  };
}

/**
 * Ensures each service's indexes and serves its bindings on the bus with queue group = service
 * name (DESIGN §3). Returns one handle per service; disposing it stops taking requests.
 */
export async function serveServices(
  defs: readonly ServiceDefinition[],
  deps: { bus: Bus; store: DocumentStore; log: Logger; clock?: Clock; idempotencyTtlHours?: number },
): Promise<Served[]> {
  const served: Served[] = [];
  for (const def of defs) {
    await deps.store.ensureIndexes(def.indexes);
    const log = deps.log.child({ component: def.name });
    const store = deps.store;
    const health = bind(HealthOps[def.name], async () => {
      await store.ping();
      return { status: 'ok' as const, service: def.name };
    });
    const serviceDeps = { store, clock: deps.clock ?? systemClock, log, ...(deps.idempotencyTtlHours === undefined ? {} : { idempotencyTtlHours: deps.idempotencyTtlHours }) };
    const bindings = [...def.bindings(serviceDeps), health];
    served.push(await deps.bus.serve(bindings, { queue: def.name, log }));
  }
  return served;
}

/**
 * The embedded default's JWT secret (DESIGN §5): `JWT_SECRET` when set; in production it is
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
 * `env` (passed in by main.ts), requires NATS, opens the store, serves the service and shuts down
 * gracefully. Rejects with a `ConfigError` listing every bad variable.
 */
export async function runServiceProcess(def: ServiceDefinition, env: Record<string, string | undefined>): Promise<void> {
  const config = loadConfig(CommonConfig, env);
  const log = createLogger({ name: def.name, level: config.LOG_LEVEL });
  if (!config.NATS_URL) throw new ConfigError([`NATS_URL: required for a standalone ${def.name} service (npm start runs the all-in-one)`]);
  const { bus, store, kinds } = await openConnections(config, log, def.name);
  const served = await serveServices([def], { bus, store, log, idempotencyTtlHours: config.IDEMPOTENCY_TTL_HOURS });
  log.info({ bus: kinds.bus, store: kinds.store, queue: def.name }, 'service ready');
  onShutdown(log, [...served.map((s) => () => s.close()), () => bus.close(), () => store.close()]);
}
