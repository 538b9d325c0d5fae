// Server CPU per request (docs/bench.md "The move's cost"): utime + stime of each all-in-one server
// process (/proc/<pid>/stat, 10 ms ticks) over a fixed number of requests at c=10, several builds
// interleaved, median of the runs. A durable write's req/s at c=10 is bounded by the WAL fsync it
// waits for, which swings with the disk's other users; its CPU does not.
//
//   node bench/cpu.mjs <writes|board> <runs> <label>=<checkout>[:<EMBEDDED_SYNC>|:<VAR>=<value>]... ...
//   node bench/cpu.mjs writes 5 after=. after-normal=.:normal base=/tmp/writes-base-79b95a9
//   ONLY=detail,move node bench/cpu.mjs writes 5 off=.:METRICS_ENABLED=false on=. traced=.:BENCH_TRACING=memory
//   node bench/cpu.mjs events 5 after=. base=/tmp/base
//
// `writes`: a fresh data dir per server with the writes section's 200 tasks and Doing/Review board
// of 200 cards (seeded over HTTP); specs GET detail, PATCH (a new title each), move. `board`: the
// board section's seeded store (bench/seed.mjs board, 30,000 tasks); specs GET detail, move. `events`: a
// fresh data dir with 100 tasks given 1,000 PATCHes over HTTP (1,100 events of the caller); specs
// GET detail and the feed page `GET /api/v1/events?after=100&limit=100` (the events section's page).
// Env: N (requests per run, default 4000), ONLY (comma-separated specs). Loopback only, bounded
// (autocannon `amount`, 10 s timeout per request); every process and temp dir is removed at the end.
import autocannon from 'autocannon';
import { randomUUID } from 'node:crypto';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { accessToken, BENCH_USER_ID, cpuTimeUs, http, JWT_SECRET, Scope } from './lib.mjs';
import { moveRequests } from './sections/board.mjs';
import { CREATE_BODY } from './sections/http.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
const [kind, runsArg, ...pairs] = process.argv.slice(2);
if (!['writes', 'board', 'events'].includes(kind) || !(Number(runsArg) > 0) || pairs.length === 0) {
  console.error('usage: node bench/cpu.mjs <writes|board|events> <runs> <label>=<checkout>[:normal|full][:VAR=value]... ...');
  process.exit(2);
}
const RUNS = Number(runsArg);
const N = Number(process.env.N ?? 4000);

/** PATCH requests giving a different task of `tasks` a new title each time. */
function patchRequests(tasks, headers) {
  let n = 0;
  return [{
    method: 'PATCH',
    headers: { 'content-type': 'application/json', ...headers },
    setupRequest: (req) => ({ ...req, path: `/api/v1/tasks/${tasks[n % tasks.length].id}`, body: JSON.stringify({ title: `title ${n++}` }) }),
  }];
}

/** Starts the all-in-one server of `checkout` on `dir` with the extra environment `extra`. */
async function start(scope, checkout, extra, dir) {
  const env = { DATA_DIR: dir, JWT_SECRET, ...extra };
  const p = await scope.process(join(resolve(checkout), 'bench/servers/all-in-one.mjs'), { env });
  return { base: `http://127.0.0.1:${p.info.port}`, pid: p.pid };
}

/** A server of `checkout` with its data and load specs ({name: {url, headers?, requests?}}). */
async function prepare(scope, checkout, extra) {
  if (kind === 'board') {
    const dir = scope.tempDir('bench-cpu-board-');
    const seeder = await scope.process(join(HERE, 'seed.mjs'), { args: ['board', dir] });
    await seeder.stop(); // it exits by itself after READY
    const s = await start(scope, checkout, extra, dir);
    const headers = { authorization: `Bearer ${accessToken(seeder.info.userId)}` };
    return { ...s, specs: {
      detail: { url: `${s.base}/api/v1/tasks/${seeder.info.detailId}`, headers },
      move: { url: s.base, requests: moveRequests(seeder.info.boardId, seeder.info.movable, headers) },
    } };
  }
  const s = await start(scope, checkout, extra, scope.tempDir('bench-cpu-writes-'));
  const token = accessToken(BENCH_USER_ID);
  const headers = { authorization: `Bearer ${token}` };
  if (kind === 'events') {
    const ids = [];
    for (let i = 0; i < 100; i++) ids.push((await http(s.base, 'POST', '/api/v1/tasks', { token, body: { ...CREATE_BODY, title: `feed ${i}` } })).json.id);
    for (let i = 0; i < 1_000; i++) await http(s.base, 'PATCH', `/api/v1/tasks/${ids[i % ids.length]}`, { token, body: { title: `feed title ${i}` } });
    return { ...s, specs: {
      detail: { url: `${s.base}/api/v1/tasks/${ids[0]}`, headers },
      feed: { url: `${s.base}/api/v1/events?after=100&limit=100`, headers },
    } };
  }
  const tasks = [];
  for (let i = 0; i < 200; i++) tasks.push((await http(s.base, 'POST', '/api/v1/tasks', { token, body: { ...CREATE_BODY, title: `patch ${i}` } })).json);
  const columns = [{ id: 'doing', name: 'Doing', query: "status = 'doing'" }, { id: 'review', name: 'Review', query: "status = 'review'" }];
  const board = (await http(s.base, 'POST', '/api/v1/boards', { token, body: { name: 'cpu bench', board_type: 'private', columns } })).json;
  const movable = [];
  for (let i = 0; i < 200; i++) {
    movable.push([(await http(s.base, 'POST', `/api/v1/boards/${board.id}/tasks`, { token, body: { title: `card ${i}`, status: 'doing' } })).json.id, 'doing']);
  }
  return { ...s, specs: {
    detail: { url: `${s.base}/api/v1/tasks/${tasks[0].id}`, headers },
    patch: { url: s.base, requests: patchRequests(tasks, headers) },
    move: { url: s.base, requests: moveRequests(board.id, movable, headers) },
    create: { url: s.base, requests: createRequests(headers, 'x-bench-nonce') },
    createKey: { url: s.base, requests: createRequests(headers, 'idempotency-key') },
    batch: { url: `${s.base}/api/v1/tasks/batch`, method: 'POST', headers, body: BATCH_BODY, perRequest: 100 },
  } };
}

