// Where a request's CPU goes, layer by layer (docs/bench.md "Per-request cost by layer"): each
// checkout's all-in-one server runs under V8's sampling profiler (`--cpu-prof`), loaded with
// GET /api/v1/tasks/{id} and then POST /api/v1/tasks at c=10 (the `http` section's fixture and
// bodies), and the samples taken inside each load's window are attributed to a layer by the
// script of the sampled function (self time: a function's own time, not its callees'). Per layer
// and load: µs of profiled time per request. The profiler's and the server's clocks are the same
// monotonic clock as this process's `process.hrtime`, so the windows are cut exactly.
//
//   node bench/layers.mjs <label>=<checkout> ...        e.g.  this=. anchor=/tmp/anchor-0ad87c9
//
// The builds take turns (ROUNDS rounds, a fresh server each time) and each figure is the median of
// its rounds, so a drift of the machine meets every build alike.
//
// Env: N (requests per load, default 20000); ROUNDS (default 3); TOP=k also prints each load's k costliest scripts
// and functions (self time), to look inside a layer; INTERVAL=µs samples that often (V8's default
// 1000 µs gives ~0.1 µs per request per sample at N=10000: finer for a function's figure, at some
// cost to every build alike). Loopback only, bounded (autocannon `amount`); the
// servers, profiles and temp dirs are removed at the end. Prints a markdown table.
import autocannon from 'autocannon';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const PROFILES = mkdtempSync(join(tmpdir(), 'bench-layers-'));
process.env.BENCH_CPU_PROF = PROFILES; // read by lib.mjs when it loads: every spawned server is profiled
if (process.env.INTERVAL) process.env.BENCH_CPU_PROF_INTERVAL = process.env.INTERVAL;
const { Scope } = await import('./lib.mjs');
const { CREATE_BODY, httpServer } = await import('./sections/http.mjs');

const N = Number(process.env.N ?? 20_000);
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const pairs = process.argv.slice(2).map((a) => {
  const at = a.indexOf('=');
  if (at <= 0) throw new Error(`usage: node bench/layers.mjs <label>=<checkout> ... (got ${a})`);
  return { label: a.slice(0, at), root: resolve(a.slice(at + 1)) };
});
if (pairs.length === 0) {
  console.error('usage: node bench/layers.mjs <label>=<checkout> ...');
  process.exit(2);
}

