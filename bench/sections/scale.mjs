// Section `scale`: the all-in-one server on stores of
// 100,000 and 1,000,000 tasks. Not in the default `npm run bench` set (seeding a million tasks takes
// minutes): `node bench/run.mjs scale`, sizes from BENCH_SCALE_SIZES (default 100000,1000000).
// BENCH_SCALE_DATA=<dir>: seeded stores are kept in <dir>/<tasks>/ (seed info in <dir>/<tasks>.json)
// and reused by later runs (each run starts its servers on a copy). BENCH_SCALE_BASE=<checkout>:
// another built checkout whose all-in-one start-up is timed too, alternating with this one's on
// copies of the same store (before/after in one run); BENCH_SCALE_STARTS rounds (default 2).
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { accessToken, http, JWT_SECRET, measure, pairedRatio, poll, row, Scope, target, TABLE_HEAD } from '../lib.mjs';
import { moveRequests } from './board.mjs';
import { QUERIES } from './query.mjs';

/** Sizes measured, in tasks. */
const SIZES = (process.env.BENCH_SCALE_SIZES ?? '100000,1000000').split(',').map(Number);
/** Folder keeping seeded stores between runs (unset: seeded afresh in a temp dir). */
const DATA = process.env.BENCH_SCALE_DATA ? resolve(process.env.BENCH_SCALE_DATA) : undefined;
/** Another built checkout to time the start-up of, for a before/after in the same run. */
const BASE = process.env.BENCH_SCALE_BASE ? resolve(process.env.BENCH_SCALE_BASE) : undefined;
/** Start-ups timed per checkout (the last of this checkout's serves the load runs). */
const STARTS = Math.max(1, Number(process.env.BENCH_SCALE_STARTS ?? 2));
const SERVER_ENV = { JWT_SECRET, NODE_OPTIONS: '--max-old-space-size=16384' };

/** Resident set size of a process, in MB (Linux /proc). */
function rssMb(pid) {
  const m = readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmRSS:\s+(\d+) kB/);
  return m ? Number(m[1]) / 1024 : NaN;
}

/** Bytes of every file in `dir` (store.sqlite, its WAL). */
function diskBytes(dir) {
  return readdirSync(dir).reduce((sum, f) => sum + statSync(join(dir, f)).size, 0);
}

const mb = (x) => `${Math.round(x).toLocaleString('en')} MB`;
const s = (ms) => `${(ms / 1000).toFixed(1)} s`;

/**
 * One size: seed `n` tasks in a child process (`bench/seed.mjs scale`; or reuse BENCH_SCALE_DATA's),
 * start the all-in-one server on a copy of the folder and time spawn → `/health/ready` answering
 * 200 (BENCH_SCALE_STARTS times, alternating with BENCH_SCALE_BASE's server when set), read its
 * RSS and the folder's size,
 * then load (c=10, 3 × 3 s each): GET detail, the query section's queries for a user whose scope is
 * 11,000 tasks, a column read (2,000 cards), the 6-column summary and card moves on the board of
 * the board section.
 */
async function measureSize(n) {
  const scope = new Scope();
  try {
    const { dir: seeded, seed } = await seededStore(scope, n);
    const disk = diskBytes(seeded);
    /** Spawn → `/health/ready` 200 of `script` on a fresh copy of the seeded store; the server is left running. */
    const start = async (script) => {
      const dir = scope.tempDir(`bench-scale-run-${n}-`);
      cpSync(seeded, dir, { recursive: true });
      const spawned = Date.now();
      const server = await scope.process(script, { env: { ...SERVER_ENV, DATA_DIR: dir }, timeoutMs: 600_000 });
      const url = `http://127.0.0.1:${server.info.port}`;
      await poll(async () => (await http(url, 'GET', '/health/ready', { ok: false })).status === 200, 600_000);
      return { server, dir, base: url, startMs: Date.now() - spawned, loadMs: server.info.loadMs, rss: rssMb(server.pid) };
    };
    const starts = [];
    const baseStarts = [];
    let run;
    for (let i = 0; i < STARTS; i++) {
      if (BASE) {
        const b = await start(join(BASE, 'bench/servers/all-in-one.mjs'));
        await b.server.stop();
        rmSync(b.dir, { recursive: true, force: true });
        baseStarts.push(b);
      }
      if (run) {
        await run.server.stop();
        rmSync(run.dir, { recursive: true, force: true });
      }
      run = await start('bench/servers/all-in-one.mjs');
      starts.push(run);
    }
    const { server, base } = run;
    const startMs = median(starts.map((x) => x.startMs));
    const rssStart = run.rss;
    const queryHeaders = { authorization: `Bearer ${accessToken(seed.queryUserId)}` };
    const boardHeaders = { authorization: `Bearer ${accessToken(seed.userId)}` };
    const board = `${base}/api/v1/boards/${seed.boardId}`;
    const queryLoad = (query) => ({ url: `${base}/api/v1/tasks/query`, method: 'POST', headers: queryHeaders, body: JSON.stringify({ query, pageSize: 20 }) });
    const r = await measure(
      {
        detail: { url: `${base}/api/v1/tasks/${seed.queryDetailId}`, headers: queryHeaders },
        first: queryLoad(QUERIES[0][1]),
        text: queryLoad(QUERIES[1][1]),
        column: { url: `${board}/columns/doing/query`, method: 'POST', headers: boardHeaders, body: '{}' },
        summary: { url: `${board}/summary`, headers: boardHeaders },
        move: { url: base, requests: moveRequests(seed.boardId, seed.movable, boardHeaders) },
      },
      { interleave: false, reps: 3, duration: 3 },
    );
    const rssAfter = rssMb(server.pid);
    return { n, seed, disk, startMs, loadMs: run.loadMs, rssStart, rssAfter, r, starts, baseStarts };
  } finally {
    await scope.close();
  }
}

