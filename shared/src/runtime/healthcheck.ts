// Container health check of a bus service: `node shared/dist/runtime/healthcheck.js <service>`.
// Sends `<service>.health` over NATS_URL; exits 0 when a replica answers, 1 otherwise.
import { HealthOps } from '../contracts/index.js';
import { NatsBus } from '../bus/index.js';
import { silentLogger } from '../log/index.js';

const name = process.argv[2] as keyof typeof HealthOps | undefined;
if (!name || !(name in HealthOps) || !process.env.NATS_URL) {
  console.error('usage: NATS_URL=… healthcheck.js tasks|boards|sprints|query');
  process.exit(2);
}
try {
  const bus = await NatsBus.connect({ servers: process.env.NATS_URL, prefix: process.env.BUS_PREFIX ?? '', name: 'healthcheck', log: silentLogger() });
  await bus.request(HealthOps[name], {});
  await bus.close();
  process.exit(0);
} catch (e) {
  console.error(`${name} unhealthy: ${(e as Error).message}`);
  process.exit(1);
}
