// Section `board`: column read, board summary and card move on a 6-column board with
// 10,000 cards, beside a task detail read from the same server.
import { accessToken, measure, pairedRatio, row, target, TABLE_HEAD } from '../lib.mjs';
import { seedDir } from './seeded.mjs';

/** The column read and the moves use these columns of `BOARD_COLUMNS` (bench/seed.mjs). */
const READ_COLUMN = 'doing';
const OTHER = { doing: 'review', review: 'doing' };

/**
 * Autocannon requests that move a different card each time: an idle card is taken from a queue and
 * moved to the other of Doing/Review; its reply (200, or 409 with the snapshot) puts it back with
 * its new column, so every card alternates direction pass after pass.
 */
export function moveRequests(boardId, movable, headers) {
  const idle = movable.map(([id, col]) => ({ id, col }));
  let next = 0;
  return [
    {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      setupRequest: (req) => {
        const card = idle[next++ % idle.length];
        return { ...req, path: `/api/v1/boards/${boardId}/tasks/${card.id}/move`, body: JSON.stringify({ from_column_id: card.col, to_column_id: OTHER[card.col] }) };
      },
      onResponse: (status, body) => {
        const task = status === 200 || status === 409 ? JSON.parse(body).task : undefined;
        if (task) idle.push({ id: task.id, col: task.status === 'review' ? 'review' : 'doing' });
      },
    },
  ];
}

/**
 * The board section's load specs on a server at `base` seeded by `bench/seed.mjs board` (`seed`:
 * its READY info): detail, column, summary, boardTasks and move, in that order.
 */
export function boardSpecs(seed, base) {
  const headers = { authorization: `Bearer ${accessToken(seed.userId)}` };
  const board = `${base}/api/v1/boards/${seed.boardId}`;
  return {
    detail: { url: `${base}/api/v1/tasks/${seed.detailId}`, headers },
    column: { url: `${board}/columns/${READ_COLUMN}/query`, method: 'POST', headers, body: '{}' },
    summary: { url: `${board}/summary`, headers },
    boardTasks: { url: `${board}/tasks`, headers },
    move: { url: base, requests: moveRequests(seed.boardId, seed.movable, headers) },
  };
}

/**
 * c=10: GET /api/v1/tasks/{id} (a card), POST …/columns/doing/query (2,000 cards, page 20),
 * GET …/summary (6 columns, preview 3), GET …/tasks (ud's board read: 6 columns, 20 full tasks
 * each), POST …/tasks/{taskId}/move (Doing ⇄ Review).
 * Targets: a move costs ≤ 3.5× a detail read; the summary ≤ 3× one column read; the board read ≤ the
 * 6 column reads it replaces (by req/s).
 */
export async function boardSection(scope) {
  const { seed, base } = await seedDir(scope, 'board');
  const { detail, column, summary, boardTasks, move } = await measure(boardSpecs(seed, base), { interleave: false });

  const moveCost = pairedRatio(detail, move);
  const summaryCost = pairedRatio(column, summary);
  const boardTasksCost = pairedRatio(column, boardTasks);
  return [
    `Board: 6 columns (status/tag queries, ORDER BY metadata.order), 10,000 cards of its owner, no active sprint; ` +
      `store of ${(30_000).toLocaleString('en')} tasks, loaded in ${(seed.loadMs / 1000).toFixed(1)} s. c=10; ratio = req/s ÷ GET detail.`,
    '',
    TABLE_HEAD,
    row('GET /tasks/{id}', detail, detail),
    row(`column read (${READ_COLUMN}, 2,000 cards, page 20)`, column, detail),
    row('board summary (6 columns, preview 3)', summary, detail),
    row('board read GET …/tasks (6 columns × 20 full tasks)', boardTasks, detail),
    row('card move Doing ⇄ Review', move, detail),
    '',
    target(moveCost.value <= 3.5, 'a move costs ≤ 3.5× a task detail read (detail req/s ÷ move req/s)', moveCost.text),
    target(summaryCost.value <= 3, 'the 6-column summary costs ≤ 3× one column read (column req/s ÷ summary req/s)', summaryCost.text),
    target(boardTasksCost.value <= 6, 'the board read costs ≤ the 6 column reads it replaces (column req/s ÷ board-read req/s ≤ 6)', boardTasksCost.text),
  ];
}
