// Transport floor of the distributed deployment: a Fastify process whose only route does one
// `bus.requestText(TasksOps.get, …)` on a NatsBus (no auth, no schemas) and passes the text on.
// Env: NATS_URL, BUS_PREFIX. Prints `READY {"port":…}`.
import { randomUUID } from 'node:crypto';
import Fastify from 'fastify';
import { NatsBus } from '@app/shared/bus';
import { TasksOps } from '@app/shared/contracts';
import { createLogger } from '@app/shared/log';

const log = createLogger({ name: 'bench-floor', level: process.env.LOG_LEVEL ?? 'warn' });
const bus = await NatsBus.connect({ servers: process.env.NATS_URL, prefix: process.env.BUS_PREFIX, name: 'bench-floor', log });
const app = Fastify({ logger: false });
app.get('/api/v1/tasks/:id', async (req, reply) => {
  const text = await bus.requestText(TasksOps.get, { taskId: req.params.id }, { requestId: randomUUID(), userId: 'bench-user' });
  return reply.type('application/json').send(text);
});
await app.listen({ port: 0, host: '127.0.0.1' });
console.log(`READY ${JSON.stringify({ port: app.server.address().port })}`);
process.once('SIGTERM', async () => {
  await app.close();
  await bus.close();
  process.exit(0);
});
