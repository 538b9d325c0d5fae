// Section `fairness`: one signed-in user attacking with valid but costly requests, while a second
// user runs a sequential read loop (docs/bench.md "Fairness"; docs/http.md "Fair use"). The
// all-in-one server on 127.0.0.1 with the attacker's 50,000 tasks (a 10,000-card board among
// them); each attack runs a few seconds and stops by itself. Prints the other user's p50/p99
// under each attack ÷ its baseline, its errors, and what the attacker's requests got.
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { accessToken, ensureBenchUsers, http, JWT_SECRET, pct, target } from '../lib.mjs';

/** Seconds each attack (and the baseline) runs. */
const ATTACK_S = 3;
/** Longest wait for one request, ms: a request still running then counts as an error. */
const REQUEST_TIMEOUT_MS = 15_000;
/** Attacker tasks besides the 10,000 cards of its board. */
const EXTRA_TASKS = 40_000;

const VOWELS = 'aeiouxyzbcdfg'.split('').map((c) => `%${c}`).join('');

/** The attacks of the probe: name, parallel workers, and the request each worker repeats. */
function attacks(ctx) {
  const { jwt, token, boardId, yearAgo, today } = ctx;
  const query = (auth, body) => ({ method: 'POST', path: '/api/v1/tasks/query', auth, body });
  const pages = (i) => 200 + (i % 50);
  const year = `from=${yearAgo}&to=${today}`;
  const mcp = (auth, args) => ({ method: 'POST', path: '/mcp', auth, mcp: true, body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'find_tasks', arguments: args } } });
  const ilike = `NOT (description ILIKE '${VOWELS}%zzz') ORDER BY description DESC`;
  return [
    ['NOT (description ILIKE \'%a%e…%zzz\') ORDER BY description DESC, pageSize 200, pages 200–249', 6, (i) => query(jwt, { query: ilike, pageSize: 200, page: pages(i) })],
    ['the same through an access token', 6, (i) => query(token, { query: ilike, pageSize: 200, page: pages(i) })],
    ['the same through MCP find_tasks, 10 in parallel', 10, (i) => mcp(jwt, { query: ilike, pageSize: 200, page: pages(i) })],
    ["description !~ 'zzz' ORDER BY description DESC, pageSize 200, page 1", 6, () => query(jwt, { query: "description !~ 'zzz' ORDER BY description DESC", pageSize: 200 })],
    ["NOT (description ILIKE '%a%e%i%o%u%zzz'), pageSize 200 (within the limits)", 6, () => query(jwt, { query: "NOT (description ILIKE '%a%e%i%o%u%zzz')", pageSize: 200 })],
    ['60 nested parentheses with OR', 6, () => query(jwt, { query: `${'('.repeat(60)}title ~ 'a' OR description ~ 'b'${')'.repeat(60)}` })],
    ['cycle-time and flow over a year (365 daily snapshots, 5,000 finished cards)', 6, (i) => ({ method: 'GET', path: `/api/v1/boards/${boardId}/${i % 2 ? 'cycle-time' : 'flow'}?${year}`, auth: jwt })],
    ['cf.x IN (1,000 values)', 6, () => query(jwt, { query: `cf.x IN (${Array.from({ length: 1000 }, (_, i) => i).join(',')})` })],
    ['board summary of the 10,000-card board', 6, () => ({ method: 'GET', path: `/api/v1/boards/${boardId}/summary`, auth: jwt })],
    ['ordinary MCP find_tasks (JWT), 6 in parallel as fast as answered', 6, () => mcp(jwt, { query: "status = 'todo' ORDER BY updated_at DESC", pageSize: 20 })],
  ];
}

