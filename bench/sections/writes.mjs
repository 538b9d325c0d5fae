// Section `writes`: the cost of safe writes on the all-in-one server. PATCH with
// and without If-Match, create with and without Idempotency-Key, a 100-task batch create vs 100
// single creates, and — when BENCH_WRITES_BASE names a built checkout from before the events outbox
// and document versions (docs/bench.md "writes") — PATCH, move and create on that build beside ours,
// to price the events outbox and the versions every write carries; the writes targets compare it with ours
// at EMBEDDED_SYNC=normal (the durability that build had), ours at the default `full` is recorded.
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { accessToken, BENCH_USER_ID, http, JWT_SECRET, measure, pairedRatio, row, TABLE_HEAD, target } from '../lib.mjs';
import { moveRequests } from './board.mjs';
import { CREATE_BODY } from './http.mjs';

/** Tasks PATCHed in rotation, and cards moved in rotation, per server. */
const ROTATION = 200;

/**
 * Starts an all-in-one server (`root`: a checkout with its build; '' = this one) on a fresh data
 * dir; `sync`: its `EMBEDDED_SYNC` (default: the server's own default). Returns its base URL.
 */
export async function writesServer(scope, root, sync) {
  const dir = scope.tempDir('bench-writes-');
  const p = await scope.process(join(root, 'bench/servers/all-in-one.mjs'), { env: { DATA_DIR: dir, JWT_SECRET, ...(sync ? { EMBEDDED_SYNC: sync } : {}) } });
  return `http://127.0.0.1:${p.info.port}`;
}

/**
 * Seeds `ROTATION` tasks to PATCH and a Doing/Review board with `ROTATION` cards to move, through
 * the HTTP API of `base` as the user of `token`; returns {tasks, boardId, movable}.
 */
export async function writesSeed(base, token) {
  const tasks = [];
  for (let i = 0; i < ROTATION; i++) tasks.push((await http(base, 'POST', '/api/v1/tasks', { token, body: { ...CREATE_BODY, title: `patch ${i}` } })).json);
  const columns = [{ id: 'doing', name: 'Doing', query: "status = 'doing'" }, { id: 'review', name: 'Review', query: "status = 'review'" }];
  const board = (await http(base, 'POST', '/api/v1/boards', { token, body: { name: 'writes bench', board_type: 'private', columns } })).json;
  const movable = [];
  for (let i = 0; i < ROTATION; i++) {
    const card = (await http(base, 'POST', `/api/v1/boards/${board.id}/tasks`, { token, body: { title: `card ${i}`, status: 'doing' } })).json;
    movable.push([card.id, 'doing']);
  }
  return { tasks, boardId: board.id, movable };
}

/**
 * Autocannon requests PATCHing a different task each time (a new title, so every write changes a
 * field and emits `task.updated`); with `ifMatch` each carries the version its last answer named.
 */
function patchRequests(tasks, headers, ifMatch) {
  const idle = tasks.map((t) => ({ id: t.id, version: t.version ?? 1 }));
  let n = 0;
  return [
    {
      method: 'PATCH',
      headers: { 'content-type': 'application/json', ...headers },
      setupRequest: (req) => {
        const t = idle.shift();
        const h = ifMatch ? { ...req.headers, 'if-match': `"${t.version}"` } : req.headers;
        return { ...req, headers: h, path: `/api/v1/tasks/${t.id}`, body: JSON.stringify({ title: `title ${n++}` }) };
      },
      onResponse: (status, body) => {
        const json = JSON.parse(body);
        idle.push({ id: json.id ?? json.details?.taskId, version: json.version ?? json.details?.current_version });
      },
    },
  ];
}

/**
 * Autocannon requests creating a task. `perRequest` names a header given a new UUID on every
 * request (`idempotency-key`, or `x-bench-nonce`, which the server ignores); without it the
 * request is fixed. The keyed create is compared with the nonce create: autocannon sends a fixed
 * request from a prebuilt buffer but rebuilds each one `setupRequest` changes, and that client
 * work (on the same 2 CPUs as the server) is not the key's cost.
 */
function createRequests(headers, perRequest) {
  const body = JSON.stringify(CREATE_BODY);
  return [
    {
      method: 'POST',
      path: '/api/v1/tasks',
      headers: { 'content-type': 'application/json', ...headers },
      body,
      ...(perRequest ? { setupRequest: (req) => ({ ...req, headers: { ...req.headers, [perRequest]: randomUUID() } }) } : {}),
    },
  ];
}

/**
 * The PATCH, PATCH with If-Match and move loads on the server at `base` seeded by
 * {@link writesSeed} (`s`); `headers` carry the seeding user's token.
 */
export function writeLoads(base, s, headers) {
  return {
    patch: { url: base, requests: patchRequests(s.tasks, headers, false) },
    patchIfMatch: { url: base, requests: patchRequests(s.tasks, headers, true) },
    move: { url: base, requests: moveRequests(s.boardId, s.movable, headers) },
  };
}

/**
 * The create loads on the server at `base`: plain, with a per-request nonce header, with an
 * Idempotency-Key, and a 100-task batch (its req/s × 100 = tasks/s).
 */
export function createLoads(base, headers) {
  const batchBody = JSON.stringify({ tasks: Array.from({ length: 100 }, (_, i) => ({ ...CREATE_BODY, title: `batch ${i}` })) });
  return {
    create: { url: base, requests: createRequests(headers) },
    createNonce: { url: base, requests: createRequests(headers, 'x-bench-nonce') },
    createKey: { url: base, requests: createRequests(headers, 'idempotency-key') },
    batch: { url: `${base}/api/v1/tasks/batch`, method: 'POST', headers, body: batchBody },
  };
}

