// Benchmark helpers: loopback-only load with autocannon, per-response timings for p50/p99.
import autocannon from 'autocannon';
import { spawn } from 'node:child_process';
import { once } from 'node:events';

/** Percentile (0..100) of a numeric array, in the array's unit. */
export function pct(values, p) {
  if (values.length === 0) return NaN;
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
}

/**
 * Runs autocannon against a 127.0.0.1 URL for `duration` seconds after a 1 s warm-up.
 * `requests` is autocannon's request list (for setupRequest); returns {rps, p50, p99, n, errors, non2xx}.
 */
export async function load({ url, method = 'GET', body, headers = {}, connections = 10, duration = 5, requests }) {
  if (!/^http:\/\/127\.0\.0\.1:/.test(url)) throw new Error(`bench targets loopback only: ${url}`);
  const base = { url, method, connections, headers: { 'content-type': 'application/json', ...headers }, ...(body ? { body } : {}), ...(requests ? { requests } : {}) };
  await run({ ...base, duration: 1 }, () => {});
  const times = [];
  const result = await run({ ...base, duration }, (ms) => times.push(ms));
  return {
    rps: result.requests.total / duration,
    p50: pct(times, 50),
    p99: pct(times, 99),
    n: result.requests.total,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
  };
}

function run(opts, onTime) {
  return new Promise((resolve, reject) => {
    const inst = autocannon(opts, (err, res) => (err ? reject(err) : resolve(res)));
    inst.on('response', (_c, _s, _b, ms) => onTime(ms));
  });
}

/** Spawns a node script; resolves when it prints a line `READY <json>`; returns {proc, info, stop}. */
export async function startProcess(script, args = [], env = {}) {
  const proc = spawn(process.execPath, [script, ...args], { env: { ...process.env, LOG_LEVEL: 'warn', ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  let buf = '';
  const info = await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${script} did not start in 180 s`)), 180_000);
    proc.stdout.on('data', (d) => {
      buf += d;
      const m = buf.match(/READY (.*)\n/);
      if (m) { clearTimeout(timer); resolve(JSON.parse(m[1])); }
    });
    proc.on('exit', (code) => { clearTimeout(timer); reject(new Error(`${script} exited ${code}`)); });
  });
  proc.stdout.resume();
  const stop = async () => { if (proc.exitCode === null) { proc.kill('SIGTERM'); await Promise.race([once(proc, 'exit'), new Promise((r) => setTimeout(r, 3000))]); proc.kill('SIGKILL'); } };
  return { proc, info, stop };
}

/** Formats a row of the results table. */
export function row(name, r, base) {
  const ratio = base ? (r.rps / base.rps).toFixed(3) : '';
  return `| ${name} | ${Math.round(r.rps)} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${ratio} | ${r.non2xx + r.errors} |`;
}
