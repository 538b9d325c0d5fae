import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SprintsOps } from '@app/shared/contracts';
import type { TaskDoc } from '@app/shared/domain';
import { Collections, escapeKey, metadataPath, type DocumentStore } from '@app/shared/store';
import { testStore } from '@app/shared/testing';
import { aBoard, aGroup, aMember, aSprint, aTask, NOW, reads, seed, serveSprints, users } from '../fixtures.js';

let store: DocumentStore;
let svc: Awaited<ReturnType<typeof serveSprints>>;
let u: ReturnType<typeof users>;

beforeEach(async () => {
  store = await testStore();
  svc = await serveSprints(store);
  u = users();
});
afterEach(async () => {
  await svc.bus.close();
  await store.close();
});

const tasks = () => store.collection<TaskDoc>(Collections.tasks);
const setStatus = (id: string, status: string) => tasks().updateOne({ _id: id }, { $set: { status } });
const setSprint = (id: string, sprintId: string) => tasks().updateOne({ _id: id }, { $set: { [metadataPath('app.sprint')]: sprintId } });
const leaveSprint = (id: string) => tasks().updateOne({ _id: id }, { $unset: { [metadataPath('app.sprint')]: '' } });
const carried = async (id: string) => (await reads(store).task(id))?.metadata[escapeKey('app.carried')];

describe('create a sprint on a board', () => {
  it('creates the sprint task on the board (goal as app.goal, default tags); start: true also starts it and makes it active', async () => {
    const board = { ...aBoard({ owner: u.alice }), default_tags: ['team-a'] };
    await seed(store, { boards: [board] });

    const planned = await svc.call(SprintsOps.create, u.alice, { boardId: board._id, title: '  Sprint 1 ', goal: 'Ship search', deadline: '2026-03-27' });
    expect(planned).toMatchObject({ title: 'Sprint 1', status: 'todo', tags: ['team-a'], metadata: { 'app.type': 'sprint', 'app.goal': 'Ship search' }, deadline: '2026-03-27T00:00:00.000Z' });
    expect((await reads(store).board(board._id))?.activeSprintId).toBeUndefined();

    const later = '2026-03-13T17:01:00.000Z';
    svc.clock.set(later);
    const running = await svc.call(SprintsOps.create, u.alice, { boardId: board._id, title: 'Sprint 2', start: true });
    expect((await reads(store).board(board._id))?.activeSprintId).toBe(running.id);
    const list = await svc.call(SprintsOps.list, u.alice, { boardId: board._id });
    expect(list.map((s) => [s.title, s.state, s.active, s.started_at])).toEqual([
      ['Sprint 1', 'open', false, undefined],
      ['Sprint 2', 'open', true, later],
    ]);
    // Started: starting again replays the recorded start and writes nothing.
    svc.clock.advance(60_000);
    const again = await svc.call(SprintsOps.start, u.alice, { sprintId: running.id });
    expect(again).toMatchObject({ sprintId: running.id, started_at: later, member_count: 0, pointedBoardIds: [board._id], replayed: true });
  });

  it('answers 404 for an unreadable board, 403 for a read-only one, 400 naming the title', async () => {
    const group = aGroup(u.alice, u.bob);
    const board = aBoard({ owner: u.alice, group: { id: group._id, permission: 'r' } });
    const secret = aBoard({ owner: u.alice });
    await seed(store, { boards: [board, secret], groups: [group] });

    await expect(svc.call(SprintsOps.create, u.bob, { boardId: secret._id, title: 'x' })).rejects.toMatchObject({ code: 'BOARD_NOT_FOUND', status: 404 });
    await expect(svc.call(SprintsOps.create, u.bob, { boardId: board._id, title: 'x' })).rejects.toMatchObject({ code: 'FORBIDDEN', status: 403 });
    await expect(svc.call(SprintsOps.create, u.alice, { boardId: board._id, title: '   ' })).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
      validationErrors: [expect.objectContaining({ field: '/title' })],
    });
    await expect(svc.call(SprintsOps.create, u.alice, { boardId: board._id, title: 'x', kickoff: 'soon' })).rejects.toMatchObject({
      code: 'VALIDATION_FAILED',
      validationErrors: [expect.objectContaining({ field: '/kickoff' })],
    });
    expect(await tasks().countDocuments({})).toBe(0);
  });
});

