// Section `sprint`: close-sprint in-process (MemoryBus + EmbeddedStore, no HTTP): time per
// close and store round trips per close for 100 vs 1,000 members, beside a task detail read; then the
// sprint report, velocity history and sprint list of a board with 50 closed sprints of 200 members.
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { sprintsService } from '@app/sprints';
import { tasksService } from '@app/tasks';
import { MemoryBus } from '@app/shared/bus';
import { SprintsOps, TasksOps } from '@app/shared/contracts';
import { silentLogger } from '@app/shared/log';
import { serveServices } from '@app/shared/runtime';
import { Collections, EmbeddedStore, escapeKey } from '@app/shared/store';
import { accessToken, ensureBenchUsers, http, JWT_SECRET, measure, pct, row, target, TABLE_HEAD, timeCalls } from '../lib.mjs';
import { insertChunks, rng, taskDoc } from '../seed.mjs';

/** Closes measured per size, after one warm-up close. */
const CLOSES = 5;
const SIZES = [100, 1_000];
const BOARDS_PER_SPRINT = 5;
const UNFINISHED = 0.4;

/** A private board of `owner` whose active sprint is `sprintId` (BoardDoc shape). */
function boardDoc(owner, sprintId, n) {
  const at = new Date().toISOString();
  return {
    _id: randomUUID(), name: `Team board ${n}`, board_type: 'private', owner_id: owner, columns: [], default_tags: [], metadata: {},
    activeSprintId: sprintId, created_at: at, created_by: owner, updated_at: at, updated_by: owner,
  };
}

/** A sprint of `owner` with `size` members (40 % unfinished, finished ones with points) and its boards. */
function sprintFixture(r, owner, size, n) {
  const sprint = taskDoc(r, owner, { title: `Sprint ${n}`, status: 'doing', deleted: false }, { 'app.type': 'sprint' });
  const members = Array.from({ length: size }, (_, i) => {
    const unfinished = i < size * UNFINISHED;
    return taskDoc(r, owner, { status: unfinished ? r.pick(['todo', 'doing', 'review']) : 'done', deleted: false }, {
      'app.sprint': sprint._id, 'app.points': r.pick([1, 2, 3, 5, 8]),
    });
  });
  const boards = Array.from({ length: BOARDS_PER_SPRINT }, (_, i) => boardDoc(owner, sprint._id, i));
  return { sprint, members, boards };
}

/**
 * Per size: one open target sprint and 1 + {@link CLOSES} sprints on 5 boards each, among 20,000
 * other tasks; each close rolls the unfinished members over to the target. Reports the median
 * close time (p99 column = slowest), round trips per close (`store.stats.roundTrips`), and a
 * sequential `tasks.get` over the same bus as the base.
 */
export async function sprintSection(scope) {
  const log = silentLogger();
  const store = await EmbeddedStore.open({ dir: scope.tempDir('bench-sprint-'), log });
  scope.add(() => store.close());
  const bus = new MemoryBus();
  scope.add(() => bus.close());
  await serveServices([tasksService, sprintsService], { bus, store, log });

  const r = rng(5);
  const owner = randomUUID();
  for (let u = 0; u < 20; u++) await insertChunks(store, Collections.tasks, Array.from({ length: 1_000 }, () => taskDoc(r, randomUUID())));
  const plans = [];
  for (const size of SIZES) {
    const next = taskDoc(r, owner, { title: `Next sprint (${size})`, status: 'todo', deleted: false }, { 'app.type': 'sprint' });
    const fixtures = Array.from({ length: 1 + CLOSES }, (_, i) => sprintFixture(r, owner, size, i));
    await insertChunks(store, Collections.tasks, [next, ...fixtures.flatMap((f) => [f.sprint, ...f.members])]);
    await insertChunks(store, Collections.boards, fixtures.flatMap((f) => f.boards));
    plans.push({ size, next, fixtures });
  }

  const detailId = plans[0].fixtures[0].members[0]._id;
  const detail = await timeCalls(() => bus.request(TasksOps.get, { taskId: detailId }, { userId: owner }), { n: 3_000 });

  const rows = [];
  const trips = {};
  for (const { size, next, fixtures } of plans) {
    const times = [];
    const roundTrips = [];
    let errors = 0;
    for (const [i, { sprint }] of fixtures.entries()) {
      const before = store.stats.roundTrips;
      const t0 = performance.now();
      const res = await bus.request(SprintsOps.close, { sprintId: sprint._id, rollover: next._id }, { userId: owner });
      const ms = performance.now() - t0;
      const ok = res.rolledOver === size * UNFINISHED && res.completed === size - size * UNFINISHED && res.rotatedBoardIds.length === BOARDS_PER_SPRINT;
      if (!ok) errors++;
      if (i === 0) continue; // warm-up
      times.push(ms);
      roundTrips.push(store.stats.roundTrips - before);
    }
    trips[size] = Math.max(...roundTrips);
    const mean = times.reduce((a, b) => a + b, 0) / times.length;
    const result = { rps: 1000 / mean, p50: pct(times, 50), p99: Math.max(...times), n: times.length, errors, non2xx: 0 };
    rows.push(row(`close-sprint, ${size.toLocaleString('en')} members (${size * UNFINISHED} unfinished), ${BOARDS_PER_SPRINT} boards — ${trips[size]} round trips`, result, detail));
  }

  const [small, large] = SIZES;
  // The reports part loads an HTTP server from this process: the in-process store is not kept
  // (nor its documents in this process's heap while autocannon runs).
  await bus.close();
  await store.close();
  const reports = await reportsPart(scope);
  return [
    `In-process: MemoryBus + EmbeddedStore (file in a temp dir), no HTTP; 20,000 other tasks in the store. ` +
      `Closes: median of ${CLOSES} fresh sprints per size after one warm-up (p99 column = slowest); req/s = closes per second. ` +
      'Base: sequential `tasks.get` over the same bus; ratio = req/s ÷ base.',
    '',
    TABLE_HEAD,
    row('task detail `tasks.get` via the bus (sequential)', detail, detail),
    ...rows,
    '',
    target(trips[large] <= trips[small], `store round trips per close do not grow with members (${small.toLocaleString('en')} → ${large.toLocaleString('en')})`, `${trips[small]} → ${trips[large]}`),
    '',
    ...reports,
  ];
}