/** The writes section's 100-task batch create body. */
const BATCH_BODY = JSON.stringify({ tasks: Array.from({ length: 100 }, (_, i) => ({ ...CREATE_BODY, title: `batch ${i}` })) });

/** Creates with a new UUID in header `perRequest` each time (the writes section's nonce and keyed creates). */
function createRequests(headers, perRequest) {
  return [{
    method: 'POST',
    path: '/api/v1/tasks',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(CREATE_BODY),
    setupRequest: (req) => ({ ...req, headers: { ...req.headers, [perRequest]: randomUUID() } }),
  }];
}

/** One run of `amount` requests of a spec: the server's CPU µs per request (per task for a batch: `perRequest`). */
async function run(server, spec, amount) {
  const before = cpuTimeUs(server.pid);
  // a batch run: twice the tasks of a single-request run (`amount` ÷ 100 requests would make its CPU a handful of ticks)
  if (spec.perRequest) amount = Math.max(50, Math.round((2 * amount) / spec.perRequest));
  const r = await autocannon({
    url: spec.url, connections: 10, amount, timeout: 10, ...(spec.method ? { method: spec.method, body: spec.body } : {}),
    headers: { 'content-type': 'application/json', ...(spec.headers ?? {}) },
    ...(spec.requests ? { requests: spec.requests } : {}),
  });
  if (r.non2xx + r.errors > 0) throw new Error(`${r.non2xx} non-2xx and ${r.errors} errors`);
  return (cpuTimeUs(server.pid) - before) / r.requests.total / (spec.perRequest ?? 1);
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const scope = new Scope();
try {
  const servers = [];
  for (const pair of pairs) {
    const label = pair.slice(0, pair.indexOf('='));
    const [checkout, ...opts] = pair.slice(pair.indexOf('=') + 1).split(':');
    // `normal`/`full` is EMBEDDED_SYNC; `VAR=value` any other variable of the server
    const extra = Object.fromEntries(opts.map((o) => (o.includes('=') ? [o.slice(0, o.indexOf('=')), o.slice(o.indexOf('=') + 1)] : ['EMBEDDED_SYNC', o])));
    const s = await prepare(scope, checkout, extra);
    const only = process.env.ONLY?.split(',');
    if (only) for (const name of Object.keys(s.specs)) if (!only.includes(name)) delete s.specs[name];
    servers.push({ label, ...s });
  }
  for (const s of servers) for (const spec of Object.values(s.specs)) await run(s, spec, 1_500); // warm-up
  const results = new Map();
  for (let i = 0; i < RUNS; i++) {
    for (const s of servers) {
      for (const [name, spec] of Object.entries(s.specs)) {
        const key = `${s.label} ${name}`;
        results.set(key, [...(results.get(key) ?? []), await run(s, spec, N)]);
      }
    }
  }
  console.log(`| server, request (${kind}) | CPU µs per request, median | runs |\n| --- | ---: | --- |`);
  for (const [key, runs] of results) console.log(`| ${key} | ${median(runs).toFixed(0)} | ${runs.map((r) => r.toFixed(0)).join(' ')} |`);
  for (const s of servers) {
    const runsOf = (name) => results.get(`${s.label} ${name}`);
    // paired: the ratio of the i-th runs of the two specs (taken one after the other), median (spread),
    // so a machine whose speed drifts between runs moves both sides of each ratio alike
    const ratio = (top, bottom, label) => {
      if (!runsOf(top) || !runsOf(bottom)) return [];
      const rs = runsOf(top).map((t, i) => t / runsOf(bottom)[i]);
      return [`${label} ${median(rs).toFixed(2)}× (${Math.min(...rs).toFixed(2)}–${Math.max(...rs).toFixed(2)})`];
    };
    const parts = [
      ...['move', 'patch', 'feed'].flatMap((n) => ratio(n, 'detail', `${n} ÷ detail`)),
      // the writes targets in CPU: a keyed create ÷ a plain one (≤ 1.15×), a single create ÷ a batched task (≥ 5×)
      ...ratio('createKey', 'create', 'createKey ÷ create'),
      ...ratio('create', 'batch', 'create ÷ batched task'),
    ];
    if (parts.length > 0) console.log(`${s.label}: ${parts.join(', ')}`);
  }
} finally {
  await scope.close();
}