/** Layers in the order they are tested against a sampled function's script URL (first match wins). */
const LAYERS = [
  ['JWT (@fastify/jwt, fast-jwt)', (u) => /@fastify\/jwt|fast-jwt/.test(u)],
  ['schema validation (ajv)', (u) => /\/ajv\//.test(u)],
  ['serialization (fast-json-stringify)', (u) => /fast-json-stringify/.test(u)],
  ['logging (pino)', (u) => /\/pino/.test(u)],
  ['admission', (u) => /gateway\/dist\/.*admission/.test(u)],
  ['tracing', (u) => /@opentelemetry|\/dist\/.*(trac(e|ing)|span)/.test(u)],
  ['metrics', (u) => /prom-client|\/dist\/.*metric|shared\/dist\/observability\//.test(u)],
  ['audit', (u) => /\/dist\/.*audit/.test(u)],
  ['HTTP (Fastify, its plugins)', (u) => /\/node_modules\/(fastify|@fastify|find-my-way|avvio|light-my-request|fastify-plugin|abstract-logging|process-warning|toad-cache|fast-querystring|safe-regex2|ret|rfdc|fast-decode-uri-component|@lukeed|content-type|secure-json-parse|fast-content-type-parse)\b/.test(u)],
  ['bus (nats, shared/bus)', (u) => /\/node_modules\/(nats|@nats-io)|shared\/dist\/bus\//.test(u)],
  ['store (shared/store)', (u) => /shared\/dist\/store\//.test(u)],
  ['services (handlers, their read and write paths)', (u) => /services\/(tasks|boards|sprints|query)\/dist\//.test(u)],
  ['domain (access, write unit, events)', (u) => /shared\/dist\/domain\//.test(u)],
  ['gateway (routes, hooks, plugins)', (u) => /services\/gateway\/dist\//.test(u)],
  ['other service and shared code', (u) => /services\/[^/]+\/dist\/|shared\/dist\//.test(u)],
  ['other packages', (u) => /\/node_modules\//.test(u)],
  ['Node: HTTP, sockets, streams', (u) => /^node:(_http|http|net|stream|internal\/(http|streams|stream_base|net|js_stream))/.test(u)],
  ['Node: other', (u) => u.startsWith('node:')],
];

/** The layer of one profile node (its own time). */
function layerOf(frame) {
  const url = frame.url ?? '';
  if (frame.functionName === '(garbage collector)') return 'garbage collection';
  if (frame.functionName === '(program)') return 'V8 and native (program)';
  if (url === '') return 'V8 and native (program)'; // builtins without a script: JSON, writev, …
  for (const [name, test] of LAYERS) if (test(url)) return name;
  return 'other';
}

/** µs of samples per layer inside [fromUs, toUs) of `profile` (monotonic µs); `functions`: the same per script and function. */
function attribute(profile, fromUs, toUs, functions = new Map()) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const out = new Map();
  let t = profile.startTime;
  for (let i = 0; i < profile.samples.length; i++) {
    t += profile.timeDeltas[i];
    const next = i + 1 < profile.timeDeltas.length ? profile.timeDeltas[i + 1] : 0;
    if (t < fromUs || t >= toUs) continue;
    const node = byId.get(profile.samples[i]);
    if (!node || node.callFrame.functionName === '(idle)') continue;
    const layer = layerOf(node.callFrame);
    out.set(layer, (out.get(layer) ?? 0) + next);
    const fn = `${node.callFrame.url.replace(/^.*\/(node_modules|services|shared)\//, '$1/')} ${node.callFrame.functionName || '(anonymous)'}`;
    functions.set(fn, (functions.get(fn) ?? 0) + next);
  }
  return out;
}

const nowUs = () => Number(process.hrtime.bigint() / 1000n);

async function fire(opts) {
  const r = await autocannon({ connections: 10, amount: N, timeout: 10, ...opts });
  if (r.non2xx > 0 || r.errors > 0) throw new Error(`${opts.method ?? 'GET'} ${opts.url}: ${r.non2xx} non-2xx, ${r.errors} errors`);
  return r;
}

const runs = []; // one per round and checkout
const scope = new Scope();
try {
  for (let round = 0; round < ROUNDS; round++) {
    for (const { label, root } of pairs) {
      const { base, token, path } = await httpServer(scope, root);
      const auth = { authorization: `Bearer ${token}` };
      const post = { url: `${base}/api/v1/tasks`, method: 'POST', body: JSON.stringify(CREATE_BODY), headers: { ...auth, 'content-type': 'application/json' } };
      await fire({ url: base + path, headers: auth, amount: Math.min(N, 5_000) }); // warm-up
      await fire({ ...post, amount: Math.min(N, 2_000) });
      const g0 = nowUs();
      await fire({ url: base + path, headers: auth });
      const g1 = nowUs();
      await fire(post);
      const p1 = nowUs();
      await scope.close(); // the server exits, writing its profile
      const file = readdirSync(PROFILES).find((f) => f.endsWith('.cpuprofile') && !runs.some((r) => r.file === f));
      if (!file) throw new Error(`${label}: no CPU profile was written`);
      const profile = JSON.parse(readFileSync(join(PROFILES, file), 'utf8'));
      const getFns = new Map();
      const postFns = new Map();
      runs.push({ label, file, get: attribute(profile, g0, g1, getFns), post: attribute(profile, g1, p1, postFns), getFns, postFns });
    }
  }
} finally {
  await scope.close();
  rmSync(PROFILES, { recursive: true, force: true });
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
/** Per key, the median over `maps` (a key missing from one counts 0 there). */
const medianMap = (maps) => new Map([...new Set(maps.flatMap((m) => [...m.keys()]))].map((k) => [k, median(maps.map((m) => m.get(k) ?? 0))]));
const withTotal = (maps) => {
  const m = medianMap(maps);
  m.set('\u0000all', median(maps.map((x) => [...x.values()].reduce((a, b) => a + b, 0))));
  return m;
};
const results = pairs.map(({ label }) => {
  const mine = runs.filter((r) => r.label === label);
  return { label, get: withTotal(mine.map((r) => r.get)), post: withTotal(mine.map((r) => r.post)), getFns: medianMap(mine.map((r) => r.getFns)), postFns: medianMap(mine.map((r) => r.postFns)) };
});

const layers = [...new Set(results.flatMap((r) => [...r.get.keys(), ...r.post.keys()]))].filter((l) => l !== '\u0000all');
const first = results[0];
layers.sort((a, b) => (first.get.get(b) ?? 0) + (first.post.get(b) ?? 0) - (first.get.get(a) ?? 0) - (first.post.get(a) ?? 0));
const us = (m, layer) => ((m.get(layer) ?? 0) / N).toFixed(1);
const cols = results.flatMap((r) => [`GET detail ${r.label}`, `POST /tasks ${r.label}`]);
console.log(`| layer (self time: µs of profiled CPU per request; ${N} requests per load, c=10; median of ${ROUNDS} rounds) | ${cols.join(' | ')} |`);
console.log(`| --- | ${cols.map(() => '---:').join(' | ')} |`);
for (const layer of layers) console.log(`| ${layer} | ${results.flatMap((r) => [us(r.get, layer), us(r.post, layer)]).join(' | ')} |`);
console.log(`| **all** (median of the rounds' totals) | ${results.flatMap((r) => [us(r.get, '\u0000all'), us(r.post, '\u0000all')]).join(' | ')} |`);

const TOP = Number(process.env.TOP ?? 0);
if (TOP > 0) {
  for (const r of results) {
    for (const [load, fns] of [['GET detail', r.getFns], ['POST /tasks', r.postFns]]) {
      console.log(`\n${r.label}, ${load}: the ${TOP} costliest functions (µs per request, self time)`);
      for (const [fn, t] of [...fns].sort((a, b) => b[1] - a[1]).slice(0, TOP)) console.log(`  ${(t / N).toFixed(2).padStart(7)}  ${fn}`);
    }
  }
}
