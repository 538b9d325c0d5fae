// Section `leases`: cards claimed under a lease by 20 concurrent claimers on one column of the
// all-in-one server (docs/boards.md "Claiming a card under a lease"), beside 20 concurrent movers
// moving the same cards one by one: claims per second, no card claimed twice.
import { accessToken, BENCH_USER_ID, JWT_SECRET, pct, REPS, TABLE_HEAD, target, timedClient } from '../lib.mjs';

/** Concurrent claimers (and movers), each its own loop of sequential requests. */
const WORKERS = 20;
/** Cards put in the To Do column before each round. */
const CARDS = 1_000;
const COLUMNS = [
  { id: 'todo', name: 'To Do', query: "status = 'todo' ORDER BY metadata.order ASC" },
  { id: 'doing', name: 'Doing', query: "status = 'doing'" },
];

/** A JSON client of `base` as the holder of `token` (lib.mjs timedClient). */
const client = (base, token) => timedClient(base, token, 30_000);

/**
 * `WORKERS` loops calling `step(i)` until it answers `false`; returns {rps, p50, p99, errors} over
 * every call that did work (`step` resolves the call's {ms, ok} or `false` when nothing is left).
 */
async function race(step) {
  const times = [];
  let errors = 0;
  const t0 = performance.now();
  await Promise.all(Array.from({ length: WORKERS }, async () => {
    for (;;) {
      const r = await step();
      if (r === false) return;
      times.push(r.ms);
      if (!r.ok) errors++;
    }
  }));
  const s = (performance.now() - t0) / 1000;
  return { rps: times.length / s, p50: pct(times, 50), p99: pct(times, 99), errors, n: times.length };
}

/**
 * Per round ({@link REPS}): {@link CARDS} new cards in To Do; 20 claimers claim until the claim
 * answers 204 (every claimed id recorded), then 20 movers move the same cards To Do → Doing, each
 * taking the next card of a shared queue. Reports the median round of each, the ratio claims/s ÷
 * moves/s, and checks that every card was claimed exactly once in every round.
 */
export async function leasesSection(scope) {
  const dir = scope.tempDir('bench-leases-');
  const server = await scope.process('bench/servers/all-in-one.mjs', { env: { DATA_DIR: dir, JWT_SECRET } });
  const call = client(`http://127.0.0.1:${server.info.port}`, accessToken(BENCH_USER_ID));
  const board = (await call('POST', '/api/v1/boards', { name: 'leases', board_type: 'private', columns: COLUMNS })).json;

  const rounds = [];
  let exact = true;
  for (let round = 0; round < REPS; round++) {
    const cards = [];
    for (let i = 0; i < CARDS; i += WORKERS) {
      const batch = await Promise.all(Array.from({ length: Math.min(WORKERS, CARDS - i) }, (_, j) =>
        call('POST', `/api/v1/boards/${board.id}/tasks`, { title: `card ${round}.${i + j}`, status: 'todo', metadata: { order: i + j } })));
      cards.push(...batch.map((r) => r.json.id));
    }
    const claimed = [];
    const claims = await race(async () => {
      const r = await call('POST', `/api/v1/boards/${board.id}/columns/todo/claim`, { lease_seconds: 600 });
      if (r.status === 204) return false;
      if (r.status === 200) claimed.push(r.json.task.id);
      return { ms: r.ms, ok: r.status === 200 };
    });
    exact &&= claimed.length === CARDS && new Set(claimed).size === CARDS && cards.every((id) => claimed.includes(id));
    const queue = [...claimed];
    const moves = await race(async () => {
      const id = queue.shift();
      if (id === undefined) return false;
      const r = await call('POST', `/api/v1/boards/${board.id}/tasks/${id}/move`, { from_column_id: 'todo', to_column_id: 'doing' });
      return { ms: r.ms, ok: r.status === 200 };
    });
    rounds.push({ claims, moves });
  }
  const median = (key) => [...rounds].sort((a, b) => a[key].rps - b[key].rps)[Math.floor(rounds.length / 2)][key];
  const claims = median('claims');
  const moves = median('moves');
  const ratios = rounds.map((r) => r.claims.rps / r.moves.rps).sort((a, b) => a - b);
  const line = (name, r) => `| ${name} | ${Math.round(r.rps)} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${(r.rps / moves.rps).toFixed(3)} | ${r.errors} |`;
  return [
    `All-in-one server (embedded store), one board; per round ${CARDS.toLocaleString('en')} new cards in To Do (ORDER BY metadata.order), ` +
      `then ${WORKERS} claimers claim until 204, then ${WORKERS} movers move the same cards To Do → Doing. ` +
      `Median of ${REPS} rounds; ratio = req/s ÷ the moves' req/s.`,
    '',
    TABLE_HEAD,
    line(`claim (${WORKERS} claimers, one column, lease 600 s)`, claims),
    line(`card move To Do → Doing (${WORKERS} movers, distinct cards)`, moves),
    '',
    target(exact, `every card claimed exactly once in every round (${REPS} × ${CARDS.toLocaleString('en')} cards, ${WORKERS} claimers)`, exact ? 'no card twice, none missed' : 'a duplicate or a missed card'),
    target(ratios[Math.floor(ratios.length / 2)] >= 0.5, 'a claim costs ≤ 2× a card move (claims/s ÷ moves/s ≥ 0.5)',
      `${ratios[Math.floor(ratios.length / 2)].toFixed(3)} (rounds ${ratios.map((x) => x.toFixed(3)).join(', ')})`),
  ];
}
