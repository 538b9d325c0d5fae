// Section `imports` (docs/import-export.md): on the all-in-one server, an import of 10,000 cards
// (a CSV) while another user reads task details in a closed loop — the import's time and the
// reader's p99 during it ÷ the same reader's p99 just before (target ≤ 2×) — and the streamed JSON
// export of a 50,000-card board: its time and the server's peak RSS growth while it runs (target
// ≤ 100 MB), sampled from /proc every 20 ms. Short runs; on a shared machine the figures are noisy.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { accessToken, JWT_SECRET, pct, target, timedClient } from '../lib.mjs';

const IMPORT_CARDS = 10_000;
const EXPORT_CARDS = 50_000;
/** Readers of the other user, each a loop of sequential detail reads. */
const READERS = 4;
/** The reader's baseline window, in ms. */
const BASELINE_MS = 3_000;

/** A JSON client of `base` as the holder of `token` (lib.mjs timedClient). */
const client = (base, token) => timedClient(base, token, 120_000);

const csvOf = (n, prefix) => `id,title,status,tags,description\n${Array.from({ length: n }, (_, i) => `${prefix}-${i},Card ${prefix} ${i},${['todo', 'doing', 'done'][i % 3]},"bench, ${prefix}",Some description of card ${i}`).join('\n')}\n`;

/** Starts an import and waits for its job; returns {ms, job}. */
async function importJob(call, body) {
  const t0 = performance.now();
  const started = await call('POST', '/api/v1/imports', body);
  if (started.status !== 202) throw new Error(`import: ${started.status} ${started.text.slice(0, 300)}`);
  const id = started.json.id;
  for (;;) {
    const job = (await call('GET', `/api/v1/imports/${id}`)).json;
    if (job.state === 'done' || job.state === 'failed') return { ms: performance.now() - t0, job };
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** RSS of `pid` in bytes (Linux /proc). */
const rss = (pid) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;

export async function importsSection(scope) {
  const dir = scope.tempDir('bench-imports-');
  // the importer and the reader: stored users (a signed token for no user is a 401)
  const [importerId, readerId] = [randomUUID(), randomUUID()];
  const server = await scope.process('bench/servers/all-in-one.mjs', { env: { DATA_DIR: dir, JWT_SECRET, BENCH_USERS: `${importerId},${readerId}` } });
  const base = `http://127.0.0.1:${server.info.port}`;
  const importerToken = accessToken(importerId);
  const importer = client(base, importerToken);
  const reader = client(base, accessToken(readerId));
  const lines = [];

  // the other user's tasks, read in a closed loop
  const ids = [];
  for (let i = 0; i < 200; i += 20) {
    const batch = await Promise.all(Array.from({ length: 20 }, (_, j) => reader('POST', '/api/v1/tasks', { title: `mine ${i + j}` })));
    const refused = batch.find((r) => r.status !== 201);
    if (refused) throw new Error(`reader's task create: ${refused.status} ${refused.text.slice(0, 300)}`);
    ids.push(...batch.map((r) => r.json.id));
  }
  const readLoop = async (until) => {
    const times = [];
    let errors = 0;
    await Promise.all(Array.from({ length: READERS }, async (_, w) => {
      for (let k = w; !until(); k++) {
        const r = await reader('GET', `/api/v1/tasks/${ids[k % ids.length]}`);
        times.push(r.ms);
        if (r.status !== 200) errors++;
      }
    }));
    return { times, errors };
  };
  // warm-up, then the baseline
  let t = performance.now();
  await readLoop(() => performance.now() - t > 1_000);
  t = performance.now();
  const baseline = await readLoop(() => performance.now() - t > BASELINE_MS);

  // the import, with the readers running until it is done
  let importing = true;
  const during = readLoop(() => !importing);
  const imported = await importJob(importer, { format: 'csv', data: csvOf(IMPORT_CARDS, 'a'), mapping: { board_name: 'bench import' } });
  importing = false;
  const load = await during;
  const p99Base = pct(baseline.times, 99);
  const p99During = pct(load.times, 99);
  lines.push('| measure | value |', '| --- | ---: |');
  lines.push(`| import of ${IMPORT_CARDS.toLocaleString('en')} cards (CSV, POST → job done) | ${(imported.ms / 1000).toFixed(2)} s (${imported.job.state}, ${imported.job.counts.cards_created} created) |`);
  lines.push(`| other user's GET detail p50 / p99 before (${READERS} readers) | ${pct(baseline.times, 50).toFixed(2)} / ${p99Base.toFixed(2)} ms (${baseline.times.length} reads) |`);
  lines.push(`| other user's GET detail p50 / p99 during the import | ${pct(load.times, 50).toFixed(2)} / ${p99During.toFixed(2)} ms (${load.times.length} reads, ${load.errors} errors) |`);
  lines.push(`| p99 during ÷ p99 before | ${(p99During / p99Base).toFixed(2)}× |`);

  // a 50,000-card board: four more imports into the importer's scope (a private board's scope is all of its owner's cards)
  for (const prefix of ['b', 'c', 'd', 'e']) await importJob(importer, { format: 'csv', data: csvOf(IMPORT_CARDS, prefix), mapping: { board_name: `bench ${prefix}` } });
  const boardId = imported.job.board_id;
  await new Promise((r) => setTimeout(r, 1_000));
  const before = rss(server.pid);
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, rss(server.pid))), 20);
  const t0 = performance.now();
  const res = await fetch(`${base}/api/v1/boards/${boardId}/export?format=json`, { headers: { authorization: `Bearer ${importerToken}` } });
  let bytes = 0;
  const chunks = [];
  for await (const chunk of res.body) {
    bytes += chunk.length;
    chunks.push(chunk);
  }
  const exportMs = performance.now() - t0;
  clearInterval(sampler);
  const cards = JSON.parse(Buffer.concat(chunks).toString('utf8')).cards.length;
  const growthMb = (peak - before) / 1024 / 1024;
  lines.push(`| export of a ${EXPORT_CARDS.toLocaleString('en')}-card board (JSON, streamed) | ${(exportMs / 1000).toFixed(2)} s, ${(bytes / 1024 / 1024).toFixed(1)} MB, ${cards.toLocaleString('en')} cards (status ${res.status}) |`);
  lines.push(`| server RSS before / peak during the export | ${(before / 1024 / 1024).toFixed(0)} / ${(peak / 1024 / 1024).toFixed(0)} MB |`);
  lines.push('');
  lines.push(target(p99During <= 2 * p99Base, "other users' read p99 during a 10,000-card import ≤ 2× their baseline", `${(p99During / p99Base).toFixed(2)}×`));
  lines.push(target(growthMb <= 100 && cards === EXPORT_CARDS, 'a 50,000-card export grows the server\'s RSS by ≤ 100 MB', `${growthMb.toFixed(1)} MB`));
  return lines;
}
