// Echo responder of the transport floor: serves `TasksOps.get` on a NatsBus through the shared
// `dispatch` (decode → validate → handler → encode), the handler returning a canned task detail.
// Env: NATS_URL, BUS_PREFIX, BODY (the task detail JSON). Prints `READY {}` once subscribed.
import { bind, NatsBus } from '@app/shared/bus';
import { TasksOps } from '@app/shared/contracts';
import { createLogger } from '@app/shared/log';

const log = createLogger({ name: 'bench-echo', level: process.env.LOG_LEVEL ?? 'warn' });
const canned = JSON.parse(process.env.BODY ?? '{}');
const bus = await NatsBus.connect({ servers: process.env.NATS_URL, prefix: process.env.BUS_PREFIX, name: 'bench-echo', log });
const served = await bus.serve([bind(TasksOps.get, async () => canned)], { queue: 'tasks', log });
console.log('READY {}');
process.once('SIGTERM', async () => {
  await served.close();
  await bus.close();
  process.exit(0);
});
