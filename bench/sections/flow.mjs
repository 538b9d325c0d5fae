// Section `flow`: the cumulative-flow read over a year of daily snapshots and the cycle-time read
// of 5,000 finished cards, on the 10,000-card board, beside a column read of the same server.
import { accessToken, http, JWT_SECRET, measure, pairedRatio, row, target, TABLE_HEAD } from '../lib.mjs';
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

/** Boards that hold the measured task in the `flowwrites` section. */
const HOLDING_BOARDS = 20;

/**
 * Section `flowwrites` (docs/flow.md "Cost"): what recording column changes from every write costs
 * a PATCH. Two users on one all-in-one server (its query service records the flow history in the
 * background, every 250 ms): one with 20 boards (default columns, no default tags, so each holds
 * all of its tasks), one with none. c=10 PATCHes alternate a task's status `todo` ↔ `doing`, so on
 * each of the 20 boards every PATCH moves the card between To Do and Doing (a move record and a
 * place write per board); the other task changes the same way on no board. Ratio = req/s of the
 * PATCH on the task held by 20 boards ÷ the PATCH on the task held by none (paired runs).
 */
export async function flowWritesSection(scope) {
  const dir = scope.tempDir('bench-flowwrites-');
  const aio = await scope.process('bench/servers/all-in-one.mjs', { env: { DATA_DIR: dir, JWT_SECRET } });
  const base = `http://127.0.0.1:${aio.info.port}`;
  const user = async (name) => {
    await http(base, 'POST', '/auth/v2/register', { body: { username: name, password: 'bench password 1' } });
    return (await http(base, 'POST', '/auth/v2/login', { body: { username: name, password: 'bench password 1' } })).json.accessToken;
  };
  const [held, alone] = [await user('flow-boards'), await user('flow-none')];
  for (let i = 0; i < HOLDING_BOARDS; i++) await http(base, 'POST', '/api/v1/boards', { token: held, body: { name: `View ${i}`, board_type: 'private' } });
  const heldTask = (await http(base, 'POST', '/api/v1/tasks', { token: held, body: { title: 'held', status: 'todo' } })).json.id;
  const aloneTask = (await http(base, 'POST', '/api/v1/tasks', { token: alone, body: { title: 'alone', status: 'todo' } })).json.id;
  const spec = (token, id) => ({
    url: `${base}/api/v1/tasks/${id}`, method: 'PATCH', headers: { authorization: `Bearer ${token}` },
    requests: [{ method: 'PATCH', body: '{"status":"doing"}' }, { method: 'PATCH', body: '{"status":"todo"}' }],
  });
  const { onBoards, onNone } = await measure({ onBoards: spec(held, heldTask), onNone: spec(alone, aloneTask) });
  const ratio = pairedRatio(onBoards, onNone);
  // the history did record the changes: the held card finished nothing, but it moved on every board
  const cycle = await http(base, 'GET', `/api/v1/boards/${(await http(base, 'GET', '/api/v1/boards', { token: held })).json.owned_boards[0].id}/cycle-time`, { token: held });
  if (cycle.status !== 200) throw new Error(`cycle-time after the PATCHes: ${cycle.status}`);
  return [
    `A task held by ${HOLDING_BOARDS} boards (each PATCH moves it between two columns of every one) vs a task held by none; c=10, PATCHes alternating status todo ↔ doing; ratio = req/s ÷ the task held by none. The flow history is recorded in the background of the same process.`,
    '',
    TABLE_HEAD,
    row('PATCH, task held by no board', onNone, onNone),
    row(`PATCH, task held by ${HOLDING_BOARDS} boards`, onBoards, onNone),
    '',
    target(ratio.value >= 0.5, `a PATCH of a task held by ${HOLDING_BOARDS} boards ≥ 0.5× one held by none (req/s)`, ratio.text),
  ];
}
