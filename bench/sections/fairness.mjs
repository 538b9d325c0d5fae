// Section `fairness`: one signed-in user attacking with valid but costly requests, while a second
// user runs a sequential read loop (docs/bench.md "Fairness"; docs/http.md "Fair use"). The
// all-in-one server on 127.0.0.1 with the attacker's 50,000 tasks (a 10,000-card board among
// them) and the product's admission defaults; each attack runs a few seconds and stops by itself,
// and starts with the attacker's cost budget full (the section waits for the refill in between).
// Prints the other user's p50/p99 under each attack ÷ its baseline, its errors, and what the
// attacker's requests got.
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';
import { CommonConfig } from '@app/shared/config';
import { ErrorCodes } from '@app/shared/errors';
import { accessToken, ensureBenchUsers, http, JWT_SECRET, pct, target } from '../lib.mjs';

/** Seconds each attack (and the baseline) runs. */
const ATTACK_S = 3;
/** Longest wait for one request, ms: a request still running then counts as "other". */
const REQUEST_TIMEOUT_MS = 15_000;
/** Attacker tasks besides the 10,000 cards of its board. */
const EXTRA_TASKS = 40_000;
/**
 * The cost budget the server runs with (docs/http.md "Fair use"): the defaults of
 * `shared/src/config`, passed to the server explicitly so the refill waits below agree with it.
 */
const BUDGET_MS = CommonConfig.properties.COST_BUDGET_MS.default;
const REFILL_MS_PER_S = CommonConfig.properties.COST_REFILL_MS_PER_SECOND.default;
/** Longest wait for a principal's budget to be positive again between attacks, s (the section stays bounded). */
const MAX_DEBT_WAIT_S = 60;
/** Event streams the attacker opens in the stream attack: the per-user bound (EVENT_STREAMS_PER_USER, default 5), and one more. */
const STREAMS = 6;
/** Description length of the stream attack's tasks, characters (the limit is 200,000). */
const LARGE_DESCRIPTION = 190_000;

const VOWELS = 'aeiouxyzbcdfg'.split('').map((c) => `%${c}`).join('');

/**
 * The attacks: name, the principal whose budget it spends (`jwt` or `token`), parallel workers,
 * the request each worker repeats, and for the stream attack the event streams it holds open.
 */
function attacks(ctx) {
  const { boardId, yearAgo, today } = ctx;
  const query = (auth, body) => ({ method: 'POST', path: '/api/v1/tasks/query', auth, body });
  const pages = (i) => 200 + (i % 50);
  const year = `from=${yearAgo}&to=${today}`;
  // MCP tool arguments are snake_case (mcp/tools.ts): find_tasks takes query, sort, page, page_size, view
  const mcp = (auth, args) => ({ method: 'POST', path: '/mcp', auth, mcp: true, body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'find_tasks', arguments: args } } });
  const ilike = `NOT (description ILIKE '${VOWELS}%zzz') ORDER BY description DESC`;
  const large = 'lorem ipsum dolor sit amet '.repeat(Math.ceil(LARGE_DESCRIPTION / 27)).slice(0, LARGE_DESCRIPTION);
  return [
    { name: 'NOT (description ILIKE \'%a%e…%zzz\') ORDER BY description DESC, pageSize 200, pages 200–249', as: 'jwt', workers: 6, request: (i, a) => query(a, { query: ilike, pageSize: 200, page: pages(i) }) },
    { name: 'the same through an access token', as: 'token', workers: 6, request: (i, a) => query(a, { query: ilike, pageSize: 200, page: pages(i) }) },
    { name: 'the same through MCP find_tasks, 10 in parallel', as: 'jwt', workers: 10, request: (i, a) => mcp(a, { query: ilike, page_size: 200, page: pages(i) }) },
    { name: "description !~ 'zzz' ORDER BY description DESC, pageSize 200, page 1", as: 'jwt', workers: 6, request: (_, a) => query(a, { query: "description !~ 'zzz' ORDER BY description DESC", pageSize: 200 }) },
    { name: "NOT (description ILIKE '%a%e%i%o%u%zzz'), pageSize 200 (within the limits)", as: 'jwt', workers: 6, request: (_, a) => query(a, { query: "NOT (description ILIKE '%a%e%i%o%u%zzz')", pageSize: 200 }) },
    { name: '60 nested parentheses with OR', as: 'jwt', workers: 6, request: (_, a) => query(a, { query: `${'('.repeat(60)}title ~ 'a' OR description ~ 'b'${')'.repeat(60)}` }) },
    { name: 'cycle-time and flow over a year (365 daily snapshots, 5,000 finished cards)', as: 'jwt', workers: 6, request: (i, a) => ({ method: 'GET', path: `/api/v1/boards/${boardId}/${i % 2 ? 'cycle-time' : 'flow'}?${year}`, auth: a }) },
    { name: 'cf.x IN (1,000 values)', as: 'jwt', workers: 6, request: (_, a) => query(a, { query: `cf.x IN (${Array.from({ length: 1000 }, (_, i) => i).join(',')})` }) },
    { name: 'board summary of the 10,000-card board', as: 'jwt', workers: 6, request: (_, a) => ({ method: 'GET', path: `/api/v1/boards/${boardId}/summary`, auth: a }) },
    { name: 'ordinary MCP find_tasks (JWT), 6 in parallel as fast as answered', as: 'jwt', workers: 6, request: (_, a) => mcp(a, { query: "status = 'todo' ORDER BY updated_at DESC", page_size: 20 }) },
    // last: its tasks would otherwise be in the other attacks' scans
    {
      name: `its event streams (it opens ${STREAMS}, one past the per-user bound) while 4 loops write tasks of ${(LARGE_DESCRIPTION / 1000).toFixed(0)},000-character descriptions`, as: 'jwt', workers: 4, streams: STREAMS,
      request: (i, a) => ({ method: 'POST', path: '/api/v1/tasks', auth: a, body: { title: `large ${i}`, description: large, tags: ['fairness-large'] } }),
    },
  ];
}

