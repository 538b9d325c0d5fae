// The all-in-one service as `npm start --all` builds it, from the built packages: the gateway
// (`buildApp`) on a MemoryBus, every service served in-process, an EmbeddedStore in DATA_DIR.
// Env: DATA_DIR, JWT_SECRET, LOG_LEVEL, EMBEDDED_SYNC, METRICS_ENABLED (default true, as `npm start`),
// BENCH_TRACING=memory (every request traced into the SDK's in-memory exporter, emptied every second),
// BENCH_USERS (user ids to store as users besides the bench user, comma-separated),
// BENCH_ADMISSION=default (keep the admission limits' defaults; else they are lifted).
// Prints `READY {"port":…,"loadMs":…}` once listening.
import { boardsService } from '@app/boards';
import { buildApp, GatewayConfig } from '@app/gateway';
import { queryService } from '@app/query';
import { sprintsService } from '@app/sprints';
import { tasksService } from '@app/tasks';
import { MemoryBus } from '@app/shared/bus';
import { loadConfig } from '@app/shared/config';
import { systemClock } from '@app/shared/domain';
import { createLogger } from '@app/shared/log';
import { instrumentBus, instrumentStore, Metrics, startTracing } from '@app/shared/observability';
import { serveServices } from '@app/shared/runtime';
import { EmbeddedStore } from '@app/shared/store';
import { BENCH_USER_ID, ensureBenchUsers } from '../lib.mjs';

// One bench user is the whole load of a throughput section: its admission bounds and cost budget
// (docs/http.md "Fair use") are lifted, the gate itself still runs. BENCH_ADMISSION=default keeps
// the product's defaults (the fairness section).
const LIFTED = {
  ADMISSION_IN_FLIGHT: '10000', ADMISSION_QUEUE: '100000', ADMISSION_EXPENSIVE_IN_FLIGHT: '10000',
  COST_BUDGET_MS: '3600000', COST_REFILL_MS_PER_SECOND: '1000000',
};
const config = loadConfig(GatewayConfig, { ...(process.env.BENCH_ADMISSION === 'default' ? {} : LIFTED), ...process.env, HOST: '127.0.0.1', PORT: '0' });
const log = createLogger({ name: 'bench-all-in-one', level: config.LOG_LEVEL });
const started = Date.now();
const rawStore = await EmbeddedStore.open({ dir: config.DATA_DIR, log, sync: config.EMBEDDED_SYNC });
const loadMs = Date.now() - started;
// metrics and traces as main.ts has them: on by default, tracing only when asked
const metrics = config.METRICS_ENABLED ? new Metrics() : undefined;
let tracing;
let spans;
if (process.env.BENCH_TRACING === 'memory') {
  const { InMemorySpanExporter } = await import('@opentelemetry/sdk-trace-base');
  spans = new InMemorySpanExporter();
  tracing = await startTracing({ serviceName: 'bench', exporter: spans });
  setInterval(() => spans.reset(), 1000).unref();
}
const tools = { metrics, tracer: tracing?.tracer };
const bus = instrumentBus(new MemoryBus(), tools);
const traced = instrumentStore(rawStore, tools);
// with the services' background work, as `npm start` runs them (the query service's outbox relay numbers the
// events; traced, its passes link to the writes)
const served = await serveServices([tasksService, boardsService, sprintsService, queryService], {
  bus, store: traced, log, metrics, background: true, tracer: tools.tracer,
});
// the users the bench's tokens name (a signed token for no user is a 401): the bench user, and BENCH_USERS (comma list)
await ensureBenchUsers(rawStore, [BENCH_USER_ID, ...(process.env.BENCH_USERS ?? '').split(',').filter(Boolean)]);
const app = await buildApp({ bus, store: traced, clock: systemClock, log, config, metrics, tracer: tools.tracer });
await app.listen({ port: 0, host: '127.0.0.1' });
console.log(`READY ${JSON.stringify({ port: app.server.address().port, loadMs })}`);

process.once('SIGTERM', async () => {
  await app.close();
  for (const s of served) await s.close();
  await bus.close();
  await traced.close();
  await tracing?.shutdown();
  process.exit(0);
});