/** Closed sprints on the reports board, and members per sprint . */
const REPORT_SPRINTS = 50;
const REPORT_MEMBERS = 200;

/**
 * The reports fixture, seeded into `dir` (run in its own process, see the end of this file): one
 * board with {@link REPORT_SPRINTS} sprints of {@link REPORT_MEMBERS} members, each created on the
 * board, started (the first by the start op, each next one by the close that rolls into it),
 * changed during the sprint (10 members leave, 10 join, 60 % done) and closed through the real
 * ops with its unfinished members rolled into the next sprint, among 20,000 other
 * tasks. Returns the ids the loads need and the seeding time.
 */
async function seedReports(dir) {
  const log = silentLogger();
  const store = await EmbeddedStore.open({ dir, log });
  const bus = new MemoryBus();
  const served = await serveServices([tasksService, sprintsService], { bus, store, log });
  const r = rng(12);
  const owner = randomUUID();
  await ensureBenchUsers(store, [owner]);
  const as = { userId: owner };
  const at = new Date().toISOString();
  const board = { ...boardDoc(owner, undefined, 'reports'), created_at: at };
  delete board.activeSprintId;
  await store.collection(Collections.boards).insertOne(board);
  for (let u = 0; u < 20; u++) await insertChunks(store, Collections.tasks, Array.from({ length: 1_000 }, () => taskDoc(r, randomUUID())));
  const tasks = store.collection(Collections.tasks);
  const sprintPath = `metadata.${escapeKey('app.sprint')}`;

  const t0 = performance.now();
  const sprintIds = [];
  for (let i = 0; i < REPORT_SPRINTS + 1; i++) sprintIds.push((await bus.request(SprintsOps.create, { boardId: board._id, title: `Sprint ${i + 1}` }, as)).id);
  const memberOf = (sprintId) => taskDoc(r, owner, { status: 'todo', deleted: false }, { 'app.sprint': sprintId, 'app.points': r.pick([1, 2, 3, 5, 8]) });
  // The first sprint is started here; each close starts the next (planned) one with its rolled-over
  // members, so the next sprint's other members are planned into it before the close.
  await insertChunks(store, Collections.tasks, Array.from({ length: REPORT_MEMBERS }, () => memberOf(sprintIds[0])));
  await bus.request(SprintsOps.start, { sprintId: sprintIds[0], board_ids: [board._id] }, as);
  for (let i = 0; i < REPORT_SPRINTS; i++) {
    const sprintId = sprintIds[i];
    const members = (await tasks.find({ [sprintPath]: sprintId, deleted: false }, { projection: { _id: 1 } })).map((t) => t._id);
    await tasks.updateMany({ _id: { $in: members.slice(0, 10) } }, { $unset: { [sprintPath]: '' } });
    await insertChunks(store, Collections.tasks, Array.from({ length: 10 }, () => memberOf(sprintId)));
    await tasks.updateMany({ _id: { $in: members.slice(10, 10 + Math.round(REPORT_MEMBERS * 0.6)) } }, { $set: { status: 'done' } });
    const unfinished = await tasks.countDocuments({ [sprintPath]: sprintId, deleted: false, status: { $ne: 'done' } });
    await insertChunks(store, Collections.tasks, Array.from({ length: REPORT_MEMBERS - unfinished }, () => memberOf(sprintIds[i + 1])));
    const closed = await bus.request(SprintsOps.close, { sprintId, rollover: sprintIds[i + 1] }, as);
    if (closed.rolledOver !== unfinished || closed.startedSprintId !== sprintIds[i + 1]) {
      throw new Error(`reports fixture: closing sprint ${i + 1} rolled ${closed.rolledOver} (expected ${unfinished}) and started ${closed.startedSprintId}`);
    }
  }
  const seedS = ((performance.now() - t0) / 1000).toFixed(1);
  const middle = sprintIds[Math.floor(REPORT_SPRINTS / 2)];
  const detailId = (await tasks.findOne({ [sprintPath]: sprintIds[REPORT_SPRINTS] }))._id;
  for (const sv of served) await sv.close();
  await bus.close();
  await store.close();
  return { owner, boardId: board._id, middle, detailId, seedS };
}