/** The HTTP status of an error code of the catalogue (`shared/src/errors/codes.ts`), or undefined for a code it lacks. */
const statusOfCode = (code) => (typeof code === 'string' && Object.hasOwn(ErrorCodes, code) ? ErrorCodes[code].status : undefined);

/** The error code (and admission reason) of an error body's text, for the notes; '' when it has none. */
function codeOf(text) {
  try {
    const body = JSON.parse(text);
    return body?.code ? `${body.code}${body.details?.reason ? ` (${body.details.reason})` : ''}` : '';
  } catch {
    return '';
  }
}

/**
 * One request; resolves with `{status, code, ms}`: the HTTP status (0: no answer in time), the
 * error code of a non-2xx answer ('' when none), and the duration in ms. An MCP tool error is a
 * 200 carrying the error body: it counts under its code's status from the error catalogue; a tool
 * error whose code the catalogue lacks, or an MCP answer that is neither a result nor a tool
 * error, counts as status -1 ("other"), with what came in `code`.
 */
async function send(base, req) {
  const started = performance.now();
  try {
    const headers = { authorization: `Bearer ${req.auth}`, ...(req.body === undefined ? {} : { 'content-type': 'application/json' }), ...(req.mcp ? { accept: 'application/json, text/event-stream' } : {}) };
    const res = await fetch(base + req.path, { method: req.method, headers, body: req.body === undefined ? undefined : JSON.stringify(req.body), signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
    const text = await res.text();
    const ms = performance.now() - started;
    if (!req.mcp || res.status !== 200) return { status: res.status, code: res.status >= 300 ? codeOf(text) : '', ms };
    const answer = JSON.parse(text);
    if (answer.result && answer.result.isError !== true) return { status: 200, code: '', ms };
    if (answer.result?.isError !== true) return { status: -1, code: `JSON-RPC error ${answer.error?.code ?? '?'}: ${answer.error?.message ?? text.slice(0, 80)}`, ms };
    const inner = answer.result.content?.[0]?.text ?? '';
    const code = codeOf(inner);
    return { status: statusOfCode(code.split(' ')[0]) ?? -1, code: code || `tool error without a code: ${inner.slice(0, 80)}`, ms };
  } catch (e) {
    return { status: 0, code: e?.name === 'TimeoutError' ? `no answer in ${REQUEST_TIMEOUT_MS / 1000} s` : `${e?.name ?? 'error'}: ${e?.message ?? e}`, ms: performance.now() - started };
  }
}

/** Runs `fn` in a loop until `until` (performance.now() ms); collects its answers. */
async function loop(until, fn) {
  const out = [];
  for (let i = 0; performance.now() < until; i++) out.push(await fn(i));
  return out;
}

/**
 * Opens the event stream as `auth` and counts the bytes it receives into `counter.bytes`;
 * resolves once the answer's head is in with `{answer, close}` (`close()` ends the stream and
 * resolves once its reading stopped).
 */
async function openStream(base, auth, counter) {
  const started = performance.now();
  const ac = new AbortController();
  let res;
  try {
    res = await fetch(`${base}/api/v1/events/stream`, { headers: { authorization: `Bearer ${auth}`, accept: 'text/event-stream' }, signal: ac.signal });
  } catch (e) {
    return { answer: { status: 0, code: `${e?.name}: ${e?.message}`, ms: performance.now() - started }, close: async () => {} };
  }
  const answer = { status: res.status, code: '', ms: performance.now() - started };
  if (res.status !== 200) {
    answer.code = codeOf(await res.text());
    return { answer, close: async () => {} };
  }
  const reader = res.body.getReader();
  const reading = (async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        counter.bytes += value.byteLength;
      }
    } catch {
      // aborted by close()
    }
  })();
  return { answer, close: async () => { ac.abort(); await reading; } };
}

