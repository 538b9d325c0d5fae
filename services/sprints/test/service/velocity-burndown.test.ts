import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { SprintsOps } from '@app/shared/contracts';
import { appendEvents, type EventType, type TaskDoc } from '@app/shared/domain';
import { Collections, escapeKey, metadataPath, type DocumentStore } from '@app/shared/store';
import { testStore } from '@app/shared/testing';
import { aBoard, aMember, aSprint, aTask, seed, serveSprints, users } from '../fixtures.js';

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
const carried = async (id: string) => (await tasks().findOne({ _id: id }))?.metadata[escapeKey('app.carried')];

describe('velocity history', () => {
  it('over 3 sprints with carry-over: oldest first, committed vs completed vs velocity, mean and median of the last N', async () => {
    const board = aBoard({ owner: u.alice });
    const otherBoard = aBoard({ owner: u.alice });
    await seed(store, { boards: [board, otherBoard] });
    const create = async (title: string, boardId = board._id) => (await svc.call(SprintsOps.create, u.alice, { boardId, title })).id;
    const [s1, s2, s3] = [await create('S1'), await create('S2'), await create('S3')];
    const elsewhere = await create('Other board', otherBoard._id);

    // S1: 10 points committed, 8 done, c (2) carried into S2.
    const a = aMember(s1, { owner: u.alice, points: 3 });
    const b = aMember(s1, { owner: u.alice, points: 5 });
    const c = aMember(s1, { owner: u.alice, points: 2 });
    const d = aMember(s2, { owner: u.alice, points: 5 });
    const x = aMember(elsewhere, { owner: u.alice, status: 'done', points: 40 });
    await seed(store, { tasks: [a, b, c, d, x] });
    svc.clock.set('2026-03-02T09:00:00.000Z');
    await svc.call(SprintsOps.start, u.alice, { sprintId: s1 });
    await setStatus(a._id, 'done');
    await setStatus(b._id, 'done');
    svc.clock.set('2026-03-13T17:00:00.000Z');
    await svc.close(u.alice, s1, { rollover: s2 });

    // S2 (started by S1's close, which pointed the board at it): c (2, carried) and d (5)
    // committed; c done, d carried into S3, which the close starts with d and e.
    await setStatus(c._id, 'done');
    const e = aMember(s3, { owner: u.alice, points: 3 });
    await seed(store, { tasks: [e] });
    svc.clock.set('2026-03-27T17:00:00.000Z');
    await svc.close(u.alice, s2, { rollover: s3 });

    // S3: d (5, carried) and e (3) committed; f (1) added after the start; all done.
    const f = aMember(s3, { owner: u.alice, points: 1, status: 'done' });
    await seed(store, { tasks: [f] });
    await setStatus(d._id, 'done');
    await setStatus(e._id, 'done');
    svc.clock.set('2026-04-10T17:00:00.000Z');
    await svc.close(u.alice, s3);
    await svc.close(u.alice, elsewhere);

    const all = await svc.call(SprintsOps.velocity, u.alice, { boardId: board._id });
    expect(all).toEqual({
      board_id: board._id,
      last: 6,
      sprints: [
        { sprint_id: s1, title: 'S1', closed_at: '2026-03-13T17:00:00.000Z', committed_points: 10, completed_points: 8, velocity: 8 },
        { sprint_id: s2, title: 'S2', closed_at: '2026-03-27T17:00:00.000Z', committed_points: 7, completed_points: 2, velocity: 2 },
        { sprint_id: s3, title: 'S3', closed_at: '2026-04-10T17:00:00.000Z', committed_points: 8, completed_points: 8, velocity: 9 },
      ],
      mean: 6.333333,
      median: 8,
    });
    // The reply is put together from the entry texts serialized at close: the same text as the value's.
    const text = (last = 6) => svc.bus.requestText(SprintsOps.velocity, { boardId: board._id, last }, { userId: u.alice });
    expect(await text()).toBe(JSON.stringify(all));
    expect(await text()).toBe(JSON.stringify(all)); // again (the last reply, kept: the same closes)
    // Close snapshots written before the entry text existed: their entries are built from their fields.
    await store.collection(Collections.sprintSnapshots).updateMany({ sprint_id: { $in: [s1, s3] } }, { $unset: { velocity_entry: '' } });
    expect(await text(5)).toBe(JSON.stringify({ ...all, last: 5 }));

    const last2 = await svc.call(SprintsOps.velocity, u.alice, { boardId: board._id, last: 2 });
    expect(last2.sprints.map((s) => s.title)).toEqual(['S2', 'S3']);
    expect([last2.mean, last2.median]).toEqual([5.5, 5.5]);
    expect(await carried(c._id)).toBe(1);
    expect(await carried(d._id)).toBe(1);
    expect(await carried(a._id)).toBeUndefined();

    // A sprint reopened (status set away from done) leaves the history until it closes again.
    await setStatus(s2, 'doing');
    expect((await svc.call(SprintsOps.velocity, u.alice, { boardId: board._id })).sprints.map((s) => s.title)).toEqual(['S1', 'S3']);
    // Read `last` closes at a time, newest first: skipped sprints make it read on.
    const titles = async (last: number) => (await svc.call(SprintsOps.velocity, u.alice, { boardId: board._id, last })).sprints.map((s) => [s.title, s.closed_at]);
    expect(await titles(1)).toEqual([['S3', '2026-04-10T17:00:00.000Z']]);
    expect(await titles(2)).toEqual([['S1', '2026-03-13T17:00:00.000Z'], ['S3', '2026-04-10T17:00:00.000Z']]);
    // Closed again: it counts once, with its latest close, also when its earlier close is on a later page.
    svc.clock.set('2026-04-20T17:00:00.000Z');
    await svc.close(u.alice, s2);
    expect(await titles(2)).toEqual([['S3', '2026-04-10T17:00:00.000Z'], ['S2', '2026-04-20T17:00:00.000Z']]);
    expect(await titles(3)).toEqual([['S1', '2026-03-13T17:00:00.000Z'], ['S3', '2026-04-10T17:00:00.000Z'], ['S2', '2026-04-20T17:00:00.000Z']]);
    expect(await titles(50)).toEqual(await titles(3));
  });

  it('refuses last outside 1..50 naming last, and an unreadable board', async () => {
    const board = aBoard({ owner: u.alice });
    await seed(store, { boards: [board] });
    for (const last of [0, 51]) {
      await expect(svc.call(SprintsOps.velocity, u.alice, { boardId: board._id, last })).rejects.toMatchObject({
        code: 'VALIDATION_FAILED', status: 400, validationErrors: [expect.objectContaining({ field: '/last' })],
      });
    }
    await expect(svc.call(SprintsOps.velocity, u.bob, { boardId: board._id })).rejects.toMatchObject({ code: 'BOARD_NOT_FOUND', status: 404 });
    expect(await svc.call(SprintsOps.velocity, u.alice, { boardId: board._id })).toEqual({ board_id: board._id, last: 6, sprints: [], mean: 0, median: 0 });
  });
});

