// Section `flow`: the cumulative-flow read over a year of daily snapshots and the cycle-time read
// of 5,000 finished cards, on the 10,000-card board, beside a column read of the same server.
import { accessToken, measure, pairedRatio, row, target, TABLE_HEAD } from '../lib.mjs';
import { seedDir } from './seeded.mjs';

/**
 * c=10: POST …/columns/doing/query (2,000 cards, page 20), GET …/flow over 365 days (365
 * snapshots + today's live row), GET …/cycle-time over the year (5,000 finished cards).
 * Targets: each report costs ≤ 3× a column read (by req/s, paired runs).
 */
export async function flowSection(scope) {
  const { seed, base } = await seedDir(scope, 'flow');
  const headers = { authorization: `Bearer ${accessToken(seed.userId)}` };
  const board = `${base}/api/v1/boards/${seed.boardId}`;
  const range = `from=${seed.yearAgo}&to=${seed.today}`;
  const { column, flow, cycle } = await measure({
    column: { url: `${board}/columns/doing/query`, method: 'POST', headers, body: '{}' },
    flow: { url: `${board}/flow?${range}`, headers },
    cycle: { url: `${board}/cycle-time?${range}`, headers },
  });
  const flowCost = pairedRatio(column, flow);
  const cycleCost = pairedRatio(column, cycle);
  return [
    `Board of 10,000 cards (6 columns), 365 daily snapshots, ${seed.finished.toLocaleString('en')} finished cards with 4 moves each; ` +
      `loaded in ${(seed.loadMs / 1000).toFixed(1)} s. c=10; ratio = req/s ÷ column read.`,
    '',
    TABLE_HEAD,
    row('column read (doing, 2,000 cards, page 20)', column, column),
    row('GET …/flow, 365 days (today live)', flow, column),
    row(`GET …/cycle-time, ${seed.finished.toLocaleString('en')} finished cards`, cycle, column),
    '',
    target(flowCost.value <= 3, 'the cumulative flow of a year costs ≤ 3× a column read (column req/s ÷ flow req/s)', flowCost.text),
    target(cycleCost.value <= 3, 'the cycle time of 5,000 finished cards costs ≤ 3× a column read (column req/s ÷ cycle-time req/s)', cycleCost.text),
  ];
}