/**
 * The other user's sequential reads for `seconds`, beside `workers` attacker loops of
 * `request(i)` (none for the baseline) and `streams` event streams of the attacker (`auth`) held
 * open meanwhile. Resolves with the reads, the attacker's answers and the bytes its streams received.
 */
async function round(base, victim, seconds, { workers = 0, request, streams = 0, auth } = {}) {
  const counter = { bytes: 0 };
  const opened = [];
  for (let i = 0; i < streams; i++) opened.push(await openStream(base, auth, counter));
  const until = performance.now() + seconds * 1000;
  const attackers = Array.from({ length: workers }, (_, w) => loop(until, (i) => send(base, request(i * workers + w))));
  // let the attack start before measuring
  await sleep(workers ? 100 : 0);
  const reads = await loop(until, () => send(base, victim));
  const attacked = (await Promise.all(attackers)).flat();
  for (const s of opened) await s.close();
  return { reads, attacked: [...opened.map((s) => s.answer), ...attacked], streamBytes: counter.bytes };
}

/**
 * Waits until principal `auth`'s cost budget is full again, and resolves with the seconds waited
 * and whether it could tell the budget was positive within {@link MAX_DEBT_WAIT_S}. First, while a
 * cheap expensive request (a query by an id that matches nothing) is refused with 429, it waits the
 * `Retry-After`; once one is admitted the budget is positive, and it waits for the refill of the
 * rest: at most the whole budget, and at most what the attack can have charged (`spentUpperMs`: the
 * sum of its admitted requests' durations, each request's charge being at most its duration).
 */
