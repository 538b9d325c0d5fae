import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DocumentStore } from '@app/shared/store';
import { testStore } from '@app/shared/testing';
import { aBoard, aGroup, aMember, aSprint, aTask, NOW, reads, seed, serveSprints, snapshot, users } from '../fixtures.js';

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

describe('close-sprint: the close matrix', () => {
  it('closes a sprint whose members are all finished with an empty body (target none)', async () => {
    const sprint = aSprint({ owner: u.alice, title: 'Sprint 7' });
    const a = aMember(sprint._id, { owner: u.alice, status: 'done', points: 3 });
    const b = aMember(sprint._id, { owner: u.alice, status: 'done', points: 5 });
    const board = aBoard({ owner: u.alice, activeSprintId: sprint._id });
    await seed(store, { tasks: [sprint, a, b], boards: [board] });

    const out = await svc.close(u.alice, sprint._id);

    expect(out).toEqual({
      sprintId: sprint._id, target: 'none', completed: 2, rolledOver: 0,
      rotatedBoardIds: [board._id], skippedBoardIds: [], skippedTaskIds: [], velocity: 8,
    });
    const r = reads(store);
    const stored = await r.task(sprint._id);
    expect(stored).toMatchObject({ status: 'done', updated_at: NOW, updated_by: u.alice });
    expect(stored?.sprintClose).toEqual({ ...out, closed_at: NOW, closed_by: u.alice });
    expect(await r.membersOf(sprint._id)).toEqual([a._id, b._id].sort());
    expect((await r.board(board._id))?.activeSprintId).toBeUndefined();
    const notes = await r.notesOf(sprint._id);
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatchObject({ task_id: sprint._id, created_at: NOW, created_by: u.alice, updated_at: NOW, updated_by: u.alice });
    expect(notes[0]?.content).toContain('## Sprint retro: Sprint 7');
    expect(notes[0]?.content).toContain(`(\`${a._id}\`): 3 points`);
    expect(notes[0]?.content).toContain('_Nothing was left unfinished._');
  });

  it('rolls unfinished members to the backlog and clears the board pointer', async () => {
    const sprint = aSprint({ owner: u.alice });
    const done = aMember(sprint._id, { owner: u.alice, status: 'done', points: 2 });
    const doing = aMember(sprint._id, { owner: u.alice, status: 'doing', title: 'Half way', points: 5 });
    const todo = aMember(sprint._id, { owner: u.alice, status: 'todo', title: 'Not started' });
    const board = aBoard({ owner: u.alice, activeSprintId: sprint._id });
    await seed(store, { tasks: [sprint, done, doing, todo], boards: [board] });

    const out = await svc.close(u.alice, sprint._id, { rollover: 'backlog' });

    expect(out).toEqual({
      sprintId: sprint._id, target: 'backlog', completed: 1, rolledOver: 2,
      rotatedBoardIds: [board._id], skippedBoardIds: [], skippedTaskIds: [], velocity: 2,
    });
    const r = reads(store);
    expect(await r.membersOf(sprint._id)).toEqual([done._id]);
    for (const t of [doing, todo]) {
      const stored = await r.task(t._id);
      expect(stored?.metadata).not.toHaveProperty('app%2Esprint');
      expect(stored).toMatchObject({ status: t.status, updated_at: NOW, updated_by: u.alice });
    }
    expect((await r.task(done._id))?.updated_at).toBe(done.updated_at);
    expect((await r.task(sprint._id))?.sprintClose).toMatchObject({ rollover: 'backlog', target: 'backlog' });
    expect((await r.board(board._id))?.activeSprintId).toBeUndefined();
    const [note] = await r.notesOf(sprint._id);
    expect(note?.content).toContain('Moved to the backlog:');
    expect(note?.content).toContain(`- Half way (\`${doing._id}\`): status \`doing\``);
    expect(note?.content).toContain(`- Not started (\`${todo._id}\`): status \`todo\``);
  });

  it('rolls unfinished members into another open sprint, where the query by app.sprint finds them', async () => {
    const sprint = aSprint({ owner: u.alice });
    const next = aSprint({ owner: u.alice, title: 'Sprint 8', status: 'todo' });
    const already = aMember(next._id, { owner: u.alice });
    const done = aMember(sprint._id, { owner: u.alice, status: 'done' });
    const open1 = aMember(sprint._id, { owner: u.alice, status: 'review' });
    const open2 = aMember(sprint._id, { owner: u.alice, status: 'todo' });
    const deleted = aMember(sprint._id, { owner: u.alice, status: 'todo', deleted: true });
    const board = aBoard({ owner: u.alice, activeSprintId: sprint._id });
    const other = aBoard({ owner: u.alice, activeSprintId: next._id });
    await seed(store, { tasks: [sprint, next, already, done, open1, open2, deleted], boards: [board, other] });

    const out = await svc.close(u.alice, sprint._id, { rollover: next._id });

    expect(out).toMatchObject({ target: next._id, completed: 1, rolledOver: 2, rotatedBoardIds: [board._id], skippedBoardIds: [] });
    const r = reads(store);
    expect(await r.membersOf(next._id)).toEqual([already._id, open1._id, open2._id].sort());
    expect(await r.membersOf(sprint._id)).toEqual([done._id]);
    // A deleted task is no member: it is neither counted nor moved.
    expect((await r.task(deleted._id))?.metadata['app%2Esprint']).toBe(sprint._id);
    expect((await r.board(board._id))?.activeSprintId).toBe(next._id);
    expect(await r.board(other._id)).toEqual(other);
    expect(await r.task(next._id)).toEqual(next);
    const [note] = await r.notesOf(sprint._id);
    expect(note?.content).toContain(`Moved to sprint "Sprint 8" (\`${next._id}\`):`);
  });

  it('never counts a sprint task as a member (a next sprint created during this one)', async () => {
    const sprint = aSprint({ owner: u.alice });
    const next = aSprint({ owner: u.alice, status: 'todo', meta: { 'app.sprint': sprint._id } });
    const done = aMember(sprint._id, { owner: u.alice, status: 'done' });
    await seed(store, { tasks: [sprint, next, done] });

    expect(await svc.close(u.alice, sprint._id)).toMatchObject({ target: 'none', completed: 1, rolledOver: 0 });
    expect(await reads(store).task(next._id)).toEqual(next);
  });

  it('checks and follows a rollover given when nothing is unfinished', async () => {
    const sprint = aSprint({ owner: u.alice });
    const next = aSprint({ owner: u.alice });
    const board = aBoard({ owner: u.alice, activeSprintId: sprint._id });
    await seed(store, { tasks: [sprint, next], boards: [board] });

    await expect(svc.close(u.alice, sprint._id, { rollover: randomUUID() })).rejects.toMatchObject({ code: 'SPRINT_ROLLOVER_INVALID' });
    const out = await svc.close(u.alice, sprint._id, { rollover: next._id });

    expect(out).toMatchObject({ target: next._id, completed: 0, rolledOver: 0, velocity: 0 });
    expect((await reads(store).board(board._id))?.activeSprintId).toBe(next._id);
  });
});

