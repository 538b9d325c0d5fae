// Section `distributed`: gateway and tasks service as their own processes over a private
// nats-server, beside the transport floor (Fastify → NatsBus.requestText → echo responder).
import { accessToken, freePort, http, JWT_SECRET, measure, startNats, TABLE_HEAD, versusBase } from '../lib.mjs';
import { CREATE_BODY } from './http.mjs';

/**
 * GET /api/v1/tasks/{id} at c=10 and c=50 through gateway process → NATS → tasks process (own
 * DATA_DIRs), each beside the floor at the same concurrency. Target: distributed ≥ 0.7× floor (c=10).
 */
export async function distributedSection(scope) {
  const natsUrl = await startNats(scope);
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  // each process on its own embedded store: the documented opt-in for separately started processes
  const common = { NATS_URL: natsUrl, JWT_SECRET, HOST: '127.0.0.1', EMBEDDED_STANDALONE: '1' };
  await scope.process('services/gateway/dist/main.js', {
    env: { ...common, BUS_PREFIX: 'bench', PORT: String(port), DATA_DIR: scope.tempDir('bench-gw-') },
    ready: async () => (await http(base, 'GET', '/health/ready', { ok: false })).status === 200,
  });
  // the gateway keeps its own users here: register one (a signed token for no user is a 401)
  const registered = await http(base, 'POST', '/auth/v2/register', { body: { username: 'bench-distributed', password: 'bench-password-0123' } });
  const token = accessToken(registered.json.userId);
  let created;
  await scope.process('services/tasks/dist/main.js', {
    env: { ...common, BUS_PREFIX: 'bench', DATA_DIR: scope.tempDir('bench-tasks-') },
    ready: async () => {
      const res = await http(base, 'POST', '/api/v1/tasks', { token, body: CREATE_BODY, ok: false });
      created = res.status === 201 ? res.json : undefined;
      return created;
    },
  });
  const path = `/api/v1/tasks/${created.id}`;
  await http(base, 'POST', `${path}/notes`, { token, body: { content: 'Draft is in the wiki.' } });
  const detail = await http(base, 'GET', path, { token });

  const floorEnv = { NATS_URL: natsUrl, BUS_PREFIX: 'floor' };
  await scope.process('bench/servers/echo.mjs', { env: { ...floorEnv, BODY: detail.text } });
  const floor = await scope.process('bench/servers/floor.mjs', { env: floorEnv });
  const floorUrl = `http://127.0.0.1:${floor.info.port}${path}`;
  const auth = { authorization: `Bearer ${token}` };

  const { floor10, dist10, floor50, dist50 } = await measure({
    floor10: { url: floorUrl },
    dist10: { url: base + path, headers: auth },
    floor50: { url: floorUrl, connections: 50 },
    dist50: { url: base + path, headers: auth, connections: 50 },
  }, { reps: 4 });

  const { rows, verdict } = versusBase(
    { baseName: 'floor: Fastify → NatsBus → echo', oursName: 'distributed GET /tasks/{id}', base10: floor10, ours10: dist10, base50: floor50, ours50: dist50 },
    { min: 0.7, text: 'distributed GET detail ≥ 0.7× the transport floor (c=10)' },
  );
  return [
    'Processes: nats-server, gateway, tasks service (own DATA_DIRs), floor Fastify, echo responder; ratio = req/s ÷ the floor row above it.',
    '',
    TABLE_HEAD,
    ...rows,
    '',
    ...verdict,
  ];
}
