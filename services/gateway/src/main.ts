// Process entry point of the gateway (DESIGN §2): the only place that reads the environment.
// `node services/gateway/dist/main.js`        → gateway only (needs NATS_URL; services run elsewhere)
// `node services/gateway/dist/main.js --all`  → all-in-one (npm start): gateway + every service in this
//                                                process, on NATS when NATS_URL is set, else the in-process bus.
import { boardsService } from '@app/boards';
import { queryService } from '@app/query';
import { sprintsService } from '@app/sprints';
import { tasksService } from '@app/tasks';
import { CommonConfig, loadConfig } from '@app/shared/config';
import { systemClock } from '@app/shared/domain';
import { createLogger } from '@app/shared/log';
import { onShutdown, openConnections, resolveJwtSecret, serveServices } from '@app/shared/runtime';
import { buildApp, ensureAdmin, GatewayConfig } from './index.js';

const all = process.argv.includes('--all');
const common = loadConfig(CommonConfig, process.env);
const config = loadConfig(GatewayConfig, { ...process.env, JWT_SECRET: resolveJwtSecret(common) });
const log = createLogger({ name: all ? 'all-in-one' : 'gateway', level: config.LOG_LEVEL });
if (!all && !config.NATS_URL) {
  log.fatal('NATS_URL is required for a standalone gateway (npm start runs the all-in-one)');
  process.exit(1);
}
const { bus, store, kinds } = await openConnections(config, log, 'gateway');
const served = all ? await serveServices([tasksService, boardsService, sprintsService, queryService], { bus, store, log, idempotencyTtlHours: config.IDEMPOTENCY_TTL_HOURS }) : [];
await ensureAdmin(store, config);
const app = await buildApp({ bus, store, clock: systemClock, log, config });
await app.listen({ port: config.PORT, host: config.HOST });
log.info({ mode: all ? 'all-in-one' : 'gateway', bus: kinds.bus, store: kinds.store, port: config.PORT }, 'listening');
onShutdown(log, [() => app.close(), ...served.map((s) => () => s.close()), () => bus.close(), () => store.close()]);