describe('close-sprint: refusals write nothing', () => {
  async function refuses(userId: string, sprintId: string, body: { rollover?: string }, expected: Record<string, unknown>) {
    const before = await snapshot(store);
    await expect(svc.close(userId, sprintId, body)).rejects.toMatchObject(expected);
    expect(await snapshot(store)).toEqual(before);
  }

  it('404 TASK_NOT_FOUND for an unknown, deleted or unreadable sprint', async () => {
    const deleted = aSprint({ owner: u.alice, deleted: true });
    const bobs = aSprint({ owner: u.bob });
    await seed(store, { tasks: [deleted, bobs] });
    for (const id of [randomUUID(), deleted._id, bobs._id]) {
      await refuses(u.alice, id, {}, { code: 'TASK_NOT_FOUND', status: 404, details: { id } });
    }
  });

  it('403 FORBIDDEN when the caller may read the sprint but not write it', async () => {
    const group = aGroup(u.bob, u.alice);
    const sprint = aSprint({ owner: u.bob, groupId: group._id, groupPermission: 'r' });
    await seed(store, { tasks: [sprint], groups: [group] });
    await refuses(u.alice, sprint._id, { rollover: 'backlog' }, { code: 'FORBIDDEN', status: 403 });
  });

  it('400 NOT_A_SPRINT for a plain task', async () => {
    const task = aTask({ owner: u.alice, meta: { 'app.type': 'story' } });
    await seed(store, { tasks: [task] });
    await refuses(u.alice, task._id, {}, { code: 'NOT_A_SPRINT', status: 400, details: { id: task._id } });
  });

  it('400 SPRINT_ROLLOVER_REQUIRED lists the unfinished members', async () => {
    const sprint = aSprint({ owner: u.alice });
    const done = aMember(sprint._id, { owner: u.alice, status: 'done' });
    const a = aMember(sprint._id, { owner: u.alice, status: 'doing', title: 'A' });
    const b = aMember(sprint._id, { owner: u.alice, status: 'todo', title: 'B' });
    await seed(store, { tasks: [sprint, done, a, b], boards: [aBoard({ owner: u.alice, activeSprintId: sprint._id })] });
    await refuses(u.alice, sprint._id, {}, {
      code: 'SPRINT_ROLLOVER_REQUIRED',
      status: 400,
      details: { unfinished: [{ id: a._id, title: 'A', status: 'doing' }, { id: b._id, title: 'B', status: 'todo' }] },
    });
  });

  it('400 SPRINT_ROLLOVER_INVALID for each kind of bad target', async () => {
    const sprint = aSprint({ owner: u.alice });
    const closed = aSprint({ owner: u.alice, status: 'done' });
    const deleted = aSprint({ owner: u.alice, deleted: true });
    const bobs = aSprint({ owner: u.bob });
    const plain = aTask({ owner: u.alice });
    const member = aMember(sprint._id, { owner: u.alice });
    await seed(store, { tasks: [sprint, closed, deleted, bobs, plain, member] });
    const cases: Array<[string, string]> = [
      [sprint._id, 'same_sprint'],
      [randomUUID(), 'not_found'],
      ['not-an-id', 'not_found'],
      [deleted._id, 'not_found'],
      [bobs._id, 'not_found'],
      [plain._id, 'not_a_sprint'],
      [closed._id, 'closed'],
    ];
    for (const [rollover, reason] of cases) {
      await refuses(u.alice, sprint._id, { rollover }, { code: 'SPRINT_ROLLOVER_INVALID', status: 400, details: { rollover, reason } });
    }
  });

  it('400 VALIDATION_FAILED naming rollover when it is empty', async () => {
    const sprint = aSprint({ owner: u.alice });
    await seed(store, { tasks: [sprint] });
    await refuses(u.alice, sprint._id, { rollover: '' }, { code: 'VALIDATION_FAILED', validationErrors: [expect.objectContaining({ field: '/rollover' })] });
  });
});

