// Benchmark helpers: loopback-only load with autocannon (per-response timings for p50/p99),
// child processes and temp dirs that are always cleaned up, tokens, and the result tables.
import autocannon from 'autocannon';
import { spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { once } from 'node:events';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** Seconds of each measured load run. */
export const DURATION_S = 4;
/** Measured runs per load spec (interleaved with the other specs of a section, medians reported). */
export const REPS = 3;

/** Percentile (0..100) of a numeric array, in the array's unit. */
export function pct(values, p) {
  if (values.length === 0) return NaN;
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
}

/** The median of a numeric array: the mean of the two middle values for an even count (NaN when empty). */
export function median(values) {
  if (values.length === 0) return NaN;
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 === 1 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

/** The pid of each server this run started, by the port it printed in its `READY` line. */
const serverPids = new Map();

/**
 * CPU time (user + system, µs) process `pid` has used so far, from `/proc/<pid>/stat` (10 ms
 * ticks); `undefined` when it cannot be read (no such process, no `/proc`).
 */
export function cpuTimeUs(pid) {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10_000;
  } catch {
    return undefined;
  }
}

/**
 * `BENCH_ACCEPT_ENCODING=br` (or `gzip`, `gzip, br`) sends that `Accept-Encoding` with every
 * loaded request, so a run measures the answers as a browser gets them, compressed
 * (docs/bench.md "Compression"); unset, requests ask for no compression, as before.
 */
const ACCEPT_ENCODING = process.env.BENCH_ACCEPT_ENCODING ? { 'accept-encoding': process.env.BENCH_ACCEPT_ENCODING } : {};

/**
 * Runs autocannon against a 127.0.0.1 URL for `duration` seconds, after a 1 s warm-up when
 * `warmup`. `requests` is autocannon's request list (setupRequest/onResponse); returns
 * {rps, p50, p99, n, errors, non2xx, cpuUs} (latencies in ms, from autocannon's per-response
 * timings; `cpuUs` = the serving process's CPU µs per request over the run, when this run
 * started that process, else `undefined`).
 */
export async function load({ url, method = 'GET', body, headers = {}, connections = 10, requests }, { duration = DURATION_S, warmup = true } = {}) {
  if (!/^http:\/\/127\.0\.0\.1:/.test(url)) throw new Error(`bench targets loopback only: ${url}`);
  const base = {
    url, method, connections, timeout: 10,
    headers: { 'content-type': 'application/json', ...ACCEPT_ENCODING, ...headers },
    ...(body ? { body } : {}), ...(requests ? { requests } : {}),
  };
  if (warmup) await run({ ...base, duration: 1 }, () => {});
  const pid = serverPids.get(Number(new URL(url).port));
  const cpuBefore = pid === undefined ? undefined : cpuTimeUs(pid);
  const times = [];
  const result = await run({ ...base, duration }, (ms) => times.push(ms));
  const cpuAfter = cpuBefore === undefined ? undefined : cpuTimeUs(pid);
  return {
    rps: result.requests.total / duration,
    p50: pct(times, 50),
    p99: pct(times, 99),
    n: result.requests.total,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
    cpuUs: cpuAfter === undefined || result.requests.total === 0 ? undefined : (cpuAfter - cpuBefore) / result.requests.total,
  };
}

/**
 * Loads every spec of `specs` ({name: load spec}) `reps` times and returns {name: result} with the
 * median req/s, p50 and p99 of the runs and the summed counts. `interleave` (for specs served by
 * different processes) runs a b c, a b c, … so machine noise hits all alike, with a warm-up before
 * every run; otherwise (specs sharing one server) each spec's runs are consecutive after one
 * warm-up, so the garbage a heavy spec leaves in the server is not charged to the next one.
 */
export async function measure(specs, { reps = REPS, duration = DURATION_S, interleave = true } = {}) {
  const runs = Object.fromEntries(Object.keys(specs).map((k) => [k, []]));
  const order = interleave
    ? Array.from({ length: reps }, () => Object.keys(specs)).flat()
    : Object.keys(specs).flatMap((k) => Array(reps).fill(k));
  for (const name of order) runs[name].push(await load(specs[name], { duration, warmup: interleave || runs[name].length === 0 }));
  return Object.fromEntries(Object.entries(runs).map(([name, rs]) => [name, summarize(rs)]));
}

/**
 * Loads the same specs on several servers side by side: `specs` is {name: {variant: load spec}}
 * (e.g. variants `this` and `ref`, two builds). Every run of a spec is followed at once by the
 * same run on the other variants (a warm-up before each run), so the i-th runs of the variants
 * are paired for {@link pairedRatio}. `interleave` as in {@link measure}: specs served by
 * different processes rotate (a b, a b, …); otherwise (specs sharing one server per variant) each
 * spec's runs are consecutive. Returns {name: {variant: result}} in the shape of {@link measure}.
 */
export async function measureVariants(specs, { reps = REPS, duration = DURATION_S, interleave = true } = {}) {
  const names = Object.keys(specs);
  const order = interleave ? Array.from({ length: reps }, () => names).flat() : names.flatMap((k) => Array(reps).fill(k));
  const runs = Object.fromEntries(names.map((k) => [k, Object.fromEntries(Object.keys(specs[k]).map((v) => [v, []]))]));
  for (const name of order) {
    for (const [variant, spec] of Object.entries(specs[name])) runs[name][variant].push(await load(spec, { duration }));
  }
  return Object.fromEntries(
    names.map((k) => [k, Object.fromEntries(Object.entries(runs[k]).map(([v, rs]) => [v, summarize(rs)]))]),
  );
}

/**
 * Median req/s, p50, p99 and server CPU µs per request of a spec's runs, their summed counts, and
 * every run's req/s, p50 and CPU (`cpuUs`/`cpuRuns` undefined unless every run has its CPU).
 */
function summarize(rs) {
  const middle = (key) => median(rs.map((r) => r[key]));
  const sum = (key) => rs.reduce((a, r) => a + r[key], 0);
  return {
    rps: middle('rps'), p50: middle('p50'), p99: middle('p99'),
    n: sum('n'), errors: sum('errors'), non2xx: sum('non2xx'), rpsRuns: rs.map((r) => r.rps), p50Runs: rs.map((r) => r.p50),
    cpuUs: rs.every((r) => r.cpuUs !== undefined) ? middle('cpuUs') : undefined,
    cpuRuns: rs.every((r) => r.cpuUs !== undefined) ? rs.map((r) => r.cpuUs) : undefined,
  };
}

/**
 * The ratio `top.rps ÷ bottom.rps` run by run (the i-th runs of two {@link measure} results were
 * taken side by side), as `1.23× (runs 1.10–1.31)`: its median and its spread. `key` = the runs
 * compared (`rpsRuns`, or `p50Runs` for latencies). Returns {value, min, max, text}.
 */
export function pairedRatio(top, bottom, key = 'rpsRuns') {
  const ratios = top[key].map((v, i) => v / bottom[key][i]);
  const value = median(ratios);
  return { value, min: Math.min(...ratios), max: Math.max(...ratios), text: `${value.toFixed(3)}× (runs ${Math.min(...ratios).toFixed(3)}–${Math.max(...ratios).toFixed(3)})` };
}

function run(opts, onTime) {
  return new Promise((resolve, reject) => {
    const inst = autocannon(opts, (err, res) => (err ? reject(err) : resolve(res)));
    inst.on('response', (_c, _s, _b, ms) => onTime(ms));
  });
}

/** Times `n` sequential calls of `fn` (bounded by `maxMs`); the same result shape as {@link load}. */
export async function timeCalls(fn, { n, maxMs = 10_000 }) {
  const times = [];
  let errors = 0;
  const started = performance.now();
  for (let i = 0; i < n && performance.now() - started < maxMs; i++) {
    const t = performance.now();
    try {
      await fn(i);
    } catch {
      errors++;
    }
    times.push(performance.now() - t);
  }
  const total = times.reduce((a, b) => a + b, 0);
  return { rps: (times.length * 1000) / total, p50: pct(times, 50), p99: pct(times, 99), n: times.length, errors, non2xx: 0 };
}

// ---------------------------------------------------------------- processes and temp dirs

/** Everything spawned or created by this run; killed/removed at exit whatever happened. */
const children = new Set();
const dirs = new Set();
process.once('exit', () => {
  for (const c of children) c.kill('SIGKILL');
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
for (const sig of ['SIGINT', 'SIGTERM']) process.once(sig, () => process.exit(130));

/** A fresh temp dir, removed by {@link Scope.close} (or at exit). */
export function tempDir(prefix = 'bench-') {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  dirs.add(dir);
  return dir;
}

function removeDir(dir) {
  rmSync(dir, { recursive: true, force: true });
  dirs.delete(dir);
}

async function stopChild(proc) {
  if (proc.exitCode === null && proc.signalCode === null) {
    const exited = once(proc, 'exit');
    proc.kill('SIGTERM');
    const done = await Promise.race([exited.then(() => true), sleep(3000).then(() => false)]);
    if (!done) {
      proc.kill('SIGKILL');
      await exited;
    }
  }
  children.delete(proc);
}

/**
 * `BENCH_CPU_PROF=<dir>`: every spawned node process writes a CPU profile into <dir> when it stops;
 * `BENCH_CPU_PROF_INTERVAL=<µs>` samples that often instead of V8's default (1000 µs).
 */
const PROFILE_ARGS = process.env.BENCH_CPU_PROF
  ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`, ...(process.env.BENCH_CPU_PROF_INTERVAL ? [`--cpu-prof-interval=${Number(process.env.BENCH_CPU_PROF_INTERVAL)}`] : [])]
  : [];

/**
 * The node flags `npm start` runs the service with (the root package.json's `start` script, e.g.
 * `--max-semi-space-size=32`; the Dockerfile sets the same in NODE_OPTIONS): every spawned
 * process gets them, so the bench measures the runtime a deployment runs.
 */
export const NODE_FLAGS = (() => {
  const start = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).scripts.start;
  const args = start.split(/\s+/).slice(1); // node <flags…> <script> …
  return args.slice(0, args.findIndex((a) => !a.startsWith('--')));
})();

/**
 * Spawns `node <script> …args` with `env` added (LOG_LEVEL=warn unless given); stdout and stderr are
 * kept (last 4 KB) for error messages. `ready` is either the string 'line' — resolve when the
 * script prints `READY <json>` (the json is returned as `info`) — or an async probe polled until it
 * returns a truthy value. Rejects (and kills the process) when it exits first or after `timeoutMs`.
 */
export async function startProcess(script, { args = [], env = {}, ready = 'line', timeoutMs = 120_000 } = {}) {
  const proc = spawn(process.execPath, [...NODE_FLAGS, ...PROFILE_ARGS, script, ...args], {
    env: { ...process.env, LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.add(proc);
  let out = '';
  let tail = '';
  const keep = (d) => (tail = (tail + d).slice(-4096));
  proc.stderr.on('data', keep);
  const stop = () => stopChild(proc);
  const settled = new AbortController(); // ends the timer and the probe once the race is decided
  try {
    const exited = new Promise((_, reject) =>
      proc.once('exit', (code, sig) => reject(new Error(`${script} exited (${sig ?? code}) before it was ready:\n${tail}`))),
    );
    const timedOut = new Promise((_, reject) => {
      const timer = setTimeout(() => reject(new Error(`${script} not ready in ${timeoutMs / 1000} s:\n${tail}`)), timeoutMs);
      settled.signal.addEventListener('abort', () => clearTimeout(timer), { once: true });
    });
    let isReady;
    if (ready === 'line') {
      isReady = new Promise((resolve) =>
        proc.stdout.on('data', (d) => {
          keep(d);
          if (out === null) return;
          out += d;
          const m = out.match(/READY (.*)\n/);
          if (m) {
            out = null;
            const info = JSON.parse(m[1]);
            // a server's requests can then be charged to its CPU (load's `cpuUs`)
            if (Number.isInteger(info?.port)) serverPids.set(info.port, proc.pid);
            resolve(info);
          }
        }),
      );
    } else {
      proc.stdout.on('data', keep);
      isReady = poll(ready, timeoutMs, settled.signal);
    }
    for (const p of [exited, isReady]) p.catch(() => {}); // losers of the race may reject later
    const info = await Promise.race([exited, timedOut, isReady]);
    return { proc, info, stop, pid: proc.pid };
  } catch (e) {
    await stop();
    throw e;
  } finally {
    settled.abort();
  }
}

/**
 * Calls `probe` every 100 ms until it returns a truthy value (errors count as not yet); rejects
 * after `timeoutMs` or once `signal` aborts.
 */
export async function poll(probe, timeoutMs = 30_000, signal = undefined) {
  const deadline = Date.now() + timeoutMs;
  let last;
  while (Date.now() < deadline && !signal?.aborted) {
    try {
      const v = await probe();
      if (v) return v;
    } catch (e) {
      last = e;
    }
    await sleep(100);
  }
  throw new Error(`not ready within ${timeoutMs / 1000} s${last ? `: ${last.message}` : ''}`);
}

/**
 * A private `nats-server -a 127.0.0.1 -p -1` (free port) whose ports file goes to a temp dir;
 * killed and removed by `scope.close()` (or at exit). Returns its `nats://` URL.
 */
export async function startNats(scope) {
  const dir = scope.tempDir('bench-nats-');
  const proc = spawn('nats-server', ['-a', '127.0.0.1', '-p', '-1', '--ports_file_dir', dir], { stdio: 'ignore' });
  children.add(proc);
  scope.add(() => stopChild(proc));
  const failed = new Promise((_, reject) => {
    proc.once('error', reject);
    proc.once('exit', (code) => reject(new Error(`nats-server exited (${code})`)));
  });
  failed.catch(() => {});
  const portsFile = () => {
    const file = readdirSync(dir).find((f) => f.endsWith('.ports'));
    return file && JSON.parse(readFileSync(join(dir, file), 'utf8')).nats?.[0];
  };
  return Promise.race([failed, poll(portsFile, 10_000)]);
}

/** A free TCP port on 127.0.0.1 (for processes that need PORT up front). */
export async function freePort() {
  const srv = createServer();
  srv.listen(0, '127.0.0.1');
  await once(srv, 'listening');
  const { port } = srv.address();
  srv.close();
  await once(srv, 'close');
  return port;
}

/**
 * What one section owns: processes, nats-servers, temp dirs and other closers, released in reverse
 * order by {@link Scope.close} (always called, also on failure).
 */
export class Scope {
  #closers = [];

  /** Registers a closer (async function). */
  add(close) {
    this.#closers.push(close);
  }

  /** {@link startProcess}, stopped when the scope closes. */
  async process(script, opts) {
    const p = await startProcess(script, opts);
    this.add(p.stop);
    return p;
  }

  tempDir(prefix) {
    const dir = tempDir(prefix);
    this.add(async () => removeDir(dir));
    return dir;
  }

  async close() {
    const closers = this.#closers.splice(0).reverse();
    for (const close of closers) {
      try {
        await close();
      } catch (e) {
        console.error(`cleanup: ${e.message}`);
      }
    }
  }
}

// ---------------------------------------------------------------- HTTP and tokens

/**
 * A JSON client of `base` as the holder of `token`: `call(method, path, body?)` answers
 * `{status, text, json (parsed on read; undefined for an empty body), ms}`; each request is given
 * up after `timeoutMs`.
 */
export function timedClient(base, token, timeoutMs = 30_000) {
  return async (method, path, body) => {
    const t0 = performance.now();
    const res = await fetch(base + path, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text();
    return { status: res.status, text, ms: performance.now() - t0, get json() { return text ? JSON.parse(text) : undefined; } };
  };
}

/** A bench JWT secret (the gateway's `JWT_SECRET`). */
export const JWT_SECRET = 'bench-secret-0123456789abcdef';

/**
 * The user the bench's tokens name when a section needs no particular one: the gateway refuses a
 * signed token whose `sub` is no user (docs/auth.md), so every all-in-one bench server
 * (servers/all-in-one.mjs) has this user, and seeders store the users their ids name.
 */
export const BENCH_USER_ID = 'bench-user';

/** Stores a user document for each of `ids` not yet stored (what registration would have made; no password). */
export async function ensureBenchUsers(store, ids) {
  const users = store.collection('users');
  for (const id of ids) {
    if (!(await users.findOne({ _id: id }))) await users.insertOne({ _id: id, username: `bench-${id}`, created_at: '2026-01-01T00:00:00.000Z' });
  }
}

/** An HS256 access token for `sub`, valid one hour, as the gateway signs them (docs/architecture.md §5). */
export function accessToken(sub, secret = JWT_SECRET) {
  const b64 = (o) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  const data = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64({ sub, name: `bench-${sub.slice(0, 8)}`, iat: now, exp: now + 3600 })}`;
  return `${data}.${createHmac('sha256', secret).update(data).digest('base64url')}`;
}

/** One HTTP call with a JSON body; returns {status, text, json}. Throws on a non-2xx unless `ok: false`. */
export async function http(base, method, path, { token, body, ok = true } = {}) {
  const res = await fetch(base + path, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(10_000),
  });
  const text = await res.text();
  if (ok && (res.status < 200 || res.status > 299)) throw new Error(`${method} ${path} → ${res.status}: ${text.slice(0, 300)}`);
  return { status: res.status, text, json: text ? JSON.parse(text) : undefined };
}

// ---------------------------------------------------------------- tables

/** Header of every results table. */
export const TABLE_HEAD = '| name | req/s | p50 ms | p99 ms | ratio | errors |\n| --- | ---: | ---: | ---: | ---: | ---: |';

/** Formats a row of the results table; `ratio` = rps ÷ `base.rps` (blank without a base). */
export function row(name, r, base) {
  const ratio = base ? (r.rps / base.rps).toFixed(3) : '';
  return `| ${name} | ${Math.round(r.rps)} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${ratio} | ${r.non2xx + r.errors} |`;
}

/** A target line: `PASS`/`MISS`, the target text and the measured value. */
export function target(pass, text, measured) {
  return `- **${pass ? 'PASS' : 'MISS'}** ${text} — measured ${measured}`;
}

/**
 * A base and our server side by side at c=10 and c=50 ({@link measure} results): the four table
 * rows (each of ours with the ratio to the base row above it) and the target on the c=10 paired
 * ratio (≥ `min`, described by `text`), with the c=50 one for reference.
 */
export function versusBase({ baseName, oursName, base10, ours10, base50, ours50 }, { min, text }) {
  const ratio = pairedRatio(ours10, base10);
  return {
    rows: [
      row(`${baseName} c=10`, base10, base10),
      row(`${oursName} c=10`, ours10, base10),
      row(`${baseName} c=50`, base50, base50),
      row(`${oursName} c=50`, ours50, base50),
    ],
    verdict: [target(ratio.value >= min, text, ratio.text), `- c=50, for reference: ${pairedRatio(ours50, base50).text}`],
  };
}