async function refill(base, auth, spentUpperMs) {
  const started = performance.now();
  const probe = { method: 'POST', path: '/api/v1/tasks/query', auth, body: { query: "id = 'no-such-task'", pageSize: 1 } };
  let positive = false;
  while (performance.now() - started < MAX_DEBT_WAIT_S * 1000) {
    const r = await fetch(base + probe.path, { method: 'POST', headers: { authorization: `Bearer ${auth}`, 'content-type': 'application/json' }, body: JSON.stringify(probe.body), signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
    await r.arrayBuffer();
    if (r.status !== 429) {
      positive = true;
      break;
    }
    await sleep(Math.max(1, Number(r.headers.get('retry-after')) || 1) * 1000);
  }
  if (positive) await sleep((Math.min(BUDGET_MS, spentUpperMs) / REFILL_MS_PER_S) * 1000);
  return { waitedS: (performance.now() - started) / 1000, positive };
}

const fmt = (x) => (x >= 100 ? x.toFixed(0) : x.toFixed(1));
const mb = (bytes) => `${(bytes / 1e6).toFixed(1)} MB`;

export async function fairnessSection(scope) {
  const dir = scope.tempDir('bench-fairness-');
  const boardSeeder = await scope.process('bench/seed.mjs', { args: ['flow', dir], timeoutMs: 600_000 });
  await boardSeeder.stop();
  const { userId: attacker, boardId, yearAgo, today } = boardSeeder.info;
  const seeder = await scope.process(join('bench/sections/fairness.mjs'), { args: ['seed', dir, attacker], timeoutMs: 600_000 });
  await seeder.stop();
  const { victim, victimTaskId } = seeder.info;
  const server = await scope.process('bench/servers/all-in-one.mjs', {
    env: { DATA_DIR: dir, JWT_SECRET, BENCH_ADMISSION: 'default', COST_BUDGET_MS: String(BUDGET_MS), COST_REFILL_MS_PER_SECOND: String(REFILL_MS_PER_S) },
    timeoutMs: 300_000,
  });
  const base = `http://127.0.0.1:${server.info.port}`;
  const jwt = accessToken(attacker);
  const token = (await http(base, 'POST', '/api/v1/tokens', { token: jwt, body: { name: 'attacker', scopes: ['read'] } })).json.token;
  const principals = { jwt, token };
  const victimRead = { method: 'GET', path: `/api/v1/tasks/${victimTaskId}`, auth: accessToken(victim) };
  // warm: the first reads load indexes and caches
  await round(base, victimRead, 1);

  const baseline = await round(base, victimRead, ATTACK_S);
  const b50 = pct(baseline.reads.map((r) => r.ms), 50);
  const b99 = pct(baseline.reads.map((r) => r.ms), 99);
  const lines = [
    `All-in-one server, embedded store, the admission defaults (cost budget ${BUDGET_MS.toLocaleString('en')} ms, refilled at ${REFILL_MS_PER_S} ms a second); the attacker owns ${(10_000 + EXTRA_TASKS).toLocaleString('en')} tasks (a 10,000-card board among them, with a year of daily flow snapshots and 5,000 finished cards), the other user 100.`,
    `The other user reads one of its tasks in a sequential loop (\`GET /api/v1/tasks/{id}\`); each attack runs ${ATTACK_S} s. Baseline: p50 ${fmt(b50)} ms, p99 ${fmt(b99)} ms, ${baseline.reads.length} reads.`,
    `Each attack starts with the attacker's budget full: before it the section waits until a cheap query of the attack's principal (its JWT, or its access token) is admitted again, then for the refill of what the last attack can have spent (at most the whole budget, ${(BUDGET_MS / REFILL_MS_PER_S).toFixed(0)} s); the notes give each wait.`,
    `Attacker columns: its requests answered 2xx, 400 (\`QUERY_TOO_COSTLY\`: refused at the input), 429 (admission, \`RATE_LIMITED\` with its reason; without one, a token's request rate \`RATE_LIMIT_TOKEN_MAX\`; or \`TOO_MANY_STREAMS\`), and other answers (5xx, other 4xx, none in ${REQUEST_TIMEOUT_MS / 1000} s, or a tool error of a code the catalogue lacks); MCP tool errors count under their code's status. The notes name the codes.`,
    '',
    '| attack | workers | other user p50 ms | p99 ms | p99 ÷ baseline | other user errors | attacker 2xx | 400 | 429 | other |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
  ];
  const notes = [];
  let worstP99 = 0;
  let victimErrors = 0;
  /** What the last attack of each principal can have charged to it, ms (see refill()). */
  const spent = { jwt: 0, token: 0 };
  for (const [n, a] of attacks({ boardId, yearAgo, today }).entries()) {
    const auth = principals[a.as];
    const wait = await refill(base, auth, spent[a.as]);
    const { reads, attacked, streamBytes } = await round(base, victimRead, ATTACK_S, { workers: a.workers, request: (i) => a.request(i, auth), streams: a.streams ?? 0, auth });
    spent[a.as] = attacked.filter((r) => r.status !== 429).reduce((sum, r) => sum + r.ms, 0);
    const ms = reads.map((r) => r.ms);
    const p50 = pct(ms, 50);
    const p99 = pct(ms, 99);
    const errors = reads.filter((r) => r.status !== 200).length;
    worstP99 = Math.max(worstP99, p99);
    victimErrors += errors;
    const count = (f) => attacked.filter(f).length;
    const ok = count((r) => r.status >= 200 && r.status < 300);
    const c400 = count((r) => r.status === 400);
    const c429 = count((r) => r.status === 429);
    const workers = a.streams ? `${a.workers} + ${a.streams} streams` : `${a.workers}`;
    lines.push(`| ${a.name} | ${workers} | ${fmt(p50)} | ${fmt(p99)} | ${(p99 / b99).toFixed(1)}× | ${errors} | ${ok} | ${c400} | ${c429} | ${attacked.length - ok - c400 - c429} |`);
    const codes = new Map();
    for (const r of attacked) if (r.status < 200 || r.status >= 300) codes.set(`${r.status} ${r.code}`.trim(), (codes.get(`${r.status} ${r.code}`.trim()) ?? 0) + 1);
    const answers = [...codes].map(([k, v]) => `${v} × ${k.replace(/^-1 /, 'other: ').replace(/^0 /, 'none: ')}`).join(', ');
    notes.push(
      `- ${n + 1}. ${a.name}: waited ${wait.waitedS.toFixed(1)} s for the ${a.as === 'jwt' ? 'JWT user' : 'token'}'s full budget${wait.positive ? '' : ` (**still refused after ${MAX_DEBT_WAIT_S} s: this attack started with the budget spent**)`}` +
      `${answers ? `; refusals and errors: ${answers}` : ''}${a.streams ? `; its streams received ${mb(streamBytes)}` : ''}.`,
    );
  }
  lines.push(
    '',
    ...notes,
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