describe('close-sprint: replay of a closed sprint', () => {
  it('replays the recorded outcome for the same rollover and writes nothing', async () => {
    const sprint = aSprint({ owner: u.alice });
    const next = aSprint({ owner: u.alice });
    await seed(store, {
      tasks: [sprint, next, aMember(sprint._id, { owner: u.alice, status: 'done', points: 1.5 }), aMember(sprint._id, { owner: u.alice })],
      boards: [aBoard({ owner: u.alice, activeSprintId: sprint._id })],
    });
    const first = await svc.close(u.alice, sprint._id, { rollover: next._id });
    svc.clock.advance(60_000);
    // Changes after the close do not alter the replayed outcome.
    await seed(store, { tasks: [aMember(sprint._id, { owner: u.alice })] });
    const before = await snapshot(store);

    expect(await svc.close(u.alice, sprint._id, { rollover: next._id })).toEqual(first);
    expect(await snapshot(store)).toEqual(before);
  });

  it('refuses a repeat close with another rollover (400 SPRINT_ALREADY_CLOSED)', async () => {
    const sprint = aSprint({ owner: u.alice });
    await seed(store, { tasks: [sprint, aMember(sprint._id, { owner: u.alice, status: 'done' })] });
    await svc.close(u.alice, sprint._id);
    const before = await snapshot(store);

    await expect(svc.close(u.alice, sprint._id, { rollover: 'backlog' })).rejects.toMatchObject({
      code: 'SPRINT_ALREADY_CLOSED', status: 400, details: { sprintId: sprint._id, closedWith: 'none' },
    });
    expect(await svc.close(u.alice, sprint._id)).toMatchObject({ target: 'none', completed: 1 });
    expect(await snapshot(store)).toEqual(before);
  });

  it('refuses a sprint set to done by hand, and closes it again once reopened', async () => {
    const sprint = aSprint({ owner: u.alice, status: 'done' });
    const member = aMember(sprint._id, { owner: u.alice, status: 'todo' });
    await seed(store, { tasks: [sprint, member] });
    await expect(svc.close(u.alice, sprint._id, { rollover: 'backlog' })).rejects.toMatchObject({ code: 'SPRINT_ALREADY_CLOSED' });

    await store.collection('tasks').updateOne({ _id: sprint._id }, { $set: { status: 'doing' } });
    expect(await svc.close(u.alice, sprint._id, { rollover: 'backlog' })).toMatchObject({ rolledOver: 1 });
  });
});

