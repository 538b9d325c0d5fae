// Section `soak` (the embedded default under a long write load): the all-in-one server
// (`bench/servers/all-in-one.mjs`, the default EmbeddedStore in a temp DATA_DIR) with 200 tasks,
// PATCHed by 10 connections in rounds of 40 s until 400,000 PATCHes are made (BENCH_SOAK_PATCHES;
// at most BENCH_SOAK_MAX_ROUNDS rounds, default 20). Every PATCH commits a task write and its
// `task.updated` event. Reported: req/s and resident memory (RSS) per round, the folder's size,
// then the start-up of that folder (spawn → /health/ready) against a folder with the same 200 tasks
// and no history, alternated, 2 starts each. Targets (same run): RSS at the end within 100 MB of
// the start, the last round's req/s ≥ 0.9× the first's, the restart within 1 s of the fresh folder's.
// 127.0.0.1 only; stops by itself.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { accessToken, http, JWT_SECRET, load, poll, target } from '../lib.mjs';
import { CREATE_BODY } from './http.mjs';

const TASKS = 200;
const PATCHES = Number(process.env.BENCH_SOAK_PATCHES ?? 400_000);
const ROUND_S = Number(process.env.BENCH_SOAK_ROUND_S ?? 40);
const MAX_ROUNDS = Number(process.env.BENCH_SOAK_MAX_ROUNDS ?? 20);
const STARTS = 2;

/** Resident set size of a process, in MB (Linux /proc). */
function rssMb(pid) {
  const m = readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmRSS:\s+(\d+) kB/);
  return m ? Number(m[1]) / 1024 : NaN;
}

/** Bytes of every file in `dir` (store.sqlite and its WAL), in MB. */
const diskMb = (dir) => readdirSync(dir).reduce((sum, f) => sum + statSync(join(dir, f)).size, 0) / 2 ** 20;

const mb = (x) => `${Math.round(x).toLocaleString('en')} MB`;

/** Starts the all-in-one server on `dir`; resolves once `/health/ready` answers 200, with the time it took. */
async function start(scope, dir) {
  const spawned = Date.now();
  const p = await scope.process('bench/servers/all-in-one.mjs', { env: { DATA_DIR: dir, JWT_SECRET, BENCH_USERS: 'soak-owner' } });
  const base = `http://127.0.0.1:${p.info.port}`;
  await poll(async () => (await http(base, 'GET', '/health/ready', { ok: false })).status === 200, 120_000);
  return { p, base, startMs: Date.now() - spawned, loadMs: p.info.loadMs };
}

/** Creates the tasks PATCHed in rotation; returns their ids. */
async function seed(base, token) {
  const ids = [];
  for (let i = 0; i < TASKS; i++) ids.push((await http(base, 'POST', '/api/v1/tasks', { token, body: { ...CREATE_BODY, title: `soak ${i}` } })).json.id);
  return ids;
}