describe('start-sprint', () => {
  it('records members with status and points, points writable boards, skips read-only ones', async () => {
    const group = aGroup(u.bob, u.alice);
    const sprint = aSprint({ owner: u.alice, status: 'todo' });
    const a = aMember(sprint._id, { owner: u.alice, points: 3 });
    const b = aMember(sprint._id, { owner: u.bob, status: 'doing', points: 2.5, groupId: group._id, groupPermission: 'r' });
    const c = aMember(sprint._id, { owner: u.alice, points: '8' });
    const mine = aBoard({ owner: u.alice });
    const readOnly = aBoard({ owner: u.bob, group: { id: group._id, permission: 'r' } });
    await seed(store, { tasks: [sprint, a, b, c], boards: [mine, readOnly], groups: [group] });

    const out = await svc.call(SprintsOps.start, u.alice, { sprintId: sprint._id, board_ids: [readOnly._id, mine._id] });

    expect(out).toEqual({
      sprintId: sprint._id, started_at: NOW, started_by: u.alice, member_count: 3, total_points: 5.5,
      pointedBoardIds: [mine._id], skippedBoardIds: [readOnly._id], replayed: false,
    });
    expect((await reads(store).board(mine._id))?.activeSprintId).toBe(sprint._id);
    expect((await reads(store).board(readOnly._id))?.activeSprintId).toBeUndefined();
    expect((await reads(store).task(sprint._id))?.status).toBe('todo');
    const report = await svc.call(SprintsOps.report, u.alice, { sprintId: sprint._id });
    expect(report.start).toEqual({ taken_at: NOW, taken_by: u.alice, member_count: 3, total_points: 5.5 });
    expect(report.committed).toEqual([
      { id: a._id, title: a.title, points: 3 },
      { id: b._id, title: b.title, points: 2.5 },
      { id: c._id, title: c.title },
    ]);
  });

  it('refuses an unknown board naming its position, a closed sprint, a non-sprint, and a read-only sprint; nothing is written', async () => {
    const group = aGroup(u.alice, u.bob);
    const sprint = aSprint({ owner: u.alice, groupId: group._id, groupPermission: 'r' });
    const closed = aSprint({ owner: u.alice, status: 'done' });
    const plain = aTask({ owner: u.alice });
    const board = aBoard({ owner: u.alice });
    await seed(store, { tasks: [sprint, closed, plain], boards: [board], groups: [group] });

    await expect(svc.call(SprintsOps.start, u.alice, { sprintId: sprint._id, board_ids: [board._id, 'nope'] })).rejects.toMatchObject({
      code: 'BOARD_NOT_FOUND', status: 404, details: { boardId: 'nope', field: '/board_ids/1' },
    });
    await expect(svc.call(SprintsOps.start, u.alice, { sprintId: closed._id })).rejects.toMatchObject({ code: 'SPRINT_ALREADY_CLOSED', status: 400 });
    await expect(svc.call(SprintsOps.start, u.alice, { sprintId: plain._id })).rejects.toMatchObject({ code: 'NOT_A_SPRINT', status: 400 });
    await expect(svc.call(SprintsOps.start, u.bob, { sprintId: sprint._id })).rejects.toMatchObject({ code: 'FORBIDDEN', status: 403 });
    await expect(svc.call(SprintsOps.start, u.carol, { sprintId: sprint._id })).rejects.toMatchObject({ code: 'TASK_NOT_FOUND', status: 404 });
    expect((await reads(store).board(board._id))?.activeSprintId).toBeUndefined();
    expect(await store.collection(Collections.sprintSnapshots).countDocuments({})).toBe(0);
  });
});

