// Section `http`: the all-in-one process vs a bare Fastify process returning the same JSON.
import { join } from 'node:path';
import { accessToken, BENCH_USER_ID, http, JWT_SECRET, measure, row, TABLE_HEAD, versusBase } from '../lib.mjs';

/** A task create body like a client sends. */
export const CREATE_BODY = {
  title: 'Write the release notes for 2.4',
  description: 'Cover the new board summary and the column read. Link the migration guide.',
  status: 'todo',
  tags: ['docs', 'q4'],
  metadata: { order: 12.5, 'cf.priority': 2 },
};

/**
 * Starts the all-in-one server of `root` (a checkout with its build; '' = this one) on a fresh
 * data dir with one task and a note on it, created through HTTP. Returns {base, token, path (the
 * task's detail path), detail and created (the HTTP answers, {status, text, json})}.
 */
export async function httpServer(scope, root = '') {
  const dir = scope.tempDir('bench-http-');
  const aio = await scope.process(join(root, 'bench/servers/all-in-one.mjs'), { env: { DATA_DIR: dir, JWT_SECRET } });
  const base = `http://127.0.0.1:${aio.info.port}`;
  const token = accessToken(BENCH_USER_ID);
  const created = await http(base, 'POST', '/api/v1/tasks', { token, body: CREATE_BODY });
  const path = `/api/v1/tasks/${created.json.id}`;
  await http(base, 'POST', `${path}/notes`, { token, body: { content: 'Draft is in the wiki.' } });
  const detail = await http(base, 'GET', path, { token });
  return { base, token, path, detail, created };
}

/**
 * GET /api/v1/tasks/{id} at c=10 and c=50 and POST /api/v1/tasks at c=10, each on the bare baseline
 * and on the all-in-one server (interleaved runs, medians). Target: all-in-one GET ≥ 0.5× bare (c=10).
 */
export async function httpSection(scope) {
  const { base, token, path, detail, created } = await httpServer(scope);
  const bare = await scope.process('bench/servers/bare.mjs', { env: { BODY: detail.text, CREATED: created.text } });
  const bareBase = `http://127.0.0.1:${bare.info.port}`;
  const auth = { authorization: `Bearer ${token}` };
  const post = { method: 'POST', body: JSON.stringify(CREATE_BODY), headers: auth };

  const { bareGet10, aioGet10, bareGet50, aioGet50, barePost, aioPost } = await measure({
    bareGet10: { url: bareBase + path },
    aioGet10: { url: base + path, headers: auth },
    bareGet50: { url: bareBase + path, connections: 50 },
    aioGet50: { url: base + path, headers: auth, connections: 50 },
    barePost: { url: `${bareBase}/api/v1/tasks`, ...post },
    aioPost: { url: `${base}/api/v1/tasks`, ...post },
  });

  const { rows, verdict } = versusBase(
    { baseName: 'bare Fastify GET /tasks/{id}', oursName: 'all-in-one GET /tasks/{id}', base10: bareGet10, ours10: aioGet10, base50: bareGet50, ours50: aioGet50 },
    { min: 0.5, text: 'all-in-one GET detail ≥ 0.5× bare (c=10)' },
  );
  return [
    `Task detail body ${detail.text.length} bytes (with one note); ratio = req/s ÷ the bare row above it.`,
    '',
    TABLE_HEAD,
    ...rows,
    row('bare Fastify POST /tasks c=10', barePost, barePost),
    row('all-in-one POST /tasks c=10', aioPost, barePost),
    '',
    ...verdict,
  ];
}