/** One request; resolves with its HTTP status (0: no answer in time) and duration in ms. */
async function send(base, req) {
  const started = performance.now();
  try {
    const headers = { authorization: `Bearer ${req.auth}`, ...(req.body === undefined ? {} : { 'content-type': 'application/json' }), ...(req.mcp ? { accept: 'application/json, text/event-stream' } : {}) };
    const res = await fetch(base + req.path, { method: req.method, headers, body: req.body === undefined ? undefined : JSON.stringify(req.body), signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
    const text = await res.text();
    let status = res.status;
    // an MCP tool error is a 200 carrying the error body: count it under the error's status
    if (req.mcp && status === 200 && text.includes('"isError":true')) {
      const inner = JSON.parse(JSON.parse(text).result.content[0].text);
      status = inner.code === 'RATE_LIMITED' ? 429 : inner.code?.startsWith('QUERY_') && inner.code !== 'QUERY_TIMEOUT' ? 400 : 500;
    }
    return { status, ms: performance.now() - started };
  } catch {
    return { status: 0, ms: performance.now() - started };
  }
}

/** Runs `fn` in a loop until `until` (performance.now() ms); collects its answers. */
async function loop(until, fn) {
  const out = [];
  for (let i = 0; performance.now() < until; i++) out.push(await fn(i));
  return out;
}

/** The other user's sequential reads for `seconds`, beside `workers` attacker loops (none for the baseline). */
async function round(base, victim, seconds, workers = 0, request = undefined) {
  const until = performance.now() + seconds * 1000;
  const attackers = Array.from({ length: workers }, (_, w) => loop(until, (i) => send(base, request(i * workers + w))));
  // let the attack start before measuring
  await new Promise((r) => setTimeout(r, workers ? 100 : 0));
  const reads = await loop(until, () => send(base, victim));
  const attacked = (await Promise.all(attackers)).flat();
  return { reads, attacked };
}

const fmt = (x) => (x >= 100 ? x.toFixed(0) : x.toFixed(1));

export async function fairnessSection(scope) {
  const dir = scope.tempDir('bench-fairness-');
  const boardSeeder = await scope.process('bench/seed.mjs', { args: ['flow', dir], timeoutMs: 600_000 });
  await boardSeeder.stop();
  const { userId: attacker, boardId, yearAgo, today } = boardSeeder.info;
  const seeder = await scope.process(join('bench/sections/fairness.mjs'), { args: ['seed', dir, attacker], timeoutMs: 600_000 });
  await seeder.stop();
  const { victim, victimTaskId } = seeder.info;
  const server = await scope.process('bench/servers/all-in-one.mjs', { env: { DATA_DIR: dir, JWT_SECRET, BENCH_ADMISSION: 'default' }, timeoutMs: 300_000 });
  const base = `http://127.0.0.1:${server.info.port}`;
  const jwt = accessToken(attacker);
  const token = (await http(base, 'POST', '/api/v1/tokens', { token: jwt, body: { name: 'attacker', scopes: ['read'] } })).json.token;
  const victimRead = { method: 'GET', path: `/api/v1/tasks/${victimTaskId}`, auth: accessToken(victim) };
  // warm: the first reads load indexes and caches
  await round(base, victimRead, 1);

  const baseline = await round(base, victimRead, ATTACK_S);
  const b50 = pct(baseline.reads.map((r) => r.ms), 50);
  const b99 = pct(baseline.reads.map((r) => r.ms), 99);
  const lines = [
    `All-in-one server, embedded store; the attacker owns ${(10_000 + EXTRA_TASKS).toLocaleString('en')} tasks (a 10,000-card board among them, with a year of daily flow snapshots and 5,000 finished cards), the other user 100.`,
    `The other user reads one of its tasks in a sequential loop (\`GET /api/v1/tasks/{id}\`); each attack runs ${ATTACK_S} s. Baseline: p50 ${fmt(b50)} ms, p99 ${fmt(b99)} ms, ${baseline.reads.length} reads.`,
    'Attacker columns: its requests answered 2xx, refused as too costly (400 `QUERY_TOO_COSTLY`), refused by admission (429), and other answers (5xx, or none in 15 s).',
    '',
    '| attack | workers | other user p50 ms | p99 ms | p99 ÷ baseline | other user errors | attacker 2xx | 400 | 429 | other |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  let worstP99 = 0;
  let victimErrors = 0;
  for (const [name, workers, request] of attacks({ jwt, token, boardId, yearAgo, today })) {
    const { reads, attacked } = await round(base, victimRead, ATTACK_S, workers, request);
    const ms = reads.map((r) => r.ms);
    const p50 = pct(ms, 50);
    const p99 = pct(ms, 99);
    const errors = reads.filter((r) => r.status !== 200).length;
    worstP99 = Math.max(worstP99, p99);
    victimErrors += errors;
    const count = (f) => attacked.filter(f).length;
    lines.push(`| ${name} | ${workers} | ${fmt(p50)} | ${fmt(p99)} | ${(p99 / b99).toFixed(1)}× | ${errors} | ${count((r) => r.status >= 200 && r.status < 300)} | ${count((r) => r.status === 400)} | ${count((r) => r.status === 429)} | ${count((r) => r.status === 0 || r.status >= 500)} |`);
    // let the last slow answers of the attack drain before the next one
    await new Promise((r) => setTimeout(r, 500));
  }
  lines.push(
    '',
    target(worstP99 <= 100, "the other user's p99 ≤ 100 ms under every attack", `worst ${fmt(worstP99)} ms`),
    target(victimErrors === 0, 'the other user sees 0 errors', `${victimErrors}`),
  );
  return lines;
}

// As a process: `node bench/sections/fairness.mjs seed <dir> <attacker id>` adds the attacker's
// other tasks and the other user (with 100 tasks) to a seeded board folder, and prints `READY <json>`.
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [kind, dir, attacker] = process.argv.slice(2);
  if (kind !== 'seed' || !dir || !attacker) {
    console.error('usage: node bench/sections/fairness.mjs seed <dir> <attacker id>');
    process.exit(2);
  }
  const { EmbeddedStore, Collections } = await import('@app/shared/store');
  const { insertChunks, rng, taskDoc } = await import('../seed.mjs');
  const store = await EmbeddedStore.open({ dir });
  const r = rng(46);
  await insertChunks(store, Collections.tasks, Array.from({ length: EXTRA_TASKS }, () => taskDoc(r, attacker)));
  const victim = randomUUID();
  const own = Array.from({ length: 100 }, () => taskDoc(r, victim, { deleted: false }));
  await insertChunks(store, Collections.tasks, own);
  await ensureBenchUsers(store, [attacker, victim]);
  await store.close();
  console.log(`READY ${JSON.stringify({ victim, victimTaskId: own[0]._id })}`);
  process.exit(0);
}