/**
 * c=10, ratio = req/s ÷ the row named. Targets: PATCH with If-Match and create with an
 * Idempotency-Key cost ≤ 1.15× and ≤ 1.3× the plain request; a 100-task batch creates tasks ≥ 5× faster
 * than 100 single creates. With a base build: a PATCH and a move cost ≤ 1.2× before.
 */
export async function writesSection(scope) {
  const baseRoot = process.env.BENCH_WRITES_BASE;
  if (baseRoot && !existsSync(join(baseRoot, 'services/gateway/dist/app.js'))) throw new Error(`BENCH_WRITES_BASE=${baseRoot} has no build (npm run build there)`);
  const token = accessToken(BENCH_USER_ID);
  const headers = { authorization: `Bearer ${token}` };
  const ours = await writesServer(scope, '');
  const before = baseRoot ? await writesServer(scope, baseRoot) : undefined;
  // the build before the outbox and versions acknowledged a write once SQLite had it (synchronous=NORMAL);
  // ours in `normal` is the like-for-like write, the default `full` adds the WAL fsync
  const oursNormal = baseRoot ? await writesServer(scope, '', 'normal') : undefined;
  const s = await writesSeed(ours, token);
  const b = before ? await writesSeed(before, token) : undefined;
  const n = oursNormal ? await writesSeed(oursNormal, token) : undefined;

  const writeSpecs = {
    ...writeLoads(ours, s, headers),
    ...(b && n ? {
      basePatch: { url: before, requests: patchRequests(b.tasks, headers, false) },
      baseMove: { url: before, requests: moveRequests(b.boardId, b.movable, headers) },
      normalPatch: { url: oursNormal, requests: patchRequests(n.tasks, headers, false) },
      normalMove: { url: oursNormal, requests: moveRequests(n.boardId, n.movable, headers) },
    } : {}),
  };
  const w = await measure(writeSpecs);

  const createSpecs = {
    ...createLoads(ours, headers),
    ...(b ? { baseCreate: { url: before, requests: createRequests(headers) } } : {}),
  };
  const c = await measure(createSpecs);

  const ifMatchCost = pairedRatio(w.patch, w.patchIfMatch);
  const keyCost = pairedRatio(c.createNonce, c.createKey);
  const batchTasks = { ...c.batch, rps: c.batch.rps * 100, rpsRuns: c.batch.rpsRuns.map((r) => r * 100) };
  const batchGain = pairedRatio(batchTasks, c.create);
  const lines = [
    `All-in-one server (embedded store, in-process bus), c=10; each write changes a field and emits its event. ` +
      `PATCH and move rotate over ${ROTATION} tasks / cards. ratio = req/s ÷ the row named in brackets.`,
    '',
    TABLE_HEAD,
    row('PATCH /tasks/{id}', w.patch, w.patch),
    row('PATCH /tasks/{id} with If-Match [PATCH]', w.patchIfMatch, w.patch),
    row('card move Doing ⇄ Review', w.move, w.move),
    row('POST /tasks', c.create, c.create),
    row('POST /tasks, a new x-bench-nonce header per request [POST]', c.createNonce, c.create),
    row('POST /tasks with Idempotency-Key [nonce]', c.createKey, c.createNonce),
    row('POST /tasks/batch, 100 tasks (req/s) [POST]', c.batch, c.create),
    `| … the same in tasks/s [POST] | ${Math.round(batchTasks.rps)} | | | ${(batchTasks.rps / c.create.rps).toFixed(3)} | |`,
  ];
  if (b) {
    lines.push(
      row('before the outbox and versions: PATCH /tasks/{id} [PATCH]', w.basePatch, w.patch),
      row('before the outbox and versions: card move [move]', w.baseMove, w.move),
      row('before the outbox and versions: POST /tasks [POST]', c.baseCreate, c.create),
      row('ours, EMBEDDED_SYNC=normal: PATCH /tasks/{id} [PATCH]', w.normalPatch, w.patch),
      row('ours, EMBEDDED_SYNC=normal: card move [move]', w.normalMove, w.move),
    );
  }
  lines.push(
    '',
    target(ifMatchCost.value <= 1.15, 'PATCH with If-Match costs ≤ 1.15× one without (PATCH req/s ÷ If-Match req/s)', ifMatchCost.text),
    target(keyCost.value <= 1.3, 'create with Idempotency-Key costs ≤ 1.3× one without (the nonce create: the same client work)', keyCost.text),
    target(batchGain.value >= 5, 'a 100-task batch creates ≥ 5× the tasks/s of single creates', batchGain.text),
  );
  if (b) {
    // the price of events, like for like: ours at the durability the build before had (normal)
    const patchCost = pairedRatio(w.basePatch, w.normalPatch);
    const moveCost = pairedRatio(w.baseMove, w.normalMove);
    const patchFull = pairedRatio(w.basePatch, w.patch);
    const moveFull = pairedRatio(w.baseMove, w.move);
    lines.push(
      target(patchCost.value <= 1.2, 'a PATCH with versions and events costs ≤ 1.2× the PATCH before, both acknowledged at synchronous=NORMAL (before req/s ÷ ours)', patchCost.text),
      target(moveCost.value <= 1.2, 'a move with versions and events costs ≤ 1.2× the move before, both at NORMAL', moveCost.text),
      `- recorded: with the default durable acknowledgement (full) beside the build before: PATCH ${patchFull.text}, move ${moveFull.text}`,
    );
  } else {
    lines.push('- (no BENCH_WRITES_BASE: the rows of the build without events and versions are left out; see docs/bench.md "writes")');
  }
  return lines;
}
