import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SprintsOps } from '@app/shared/contracts';
import { Collections, type DocumentStore } from '@app/shared/store';
import type { BoardDoc } from '@app/shared/domain';
import { catchUpOutbox } from '@app/shared/events';
import { FaultyStore, testStore, type StoreCall } from '@app/shared/testing';
import { aBoard, aMember, aSprint, reads, seed, serveSprints, snapshot, users } from '../fixtures.js';

let inner: DocumentStore;
let store: FaultyStore;
let svc: Awaited<ReturnType<typeof serveSprints>>;

beforeEach(async () => {
  inner = await testStore();
  store = new FaultyStore(inner);
  svc = await serveSprints(store);
});
afterEach(async () => {
  await svc.bus.close();
  await store.close();
});

/** A sprint with finished and unfinished members, a next sprint and a board pointing at the sprint. */
async function world() {
  const u = users();
  const sprint = aSprint({ owner: u.alice });
  const next = aSprint({ owner: u.alice });
  const done = aMember(sprint._id, { owner: u.alice, status: 'done', points: 3 });
  const open = [aMember(sprint._id, { owner: u.alice, status: 'doing' }), aMember(sprint._id, { owner: u.alice, status: 'todo' })];
  const board = aBoard({ owner: u.alice, activeSprintId: sprint._id });
  await seed(inner, { tasks: [sprint, next, done, ...open], boards: [board] });
  return { u, sprint, next, done, open, board };
}

const isRollover = (c: StoreCall) => c.collection === 'tasks' && c.op === 'updateMany' && c.inTransaction;

describe('close-sprint under store faults', () => {
  // Each write that follows the rollover of the members, inside the transaction.
  it.each([
    ['the retro note', (c: StoreCall) => c.collection === 'notes' && c.op === 'insertOne'],
    ['marking the sprint done', (c: StoreCall) => c.collection === 'tasks' && c.op === 'updateOne'],
    ['repointing the boards', (c: StoreCall) => c.collection === 'boards' && c.op === 'updateMany'],
    ['appending the events', (c: StoreCall) => c.collection === 'outbox' && c.op === 'insertOne'],
  ])('a fault at %s, after the rollover write, leaves nothing changed; the retry succeeds', async (_, step) => {
    const w = await world();
    const before = await snapshot(inner);
    store.failOn((c) => c.inTransaction && step(c));

    await expect(svc.close(w.u.alice, w.sprint._id, { rollover: w.next._id })).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE', status: 503 });

    const failedAt = store.calls.findIndex((c) => c.inTransaction && step(c));
    expect(store.calls.findIndex(isRollover)).toBeGreaterThanOrEqual(0);
    expect(store.calls.findIndex(isRollover)).toBeLessThan(failedAt);
    const r = reads(inner);
    expect((await r.task(w.sprint._id))?.status).toBe('doing');
    expect(await r.membersOf(w.sprint._id)).toEqual([w.done._id, ...w.open.map((t) => t._id)].sort());
    expect(await r.membersOf(w.next._id)).toEqual([]);
    expect(await r.notesOf(w.sprint._id)).toEqual([]);
    expect((await r.board(w.board._id))?.activeSprintId).toBe(w.sprint._id);
    expect(await snapshot(inner)).toEqual(before);
    // a rolled-back close emits nothing
    expect(await inner.collection(Collections.outbox).countDocuments({})).toBe(0);

    const out = await svc.close(w.u.alice, w.sprint._id, { rollover: w.next._id });

    expect(out).toEqual({
      sprintId: w.sprint._id, target: w.next._id, completed: 1, rolledOver: 2,
      rotatedBoardIds: [w.board._id], skippedBoardIds: [], skippedTaskIds: [], velocity: 3, startedSprintId: w.next._id,
    });
    expect((await r.task(w.sprint._id))?.status).toBe('done');
    expect(await r.membersOf(w.next._id)).toEqual(w.open.map((t) => t._id).sort());
    expect(await r.notesOf(w.sprint._id)).toHaveLength(1);
    expect((await r.board(w.board._id))?.activeSprintId).toBe(w.next._id);
    await catchUpOutbox(inner);
    const events = await inner.collection('events').find({}, { sort: { seq: 1 } });
    expect(events.map((e) => e.type).sort()).toEqual(['sprint.closed', 'sprint.started', 'task.updated', 'task.updated']);
  });
});

describe('close-sprint under store faults: the snapshots', () => {
  const isSnapshotWrite = (c: StoreCall) => c.collection === 'sprint_snapshots' && c.op === 'insertMany' && c.inTransaction;

  it.each([
    ['writing the snapshots', isSnapshotWrite],
    // The tasks.bulkWrite of the close is the app.carried count, right after the snapshots.
    ['counting app.carried on the rolled-over tasks', (c: StoreCall) => c.collection === 'tasks' && c.op === 'bulkWrite' && c.inTransaction],
  ])('a fault at %s leaves neither snapshot nor changes; the retry records them once', async (_, step) => {
    const w = await world();
    await svc.call(SprintsOps.start, w.u.alice, { sprintId: w.sprint._id });
    const before = await snapshot(inner);
    store.failOn(step);

    await expect(svc.close(w.u.alice, w.sprint._id, { rollover: w.next._id })).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE', status: 503 });

    expect(store.calls.findIndex(isSnapshotWrite)).toBeGreaterThanOrEqual(0);
    expect(await snapshot(inner)).toEqual(before);
    expect(await inner.collection(Collections.sprintSnapshots).countDocuments({ kind: 'close' })).toBe(0);

    await svc.close(w.u.alice, w.sprint._id, { rollover: w.next._id });
    const report = await svc.call(SprintsOps.report, w.u.alice, { sprintId: w.sprint._id });
    expect(report).toMatchObject({ live: false, velocity: 3, rolled_over: w.open.map((t) => expect.objectContaining({ id: t._id, target: w.next._id })) });
    for (const t of w.open) expect((await reads(inner).task(t._id))?.metadata['app%2Ecarried']).toBe(1);
    expect(await inner.collection(Collections.sprintSnapshots).countDocuments({ kind: 'close' })).toBe(1);
  });
});

describe('start-sprint under store faults', () => {
  it.each([
    ['writing the start snapshot', (c: StoreCall) => c.collection === 'sprint_snapshots' && c.op === 'insertOne' && c.inTransaction],
    ['pointing the boards', (c: StoreCall) => c.collection === 'boards' && c.op === 'bulkWrite' && c.inTransaction],
    ['appending the board.updated event', (c: StoreCall) => c.collection === 'outbox' && c.op === 'insertOne' && c.inTransaction],
  ])('a fault at %s leaves no snapshot and no board pointer; the retry starts it', async (_, step) => {
    const w = await world();
    const board = aBoard({ owner: w.u.alice });
    await inner.collection<BoardDoc>(Collections.boards).insertOne(board);
    const before = await snapshot(inner);
    store.failOn(step);

    await expect(svc.call(SprintsOps.start, w.u.alice, { sprintId: w.next._id, board_ids: [board._id] })).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE', status: 503 });
    expect(await snapshot(inner)).toEqual(before);

    const out = await svc.call(SprintsOps.start, w.u.alice, { sprintId: w.next._id, board_ids: [board._id] });
    expect(out).toMatchObject({ replayed: false, pointedBoardIds: [board._id] });
    expect((await reads(inner).board(board._id))?.activeSprintId).toBe(w.next._id);
  });
});