describe('burndown from the events outbox, with an injected clock', () => {
  /** Appends an outbox event as a write does (`appendEvents`, in a transaction, seq from the counter). */
  async function event(type: EventType, at: string, taskId: string, data: Record<string, unknown>) {
    await store.withTransaction((session) => appendEvents(store, session, [{ type, task_id: taskId, data }], { actor: u.alice, request_id: randomUUID(), occurred_at: at }));
  }
  const apiTask = (t: TaskDoc, o: { status?: string; meta: Record<string, unknown> }) => ({ id: t._id, title: t.title, status: o.status ?? t.status, metadata: o.meta });

  it("reads and checks access only of the sprint's tasks, however many other tasks changed since the start", async () => {
    const sprint = aSprint({ owner: u.alice, status: 'todo' });
    const a = aMember(sprint._id, { owner: u.alice, points: 3 });
    const joiner = aTask({ owner: u.alice, meta: { 'app.points': 2 } });
    const others = Array.from({ length: 25 }, () => aTask({ owner: u.alice }));
    await seed(store, { tasks: [sprint, a, joiner, ...others] });
    svc.clock.set('2026-03-10T09:00:00.000Z');
    await svc.call(SprintsOps.start, u.alice, { sprintId: sprint._id });
    for (const t of others) await event('task.updated', '2026-03-10T10:00:00.000Z', t._id, { task: apiTask(t, { meta: {} }), changes: [] });
    await tasks().updateOne({ _id: joiner._id }, { $set: { [metadataPath('app.sprint')]: sprint._id } });
    await event('task.updated', '2026-03-10T11:00:00.000Z', joiner._id, { task: apiTask(joiner, { meta: { 'app.sprint': sprint._id, 'app.points': 2 } }), changes: [] });

    // the ids each read of tasks asks for by `$in` during the burndown
    const asked: string[][] = [];
    const collection = store.collection.bind(store);
    const spy = vi.spyOn(store, 'collection').mockImplementation(((name: string) => {
      const c = collection(name);
      if (name !== Collections.tasks) return c;
      return new Proxy(c, {
        get: (target, prop) => {
          if (prop === 'find') {
            return (filter: { _id?: { $in?: string[] } }, opts?: object) => {
              if (filter._id?.$in) asked.push(filter._id.$in);
              return target.find(filter, opts);
            };
          }
          const v = Reflect.get(target, prop) as unknown;
          return typeof v === 'function' ? (v as (...x: unknown[]) => unknown).bind(target) : v;
        },
      });
    }) as typeof store.collection);
    svc.clock.set('2026-03-10T12:00:00.000Z');
    const burndown = await svc.call(SprintsOps.burndown, u.alice, { sprintId: sprint._id });
    spy.mockRestore();
    expect(burndown.days).toMatchObject([{ date: '2026-03-10', remaining: 5, scope: 5 }]);
    expect(asked.flat().sort()).toEqual([a._id, joiner._id].sort());
  });

  it('replays the task events since the start day by day; the last day is the close; later events change nothing', async () => {
    const sprint = aSprint({ owner: u.alice, status: 'todo', deadline: '2026-03-14T00:00:00.000Z' });
    const a = aMember(sprint._id, { owner: u.alice, points: 3 });
    const b = aMember(sprint._id, { owner: u.alice, points: 5 });
    const c = aMember(sprint._id, { owner: u.alice, status: 'doing', points: 2 });
    const d = aTask({ owner: u.alice, meta: { 'app.points': 4 } });
    const other = aSprint({ owner: u.alice });
    await seed(store, { tasks: [sprint, a, b, c, d, other] });
    // Before the start: ignored.
    await event('task.updated', '2026-03-09T12:00:00.000Z', a._id, { task: apiTask(a, { status: 'done', meta: { 'app.sprint': sprint._id, 'app.points': 3 } }), changes: [] });
    await event('task.updated', '2026-03-09T12:01:00.000Z', a._id, { task: apiTask(a, { status: 'todo', meta: { 'app.sprint': sprint._id, 'app.points': 3 } }), changes: [] });

    svc.clock.set('2026-03-10T09:00:00.000Z');
    await svc.call(SprintsOps.start, u.alice, { sprintId: sprint._id });
    await expect(svc.call(SprintsOps.burndown, u.alice, { sprintId: other._id })).rejects.toMatchObject({ code: 'SPRINT_NOT_STARTED', status: 400 });

    // Day 2: a is finished, d joins with 4 points. Day 3: b leaves (a change list without the task), an unrelated task changes.
    await setStatus(a._id, 'done');
    await event('task.updated', '2026-03-11T10:00:00.000Z', a._id, {
      task: apiTask(a, { status: 'done', meta: { 'app.sprint': sprint._id, 'app.points': 3 } }), changes: [{ field: 'status', from: 'todo', to: 'done' }],
    });
    await tasks().updateOne({ _id: d._id }, { $set: { [metadataPath('app.sprint')]: sprint._id } });
    await event('task.created', '2026-03-11T15:00:00.000Z', d._id, { task: apiTask(d, { meta: { 'app.sprint': sprint._id, 'app.points': 4 } }) });
    await tasks().updateOne({ _id: b._id }, { $unset: { [metadataPath('app.sprint')]: '' } });
    await event('task.updated', '2026-03-12T08:00:00.000Z', b._id, { changes: [{ field: 'metadata.app.sprint', from: sprint._id }] });
    await event('task.updated', '2026-03-12T09:00:00.000Z', other._id, { task: apiTask(other, { status: 'done', meta: { 'app.type': 'sprint' } }), changes: [] });

    svc.clock.set('2026-03-13T12:00:00.000Z');
    const open = await svc.call(SprintsOps.burndown, u.alice, { sprintId: sprint._id });
    expect(open).toEqual({
      sprint_id: sprint._id,
      started_at: '2026-03-10T09:00:00.000Z',
      end: '2026-03-13T12:00:00.000Z',
      closed: false,
      days: [
        { date: '2026-03-10', remaining: 10, scope: 10, ideal: 10 },
        { date: '2026-03-11', remaining: 11, scope: 14, ideal: 7.5 },
        { date: '2026-03-12', remaining: 6, scope: 9, ideal: 5 },
        { date: '2026-03-13', remaining: 6, scope: 9, ideal: 2.5 },
        { date: '2026-03-14', remaining: null, scope: null, ideal: 0 },
      ],
    });

    // Day 5: c is finished, then the sprint closes with d rolled to the backlog.
    await setStatus(c._id, 'done');
    await event('task.updated', '2026-03-14T09:00:00.000Z', c._id, {
      task: apiTask(c, { status: 'done', meta: { 'app.sprint': sprint._id, 'app.points': 2 } }), changes: [{ field: 'status', from: 'doing', to: 'done' }],
    });
    svc.clock.set('2026-03-14T10:00:00.000Z');
    await svc.close(u.alice, sprint._id, { rollover: 'backlog' });
    const closed = await svc.call(SprintsOps.burndown, u.alice, { sprintId: sprint._id });
    expect(closed.closed).toBe(true);
    expect(closed.end).toBe('2026-03-14T10:00:00.000Z');
    expect(closed.days.at(-1)).toEqual({ date: '2026-03-14', remaining: 4, scope: 9, ideal: 0 });
    expect(closed.days.slice(0, 4)).toEqual(open.days.slice(0, 4));

    await setStatus(d._id, 'done');
    await event('task.updated', '2026-03-16T09:00:00.000Z', d._id, { task: apiTask(d, { status: 'done', meta: { 'app.points': 4 } }), changes: [] });
    svc.clock.set('2026-03-20T10:00:00.000Z');
    expect(await svc.call(SprintsOps.burndown, u.alice, { sprintId: sprint._id })).toEqual(closed);
  });
});