describe('close snapshot and report', () => {
  /** A started sprint whose membership changes after the start, then closes into `next`. */
  async function changedSprint() {
    const sprint = aSprint({ owner: u.alice, title: 'Sprint A' });
    const next = aSprint({ owner: u.alice, title: 'Sprint B' });
    const a = aMember(sprint._id, { owner: u.alice, title: 'A', points: 3 });
    const b = aMember(sprint._id, { owner: u.alice, title: 'B', status: 'doing', points: 5 });
    const c = aMember(sprint._id, { owner: u.alice, title: 'C', points: 2 });
    const d = aTask({ owner: u.alice, title: 'D', meta: { 'app.points': 1 } });
    const board = aBoard({ owner: u.alice });
    await seed(store, { tasks: [sprint, next, a, b, c, d], boards: [board] });
    await svc.call(SprintsOps.start, u.alice, { sprintId: sprint._id, board_ids: [board._id] });
    // During the sprint: A is finished, C leaves, D joins; B stays unfinished.
    await setStatus(a._id, 'done');
    await leaveSprint(c._id);
    await setSprint(d._id, sprint._id);
    return { sprint, next, a, b, c, d, board };
  }

  it('lists committed, added, removed, completed and rolled-over exactly; carried +1 on each rolled-over task', async () => {
    const w = await changedSprint();
    const live = await svc.call(SprintsOps.report, u.alice, { sprintId: w.sprint._id });
    expect(live).toMatchObject({ state: 'open', live: true, remaining: [{ id: w.b._id, title: 'B', points: 5, status: 'doing' }, { id: w.d._id, title: 'D', points: 1, status: 'todo' }] });

    const closed = await svc.close(u.alice, w.sprint._id, { rollover: w.next._id });
    expect(closed.velocity).toBe(3);

    const report = await svc.call(SprintsOps.report, u.alice, { sprintId: w.sprint._id });
    expect(report).toEqual({
      sprint_id: w.sprint._id,
      title: 'Sprint A',
      state: 'closed',
      live: false,
      start: { taken_at: NOW, taken_by: u.alice, member_count: 3, total_points: 10 },
      close: { taken_at: NOW, taken_by: u.alice, member_count: 3, total_points: 9, target: w.next._id, target_title: w.next.title },
      committed: [{ id: w.a._id, title: 'A', points: 3 }, { id: w.b._id, title: 'B', points: 5 }, { id: w.c._id, title: 'C', points: 2 }],
      added: [{ id: w.d._id, title: 'D', points: 1 }],
      removed: [{ id: w.c._id, title: 'C', points: 2 }],
      completed: [{ id: w.a._id, title: 'A', points: 3 }],
      rolled_over: [
        { id: w.b._id, title: 'B', points: 5, status: 'doing', target: w.next._id },
        { id: w.d._id, title: 'D', points: 1, status: 'todo', target: w.next._id },
      ],
      remaining: [],
      committed_points: 10,
      added_points: 1,
      removed_points: 2,
      completed_points: 3,
      rolled_over_points: 6,
      remaining_points: 0,
      velocity: 3,
      completion_ratio: 0.3,
    });
    expect(await carried(w.b._id)).toBe(1);
    expect(await carried(w.d._id)).toBe(1);
    expect(await carried(w.a._id)).toBeUndefined();
    expect(await carried(w.c._id)).toBeUndefined();
  });

  it('counts app.carried from the value read: a number goes up by 1, a value that is not a number (set by hand) restarts at 1', async () => {
    const w = await changedSprint();
    const setCarried = (id: string, v: unknown) => tasks().updateOne({ _id: id }, { $set: { [metadataPath('app.carried')]: v } });
    await setCarried(w.b._id, 'lots');
    await setCarried(w.d._id, 2);
    await setCarried(w.a._id, 'untouched: finished');

    const closed = await svc.close(u.alice, w.sprint._id, { rollover: 'backlog' });
    expect(closed).toMatchObject({ target: 'backlog', rolledOver: 2 });
    expect(await carried(w.b._id)).toBe(1);
    expect(await carried(w.d._id)).toBe(3);
    expect(await carried(w.a._id)).toBe('untouched: finished');
    // the next close of a sprint they join counts on from there
    const third = aSprint({ owner: u.alice, title: 'Sprint C' });
    await seed(store, { tasks: [third] });
    await setSprint(w.b._id, third._id);
    await setSprint(w.d._id, third._id);
    await svc.close(u.alice, third._id, { rollover: 'backlog' });
    expect([await carried(w.b._id), await carried(w.d._id)]).toEqual([2, 4]);
  });

  it("keeps a closed sprint's report unchanged after its carried-over work is finished and the next sprint closes", async () => {
    const w = await changedSprint();
    await svc.close(u.alice, w.sprint._id, { rollover: w.next._id });
    const before = await svc.call(SprintsOps.report, u.alice, { sprintId: w.sprint._id });

    await svc.call(SprintsOps.start, u.alice, { sprintId: w.next._id });
    await setStatus(w.b._id, 'done');
    await tasks().updateOne({ _id: w.d._id }, { $set: { title: 'D renamed', [metadataPath('app.points')]: 13 } });
    await svc.close(u.alice, w.next._id, { rollover: 'backlog' });

    expect(await svc.call(SprintsOps.report, u.alice, { sprintId: w.sprint._id })).toEqual(before);
    const nextReport = await svc.call(SprintsOps.report, u.alice, { sprintId: w.next._id });
    expect(nextReport.committed.map((i) => i.id)).toEqual([w.b._id, w.d._id]);
    expect(nextReport.completed).toEqual([{ id: w.b._id, title: 'B', points: 5 }]);
    expect(nextReport.rolled_over).toEqual([{ id: w.d._id, title: 'D renamed', points: 13, status: 'todo', target: 'backlog' }]);
    expect(await carried(w.d._id)).toBe(2);
    expect(await carried(w.b._id)).toBe(1);
  });

  it('writes the start snapshot at the first close of a sprint that was never started: everything at close counts as committed', async () => {
    const sprint = aSprint({ owner: u.alice });
    const a = aMember(sprint._id, { owner: u.alice, status: 'done', points: 2 });
    const b = aMember(sprint._id, { owner: u.alice, points: 4 });
    await seed(store, { tasks: [sprint, a, b] });
    await svc.close(u.alice, sprint._id, { rollover: 'backlog' });
    const report = await svc.call(SprintsOps.report, u.alice, { sprintId: sprint._id });
    expect(report).toMatchObject({
      start: { taken_at: NOW, member_count: 2, total_points: 6, by_close: true },
      added: [], removed: [], committed_points: 6, velocity: 2, completion_ratio: 0.333333, rolled_over_points: 4,
    });
  });

  it('two concurrent closes: one close snapshot, carried counted once; a different rollover is refused', async () => {
    const w = await changedSprint();
    const [one, two] = await Promise.all([
      svc.close(u.alice, w.sprint._id, { rollover: w.next._id }),
      svc.close(u.alice, w.sprint._id, { rollover: w.next._id }),
    ]);
    expect(two).toEqual(one);
    const third = svc.close(u.alice, w.sprint._id, { rollover: 'backlog' });
    await expect(third).rejects.toMatchObject({ code: 'SPRINT_ALREADY_CLOSED' });
    expect(await store.collection(Collections.sprintSnapshots).countDocuments({ sprint_id: w.sprint._id, kind: 'close' })).toBe(1);
    expect(await carried(w.b._id)).toBe(1);

    const other = await changedSprint();
    const outcomes = await Promise.allSettled([
      svc.close(u.alice, other.sprint._id, { rollover: other.next._id }),
      svc.close(u.alice, other.sprint._id, { rollover: 'backlog' }),
    ]);
    expect(outcomes.map((o) => o.status).sort()).toEqual(['fulfilled', 'rejected']);
    expect(await store.collection(Collections.sprintSnapshots).countDocuments({ sprint_id: other.sprint._id, kind: 'close' })).toBe(1);
    expect(await carried(other.b._id)).toBe(1);
  });

  it("serves a closed sprint's report from the text frozen at close (title now, keys in order); a close snapshot without that text gives the same report", async () => {
    const w = await changedSprint();
    await svc.close(u.alice, w.sprint._id, { rollover: w.next._id });
    const report = await svc.call(SprintsOps.report, u.alice, { sprintId: w.sprint._id });
    expect(Object.keys(report)).toEqual([
      'sprint_id', 'title', 'state', 'live', 'start', 'close', 'committed', 'added', 'removed', 'completed', 'rolled_over', 'remaining',
      'committed_points', 'added_points', 'removed_points', 'completed_points', 'rolled_over_points', 'remaining_points', 'velocity', 'completion_ratio',
    ]);
    const [snap] = await store.collection(Collections.sprintSnapshots).find({ sprint_id: w.sprint._id, kind: 'close' });
    const { sprint_id, title, state, live, ...frozen } = report;
    expect([sprint_id, title, state, live]).toEqual([w.sprint._id, 'Sprint A', 'closed', false]);
    expect(snap?.report).toBe(JSON.stringify(frozen));
    expect(await svc.bus.requestText(SprintsOps.report, { sprintId: w.sprint._id }, { userId: u.alice })).toBe(JSON.stringify(report));

    await tasks().updateOne({ _id: w.sprint._id }, { $set: { title: 'Sprint A (renamed)' } });
    expect(await svc.call(SprintsOps.report, u.alice, { sprintId: w.sprint._id })).toEqual({ ...report, title: 'Sprint A (renamed)' });
    // A close snapshot written before the text was stored: rebuilt from the two snapshots' members.
    await store.collection(Collections.sprintSnapshots).updateOne({ _id: snap!._id }, { $unset: { report: '' } });
    expect(await svc.bus.requestText(SprintsOps.report, { sprintId: w.sprint._id }, { userId: u.alice })).toBe(JSON.stringify({ ...report, title: 'Sprint A (renamed)' }));
  });

  it('reports the latest close of a sprint reopened and closed again', async () => {
    const w = await changedSprint();
    await svc.close(u.alice, w.sprint._id, { rollover: 'backlog' });
    await setStatus(w.sprint._id, 'doing');
    await setSprint(w.b._id, w.sprint._id);
    await setStatus(w.b._id, 'done');
    const later = '2026-03-14T09:00:00.000Z';
    svc.clock.set(later);
    await svc.close(u.alice, w.sprint._id);
    const report = await svc.call(SprintsOps.report, u.alice, { sprintId: w.sprint._id });
    expect(report).toMatchObject({ live: false, close: { taken_at: later, target: 'none', member_count: 2 }, rolled_over: [], velocity: 8 });
    expect(report.completed.map((i) => i.id)).toEqual([w.a._id, w.b._id]);
  });

  it('answers 404 for an unreadable sprint and 400 for a task that is not a sprint', async () => {
    const sprint = aSprint({ owner: u.alice });
    const plain = aTask({ owner: u.alice });
    await seed(store, { tasks: [sprint, plain] });
    await expect(svc.call(SprintsOps.report, u.bob, { sprintId: sprint._id })).rejects.toMatchObject({ code: 'TASK_NOT_FOUND', status: 404 });
    await expect(svc.call(SprintsOps.report, u.alice, { sprintId: plain._id })).rejects.toMatchObject({ code: 'NOT_A_SPRINT', status: 400 });
  });
});