describe('close-sprint: board pointers', () => {
  it('rotates boards the caller may write, skips readable-only ones, hides unreadable ones', async () => {
    const rw = aGroup(u.bob, u.alice);
    const r = aGroup(u.carol, u.alice);
    const carolsOnly = aGroup(u.carol);
    const sprint = aSprint({ owner: u.alice });
    const next = aSprint({ owner: u.alice });
    const own = aBoard({ owner: u.alice, activeSprintId: sprint._id });
    const sharedRw = aBoard({ owner: u.bob, activeSprintId: sprint._id, group: { id: rw._id, permission: 'rw' } });
    const sharedR = aBoard({ owner: u.carol, activeSprintId: sprint._id, group: { id: r._id, permission: 'r' } });
    const bobsPrivate = aBoard({ owner: u.bob, activeSprintId: sprint._id });
    const foreignShared = aBoard({ owner: u.carol, activeSprintId: sprint._id, group: { id: carolsOnly._id, permission: 'rw' } });
    const elsewhere = aBoard({ owner: u.alice, activeSprintId: next._id });
    await seed(store, {
      tasks: [sprint, next, aMember(sprint._id, { owner: u.alice })],
      boards: [own, sharedRw, sharedR, bobsPrivate, foreignShared, elsewhere],
      groups: [rw, r, carolsOnly],
    });

    const out = await svc.close(u.alice, sprint._id, { rollover: next._id });

    expect(out.rotatedBoardIds).toEqual([own._id, sharedRw._id].sort());
    expect(out.skippedBoardIds).toEqual([sharedR._id]);
    const read = reads(store);
    for (const b of [own, sharedRw]) expect(await read.board(b._id)).toMatchObject({ activeSprintId: next._id, updated_at: NOW, updated_by: u.alice });
    for (const b of [sharedR, bobsPrivate, foreignShared, elsewhere]) expect(await read.board(b._id)).toEqual(b);
  });
});

describe('close-sprint: velocity', () => {
  it('sums numeric app.points of finished members: fractional counted, missing and non-numeric ignored', async () => {
    const sprint = aSprint({ owner: u.alice });
    const counted = [2.5, 0.1, 0.2, 3].map((points) => aMember(sprint._id, { owner: u.alice, status: 'done', points }));
    const ignored = [undefined, '5', true, { n: 1 }, [4]].map((points) => aMember(sprint._id, { owner: u.alice, status: 'done', points }));
    const unfinished = aMember(sprint._id, { owner: u.alice, status: 'doing', points: 13 });
    await seed(store, { tasks: [sprint, ...counted, ...ignored, unfinished] });

    const out = await svc.close(u.alice, sprint._id, { rollover: 'backlog' });

    expect(out).toMatchObject({ velocity: 5.8, completed: 9, rolledOver: 1 });
    const [note] = await reads(store).notesOf(sprint._id);
    expect(note?.content).toContain('Velocity: **5.8** points from 9 finished items (5 without numeric points)');
    expect(note?.content).toContain(`(\`${ignored[1]!._id}\`): no points`);
  });
});

describe('close-sprint: store round trips', () => {
  async function roundTripsToClose(members: number, boards: number): Promise<number> {
    const sprint = aSprint({ owner: u.alice });
    const next = aSprint({ owner: u.alice });
    const tasks = Array.from({ length: members }, (_, i) => aMember(sprint._id, { owner: u.alice, status: i % 2 ? 'done' : 'todo', points: 1 }));
    await seed(store, {
      tasks: [sprint, next, ...tasks],
      boards: Array.from({ length: boards }, () => aBoard({ owner: u.alice, activeSprintId: sprint._id })),
    });
    const before = store.stats.roundTrips;
    const out = await svc.close(u.alice, sprint._id, { rollover: next._id });
    expect(out.rolledOver + out.completed).toBe(members);
    return store.stats.roundTrips - before;
  }

  it('does not grow with the number of members or boards', async () => {
    const small = await roundTripsToClose(2, 1);
    const large = await roundTripsToClose(200, 20);
    expect(small).toBeGreaterThan(0);
    expect(large).toBe(small);
  });
});
