// The all-in-one service as `npm start --all` builds it, from the built packages: the gateway
// (`buildApp`) on a MemoryBus, every service served in-process, an EmbeddedStore in DATA_DIR.
// Env: DATA_DIR, JWT_SECRET, LOG_LEVEL, EMBEDDED_SYNC. Prints `READY {"port":…,"loadMs":…}` once listening.
import { boardsService } from '@app/boards';
import { buildApp, GatewayConfig } from '@app/gateway';
import { queryService } from '@app/query';
import { sprintsService } from '@app/sprints';
import { tasksService } from '@app/tasks';
import { MemoryBus } from '@app/shared/bus';
import { loadConfig } from '@app/shared/config';
import { systemClock } from '@app/shared/domain';
import { createLogger } from '@app/shared/log';
import { serveServices } from '@app/shared/runtime';
import { EmbeddedStore } from '@app/shared/store';

const config = loadConfig(GatewayConfig, { ...process.env, HOST: '127.0.0.1', PORT: '0' });
const log = createLogger({ name: 'bench-all-in-one', level: config.LOG_LEVEL });
const started = Date.now();
const store = await EmbeddedStore.open({ dir: config.DATA_DIR, log, sync: config.EMBEDDED_SYNC });
const loadMs = Date.now() - started;
const bus = new MemoryBus();
// with the services' background work, as `npm start` runs them (the query service's outbox relay numbers the events)
const served = await serveServices([tasksService, boardsService, sprintsService, queryService], { bus, store, log, background: true });
const app = await buildApp({ bus, store, clock: systemClock, log, config });
await app.listen({ port: 0, host: '127.0.0.1' });
console.log(`READY ${JSON.stringify({ port: app.server.address().port, loadMs })}`);

process.once('SIGTERM', async () => {
  await app.close();
  for (const s of served) await s.close();
  await bus.close();
  await store.close();
  process.exit(0);
});