describe('board sprint list', () => {
  it('lists open and closed sprints of the board with figures; state filters', async () => {
    const board = aBoard({ owner: u.alice });
    await seed(store, { boards: [board] });
    const s1 = await svc.call(SprintsOps.create, u.alice, { boardId: board._id, title: 'S1', start: true });
    svc.clock.advance(60_000);
    const s2 = await svc.call(SprintsOps.create, u.alice, { boardId: board._id, title: 'S2' });
    svc.clock.set(NOW);
    const elsewhere = aSprint({ owner: u.alice, title: 'elsewhere' });
    const m = [
      aMember(s1.id, { owner: u.alice, status: 'done', points: 3 }),
      aMember(s1.id, { owner: u.alice, points: 2 }),
      aMember(s2.id, { owner: u.alice, points: 8 }),
    ];
    await seed(store, { tasks: [elsewhere, ...m] });

    const open = await svc.call(SprintsOps.list, u.alice, { boardId: board._id, state: 'open' });
    expect(open.map((s) => [s.title, s.member_count, s.points_committed, s.points_done])).toEqual([
      ['S1', 2, 0, 3],
      ['S2', 1, 8, 0],
    ]);
    await svc.close(u.alice, s1.id, { rollover: s2.id });
    const closed = await svc.call(SprintsOps.list, u.alice, { boardId: board._id, state: 'closed' });
    expect(closed).toEqual([
      { id: s1.id, title: 'S1', state: 'closed', status: 'done', active: false, started_at: NOW, closed_at: NOW, member_count: 2, points_committed: 0, points_done: 3 },
    ]);
    expect((await svc.call(SprintsOps.list, u.alice, { boardId: board._id })).map((s) => s.title)).toEqual(['S1', 'S2']);
    await expect(svc.call(SprintsOps.list, u.bob, { boardId: board._id })).rejects.toMatchObject({ code: 'BOARD_NOT_FOUND' });
  });
});
