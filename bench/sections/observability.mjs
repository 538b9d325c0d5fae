// Section `observability`: what metrics and traces cost (docs/observability.md). Three all-in-one
// servers of this build, each on a fresh data dir with 200 cards on a Doing/Review board: metrics
// off (METRICS_ENABLED=false), metrics on (the default, tracing off), and metrics on with every
// request traced into the SDK's in-memory exporter (BENCH_TRACING=memory). GET detail and a card
// move at c=10, interleaved runs, paired ratios against the server with metrics off.
import { accessToken, BENCH_USER_ID, http, JWT_SECRET, measure, pairedRatio, row, TABLE_HEAD, target } from '../lib.mjs';
import { moveRequests } from './board.mjs';
import { CREATE_BODY } from './http.mjs';

/** Cards moved in rotation per server. */
const CARDS = 200;

/** Starts one server with `env` and seeds a task to read and a board of `CARDS` cards in Doing. */
async function server(scope, env, token) {
  const p = await scope.process('bench/servers/all-in-one.mjs', { env: { DATA_DIR: scope.tempDir('bench-obs-'), JWT_SECRET, ...env } });
  const base = `http://127.0.0.1:${p.info.port}`;
  const task = (await http(base, 'POST', '/api/v1/tasks', { token, body: CREATE_BODY })).json;
  const columns = [{ id: 'doing', name: 'Doing', query: "status = 'doing'" }, { id: 'review', name: 'Review', query: "status = 'review'" }];
  const board = (await http(base, 'POST', '/api/v1/boards', { token, body: { name: 'observability bench', board_type: 'private', columns } })).json;
  const movable = [];
  for (let i = 0; i < CARDS; i++) {
    const card = (await http(base, 'POST', `/api/v1/boards/${board.id}/tasks`, { token, body: { title: `card ${i}`, status: 'doing' } })).json;
    movable.push([card.id, 'doing']);
  }
  return { base, taskId: task.id, boardId: board.id, movable };
}

/**
 * Targets: GET detail and a move with metrics on (tracing off) ≥ 0.95× the same build with
 * metrics off. With tracing on (every request sampled), the cost is recorded.
 */
export async function observabilitySection(scope) {
  const token = accessToken(BENCH_USER_ID);
  const headers = { authorization: `Bearer ${token}` };
  const off = await server(scope, { METRICS_ENABLED: 'false' }, token);
  const on = await server(scope, {}, token);
  const traced = await server(scope, { BENCH_TRACING: 'memory' }, token);
  const detail = (s) => ({ url: `${s.base}/api/v1/tasks/${s.taskId}`, headers });
  const move = (s) => ({ url: s.base, requests: moveRequests(s.boardId, s.movable, headers) });
  const r = await measure({
    detailOff: detail(off), detailOn: detail(on), detailTraced: detail(traced),
    moveOff: move(off), moveOn: move(on), moveTraced: move(traced),
  });
  const detailOn = pairedRatio(r.detailOn, r.detailOff);
  const moveOn = pairedRatio(r.moveOn, r.moveOff);
  const detailTraced = pairedRatio(r.detailTraced, r.detailOff);
  const moveTraced = pairedRatio(r.moveTraced, r.moveOff);
  return [
    'Three all-in-one servers of this build (metrics off; metrics on, the default; metrics on and every request traced into the in-memory exporter), interleaved runs at c=10; ratio = req/s ÷ the metrics-off row of the same request.',
    '',
    TABLE_HEAD,
    row('GET detail, metrics off', r.detailOff, r.detailOff),
    row('GET detail, metrics on', r.detailOn, r.detailOff),
    row('GET detail, metrics on, traced', r.detailTraced, r.detailOff),
    row('move, metrics off', r.moveOff, r.moveOff),
    row('move, metrics on', r.moveOn, r.moveOff),
    row('move, metrics on, traced', r.moveTraced, r.moveOff),
    '',
    target(detailOn.value >= 0.95, 'GET detail with metrics on ≥ 0.95× metrics off', detailOn.text),
    target(moveOn.value >= 0.95, 'move with metrics on ≥ 0.95× metrics off', moveOn.text),
    `- recorded: every request traced (in-memory exporter) ÷ metrics off: GET detail ${detailTraced.text}, move ${moveTraced.text}`,
  ];
}
