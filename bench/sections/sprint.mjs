// Section `sprint` (issue 5): close-sprint in-process (MemoryBus + EmbeddedStore, no HTTP): time per
// close and store round trips per close for 100 vs 1,000 members, beside a task detail read.
import { randomUUID } from 'node:crypto';
import { sprintsService } from '@app/sprints';
import { tasksService } from '@app/tasks';
import { MemoryBus } from '@app/shared/bus';
import { SprintsOps, TasksOps } from '@app/shared/contracts';
import { silentLogger } from '@app/shared/log';
import { serveServices } from '@app/shared/runtime';
import { Collections, EmbeddedStore } from '@app/shared/store';
import { pct, row, target, TABLE_HEAD, timeCalls } from '../lib.mjs';
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
  ];
}