/**
 * Seeds the {@link seedReports} fixture (this module run as its own process, from `root`: a
 * checkout with its build, '' = this one), starts that checkout's all-in-one server on it and
 * checks the fixture through HTTP. Returns {specs, seedS}: the load specs detail, report, velocity
 * and list, and the seeding time in seconds. Throws when the fixture is not what it should be.
 */
export async function reportsServer(scope, root = '') {
  const dir = scope.tempDir('bench-sprint-reports-');
  const seeder = await scope.process(join(root, 'bench/sections/sprint.mjs'), { args: ['seed-reports', dir], timeoutMs: 300_000 });
  await seeder.stop(); // it exits by itself after READY; this waits for that
  const { owner, boardId, middle, detailId, seedS } = seeder.info;

  const server = await scope.process(join(root, 'bench/servers/all-in-one.mjs'), { env: { DATA_DIR: dir, JWT_SECRET } });
  const base = `http://127.0.0.1:${server.info.port}`;
  const token = accessToken(owner);
  const report = (await http(base, 'GET', `/api/v1/tasks/${middle}/report`, { token })).json;
  const velocity = (await http(base, 'GET', `/api/v1/boards/${boardId}/velocity?last=50`, { token })).json;
  const listed = (await http(base, 'GET', `/api/v1/boards/${boardId}/sprints`, { token })).json;
  if (report.live !== false || report.committed.length !== REPORT_MEMBERS || velocity.sprints.length !== REPORT_SPRINTS || listed.length !== REPORT_SPRINTS + 1) {
    throw new Error(`reports bench fixture is not what it should be: ${JSON.stringify({ committed: report.committed?.length, velocity: velocity.sprints?.length, listed: listed.length })}`);
  }
  const headers = { authorization: `Bearer ${token}` };
  const specs = {
    detail: { url: `${base}/api/v1/tasks/${detailId}`, headers },
    report: { url: `${base}/api/v1/tasks/${middle}/report`, headers },
    velocity: { url: `${base}/api/v1/boards/${boardId}/velocity?last=50`, headers },
    list: { url: `${base}/api/v1/boards/${boardId}/sprints`, headers },
  };
  return { specs, seedS };
}

/**
 * The {@link seedReports} fixture is written by this module run as its own process (as
 * the query and board sections seed theirs), so neither its documents nor its garbage stay in the
 * process that generates the load; then the all-in-one server starts on it and c=10 HTTP loads
 * read a task detail, the report of a closed sprint, the velocity history (`last=50`) and the
 * board's sprint list, each spec's runs consecutive after a warm-up (one server: the garbage a
 * spec leaves is not charged to the next one's measured runs). Targets: report p50 within 2×
 * the detail's, velocity p50 within 3×.
 */
async function reportsPart(scope) {
  const { specs, seedS } = await reportsServer(scope);
  const m = await measure(specs, { interleave: false, duration: 3 });
  const times = (k) => m[k].p50 / m.detail.p50;
  return [
    `Reports: one board, ${REPORT_SPRINTS} sprints of ${REPORT_MEMBERS} members created, started, changed (10 leave, 10 join, 60 % done) ` +
      `and closed through the ops, unfinished work rolled into the next sprint (${seedS} s), among 20,000 other tasks; then the all-in-one server ` +
      'on that data. HTTP, c=10, 3 runs of 3 s each; ratio = req/s ÷ GET detail.',
    '',
    TABLE_HEAD,
    row('GET /tasks/{id}', m.detail, m.detail),
    row(`GET /tasks/{sprintId}/report (closed sprint: 200 committed, 10 added, 10 removed) — p50 ${times('report').toFixed(2)}× detail`, m.report, m.detail),
    row(`GET /boards/{id}/velocity?last=50 (50 closed sprints) — p50 ${times('velocity').toFixed(2)}× detail`, m.velocity, m.detail),
    row(`GET /boards/{id}/sprints (51 sprints, 1 open with 200 members) — p50 ${times('list').toFixed(2)}× detail`, m.list, m.detail),
    '',
    target(times('report') <= 2, 'sprint report p50 within 2× a GET task detail', `${times('report').toFixed(2)}×`),
    target(times('velocity') <= 3, 'velocity history p50 within 3× a GET task detail', `${times('velocity').toFixed(2)}×`),
  ];
}

// As a process: `node bench/sections/sprint.mjs seed-reports <dir>` seeds the reports fixture into
// <dir>, closes it and prints `READY <json>` (the ids the loads need).
if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [kind, dir] = process.argv.slice(2);
  if (kind !== 'seed-reports' || !dir) {
    console.error('usage: node bench/sections/sprint.mjs seed-reports <dir>');
    process.exit(2);
  }
  console.log(`READY ${JSON.stringify(await seedReports(dir))}`);
  process.exit(0);
}
