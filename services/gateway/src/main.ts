// Process entry point of the gateway (docs/architecture.md §2): the only place that reads the environment.
// `node services/gateway/dist/main.js`        → gateway only (needs NATS_URL; services run elsewhere)
// `node services/gateway/dist/main.js --all`  → all-in-one (npm start): gateway + every service in this
//                                                process, on NATS when NATS_URL is set, else the in-process bus.
import { boardsService } from '@app/boards';
import { queryService } from '@app/query';
import { sprintsService } from '@app/sprints';
import { tasksService } from '@app/tasks';
import { CommonConfig, loadConfig } from '@app/shared/config';
import { systemClock } from '@app/shared/domain';
import { NatsBus } from '@app/shared/bus';
import { JetStreamHub } from '@app/shared/events';
import { backupStore, EmbeddedStore } from '@app/shared/store';
import { createLogger } from '@app/shared/log';
import { publicMetricsAccess } from '@app/shared/observability';
import { checkSeparateProcessStore, guardStartup, onShutdown, openConnections, resolveJwtSecret, serveServices, startObservability } from '@app/shared/runtime';
import { SnapshotIsolationStore } from '@app/shared/testing/isolation';
import { buildApp, ensureAdmin, GatewayConfig } from './index.js';

// Until it listens, a start-up failure is one line on stderr and exit code 1.
const started = guardStartup();
const all = process.argv.includes('--all');
const common = loadConfig(CommonConfig, process.env);
const config = loadConfig(GatewayConfig, { ...process.env, JWT_SECRET: resolveJwtSecret(common) });
const log = createLogger({ name: all ? 'all-in-one' : 'gateway', level: config.LOG_LEVEL });
if (!all && !config.NATS_URL) {
  log.fatal('NATS_URL is required for a standalone gateway (npm start runs the all-in-one)');
  process.exit(1);
}
if (!all) checkSeparateProcessStore(config, 'gateway');
// metrics and traces (docs/observability.md): one registry for the whole process
const obs = await startObservability(config, all ? 'all-in-one' : 'gateway');
const opened = await openConnections(config, log, 'gateway');
const { kinds } = opened;
// EMBEDDED_ISOLATION=snapshot (docs/store.md "Snapshot isolation"): the all-in-one's embedded store
// under MongoDB's concurrency model, for black-box and load tests
const snapshot = all && config.EMBEDDED_ISOLATION === 'snapshot' && kinds.store === 'embedded';
if (config.EMBEDDED_ISOLATION === 'snapshot' && !snapshot) log.warn('EMBEDDED_ISOLATION=snapshot applies to the all-in-one on the embedded store only; ignored');
const connections = snapshot ? { ...opened, store: new SnapshotIsolationStore(opened.store) } : opened;
if (snapshot) log.warn('EMBEDDED_ISOLATION=snapshot: transactions run concurrently under MongoDB\'s snapshot isolation (a test and bench setting)');
const { bus, store } = obs.instrument(connections);
const served = all
  ? await serveServices([tasksService, boardsService, sprintsService, queryService], {
      bus, store, log, config, background: true, idempotencyTtlHours: config.IDEMPOTENCY_TTL_HOURS, metrics: obs.metrics, tracer: obs.tools.tracer,
    })
  : [];
await ensureAdmin(store, config);
// Event stream source: the JetStream feed on NATS, else (or when the NATS server has no
// JetStream) the outbox poller, buildApp's default.
const events =
  connections.bus instanceof NatsBus
    ? await JetStreamHub.start({ store, nc: connections.bus.connection, prefix: connections.bus.subjectPrefix, log, retentionDays: config.EVENT_RETENTION_DAYS }).catch(
        (err: unknown) => {
          log.warn({ err }, 'JetStream unavailable; event streams poll the outbox instead');
          return undefined;
        },
      )
    : undefined;
// the admin backup route copies the embedded store's own file (MongoDB is backed up with mongodump)
const embedded = connections.store instanceof EmbeddedStore ? connections.store : undefined;
const app = await buildApp({
  bus, store, clock: systemClock, log, config, ...(events ? { events } : {}), metrics: obs.metrics, tracer: obs.tools.tracer,
  ...(embedded ? { backup: (file: string) => backupStore(embedded, config.DATA_DIR, file) } : {}),
});
await app.listen({ port: config.PORT, host: config.HOST });
const metricsServer = await obs.serve(log);
if (obs.metrics && !metricsServer && publicMetricsAccess(config) === 'off') {
  log.warn('metrics are not served: in production /metrics needs METRICS_PORT (internal) or METRICS_TOKEN (docs/observability.md)');
}
log.info({ mode: all ? 'all-in-one' : 'gateway', bus: kinds.bus, store: kinds.store, port: config.PORT }, 'listening');
onShutdown(log, [
  () => app.close(),
  ...(events ? [() => events.close()] : []),
  ...served.map((s) => () => s.close()),
  ...(metricsServer ? [() => metricsServer.close()] : []),
  () => bus.close(),
  () => store.close(),
  () => obs.close(),
]);
started();