/** Autocannon requests PATCHing the tasks in rotation, each with a new title (a change and its event every time). */
function patchRequests(ids, headers) {
  let n = 0;
  return [
    {
      method: 'PATCH',
      headers: { 'content-type': 'application/json', ...headers },
      setupRequest: (req) => ({ ...req, path: `/api/v1/tasks/${ids[n % ids.length]}`, body: JSON.stringify({ title: `title ${n++}` }) }),
    },
  ];
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

export async function soakSection(scope) {
  const owner = 'soak-owner';
  const token = accessToken(owner);
  const headers = { authorization: `Bearer ${token}` };

  // the folder with the same tasks and no history, for the start-up comparison
  const freshDir = scope.tempDir('bench-soak-fresh-');
  {
    const fresh = await start(scope, freshDir);
    await seed(fresh.base, token);
    await fresh.p.stop();
  }

  const dir = scope.tempDir('bench-soak-');
  const server = await start(scope, dir);
  const ids = await seed(server.base, token);
  const spec = { url: server.base, requests: patchRequests(ids, headers) };
  const rssStart = rssMb(server.p.pid);
  const diskStart = diskMb(dir);
  const rounds = [];
  let total = 0;
  while (total < PATCHES && rounds.length < MAX_ROUNDS) {
    const r = await load(spec, { duration: ROUND_S, warmup: false });
    total += r.n;
    rounds.push({ ...r, total, rss: rssMb(server.p.pid), disk: diskMb(dir) });
    console.error(`soak round ${rounds.length}: ${Math.round(r.rps)} req/s, ${total} PATCHes, RSS ${mb(rounds.at(-1).rss)}`);
  }
  await new Promise((resolve) => setTimeout(resolve, 5_000));
  const rssIdle = rssMb(server.p.pid);
  await server.p.stop();

  const restarts = [];
  const freshStarts = [];
  for (let i = 0; i < STARTS; i++) {
    for (const [d, into] of [[dir, restarts], [freshDir, freshStarts]]) {
      const s = await start(scope, d);
      into.push({ ...s, rss: rssMb(s.p.pid) });
      await s.p.stop();
    }
  }
  const first = rounds[0];
  const last = rounds.at(-1);
  const errors = rounds.reduce((sum, r) => sum + r.errors + r.non2xx, 0);
  const restartMs = median(restarts.map((s) => s.startMs));
  const freshMs = median(freshStarts.map((s) => s.startMs));
  return [
    `All-in-one server (MemoryBus + EmbeddedStore file, EMBEDDED_SYNC default), ${TASKS} tasks of one user PATCHed in rotation (a new title each: ` +
      `a task write and its \`task.updated\` event), autocannon c=10, rounds of ${ROUND_S} s until ${PATCHES.toLocaleString('en')} PATCHes; ` +
      `RSS of the server process; size of the data folder (store.sqlite and its WAL).`,
    '',
    '| after | PATCHes | req/s in the round | p50 ms | p99 ms | RSS | data folder |',
    '| --- | ---: | ---: | ---: | ---: | ---: | ---: |',
    `| start (${TASKS} tasks) | 0 | | | | ${mb(rssStart)} | ${mb(diskStart)} |`,
    ...rounds.map((r, i) => `| round ${i + 1} | ${r.total.toLocaleString('en')} | ${Math.round(r.rps)} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${mb(r.rss)} | ${mb(r.disk)} |`),
    `| 5 s idle | ${total.toLocaleString('en')} | | | | ${mb(rssIdle)} | ${mb(diskMb(dir))} |`,
    '',
    `Start-up to /health/ready, alternated, median of ${STARTS}: this folder ${(restartMs / 1000).toFixed(2)} s (store open ${restarts.map((s) => `${s.loadMs} ms`).join(', ')}; RSS ${restarts.map((s) => mb(s.rss)).join(', ')}) ` +
      `vs the same ${TASKS} tasks without the history ${(freshMs / 1000).toFixed(2)} s (store open ${freshStarts.map((s) => `${s.loadMs} ms`).join(', ')}; RSS ${freshStarts.map((s) => mb(s.rss)).join(', ')}).`,
    '',
    target(total >= PATCHES && errors === 0, `${PATCHES.toLocaleString('en')} PATCHes, all 2xx`, `${total.toLocaleString('en')} in ${rounds.length} rounds, ${errors} errors or non-2xx`),
    target(last.rss - rssStart <= 100, 'RSS at the end within 100 MB of the start', `${mb(rssStart)} → ${mb(last.rss)} (${last.rss - rssStart >= 0 ? '+' : ''}${mb(last.rss - rssStart)})`),
    target(last.rps >= 0.9 * first.rps, "last round's req/s ≥ 0.9× the first round's", `${Math.round(first.rps)} → ${Math.round(last.rps)} (${(last.rps / first.rps).toFixed(2)}×)`),
    target(restartMs <= freshMs + 1_000, 'restart on this folder within 1 s of a folder with the same tasks and no history', `${(restartMs / 1000).toFixed(2)} s vs ${(freshMs / 1000).toFixed(2)} s`),
  ];
}