/** The median (of an even count: the mean of the middle two). */
const median = (xs) => {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

/**
 * The seeded store of `n` tasks and its seed info: seeded by `bench/seed.mjs scale` in a child
 * process, into a temp dir, or kept in `BENCH_SCALE_DATA` and reused when already there.
 */
async function seededStore(scope, n) {
  const kept = DATA && join(DATA, String(n));
  const info = kept && `${kept}.json`;
  if (info && existsSync(info)) return { dir: kept, seed: JSON.parse(readFileSync(info, 'utf8')) };
  let dir;
  if (kept) {
    rmSync(kept, { recursive: true, force: true });
    mkdirSync(kept, { recursive: true });
    dir = kept;
  } else dir = scope.tempDir(`bench-scale-${n}-`);
  const seeder = await scope.process('bench/seed.mjs', { args: ['scale', dir, String(n)], timeoutMs: 3_600_000, env: { NODE_OPTIONS: '--max-old-space-size=16384' } });
  await seeder.stop();
  if (info) writeFileSync(info, JSON.stringify(seeder.info));
  return { dir, seed: seeder.info };
}

/** The scale section: one table per size, a summary table, and the targets at the largest size. */
export async function scaleSection() {
  const results = [];
  const lines = [];
  for (const n of SIZES) {
    let m;
    try {
      m = await measureSize(n);
    } catch (e) {
      lines.push(`**${n.toLocaleString('en')} tasks failed**: ${String(e.message ?? e).slice(0, 500)}`, '');
      continue;
    }
    results.push(m);
    const { r } = m;
    const before = lines.length;
    lines.push(
      `### ${n.toLocaleString('en')} tasks`,
      '',
      `Seeded in ${s(m.seed.seedMs)} (own process${DATA ? ', kept in BENCH_SCALE_DATA' : ''}); on disk ${mb(m.disk / 2 ** 20)}; start-up to /health/ready ${s(m.startMs)} ` +
        `(median of ${m.starts.length}; last: store load ${s(m.loadMs)}); RSS ${mb(m.rssStart)} after start, ${mb(m.rssAfter)} after the load runs. c=10, 3 × 3 s each (median); ratio = req/s ÷ GET detail.`,
      '',
      ...(m.baseStarts.length > 0
        ? [
            `Start-ups alternated with ${BASE} (base) on copies of the same store: ` +
              m.starts.map((x, i) => `base ${s(m.baseStarts[i].startMs)} (load ${s(m.baseStarts[i].loadMs)}, RSS ${mb(m.baseStarts[i].rss)}) → this ${s(x.startMs)} (load ${s(x.loadMs)}, RSS ${mb(x.rss)})`).join('; ') +
              `; median ratio this ÷ base ${(m.startMs / median(m.baseStarts.map((x) => x.startMs))).toFixed(2)}.`,
            '',
          ]
        : []),
      TABLE_HEAD,
      row('GET /tasks/{id}', r.detail, r.detail),
      row(`query: ${QUERIES[0][0]}`, r.first, r.detail),
      row(`query: ${QUERIES[1][0]}`, r.text, r.detail),
      row('column read (doing, 2,000 cards, page 20)', r.column, r.detail),
      row('board summary (6 columns, preview 3)', r.summary, r.detail),
      row('card move Doing ⇄ Review', r.move, r.detail),
      '',
    );
    console.error(lines.slice(before).join('\n')); // progress: a size's table as soon as it is measured
  }
  if (results.length === 0) return lines;
  lines.push(
    '| tasks | start-up | store load | RSS after start | RSS per 100k tasks | on disk | first query p50 | text search p50 | text ÷ detail | move cost (detail ÷ move) |',
    '| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
    ...results.map((m) =>
      `| ${m.n.toLocaleString('en')} | ${s(m.startMs)} | ${s(m.loadMs)} | ${mb(m.rssStart)} | ${mb(m.rssStart / (m.n / 100_000))} | ${mb(m.disk / 2 ** 20)} | ` +
        `${m.r.first.p50.toFixed(2)} ms | ${m.r.text.p50.toFixed(2)} ms | ${pairedRatio(m.r.text, m.r.detail).text} | ${pairedRatio(m.r.detail, m.r.move).text} |`,
    ),
    '',
  );
  if (results.length >= 2) {
    const [a, b] = [results[0], results[results.length - 1]];
    lines.push(`Memory growth between ${a.n.toLocaleString('en')} and ${b.n.toLocaleString('en')} tasks: ${mb(((b.rssStart - a.rssStart) / (b.n - a.n)) * 100_000)} per 100,000 tasks.`, '');
  }
  const top = results[results.length - 1];
  const at = `at ${top.n.toLocaleString('en')} tasks`;
  lines.push(
    target(top.startMs <= 10_000, `start-up ≤ 10 s ${at}`, s(top.startMs)),
    target(top.r.first.p50 < 10, `query p50 < 10 ms ${at}`, `${top.r.first.p50.toFixed(2)} ms`),
    `- RSS per 100,000 tasks ${at}: ${mb(top.rssStart / (top.n / 100_000))}`,
  );
  return lines;
}
