import { describe, expect, it } from 'vitest';
import { MemoryBus } from '@app/shared/bus';
import { TasksOps } from '@app/shared/contracts';
import { fixedClock } from '@app/shared/domain';
import { catchUpOutbox } from '@app/shared/events';
import { silentLogger } from '@app/shared/log';
import { Collections, type Doc } from '@app/shared/store';
import { FaultyStore, testStore } from '@app/shared/testing';
import { tasksService } from '../../src/index.js';
import { ALICE, T0 } from './fixture.js';
import { startupIndexes } from '@app/shared/runtime';

/** The tasks service on a FaultyStore (a rolled-back write emits nothing; a failed event append writes nothing). */
async function faulty() {
  const inner = await testStore();
  const store = new FaultyStore(inner);
  const bus = new MemoryBus();
  const log = silentLogger();
  await inner.ensureIndexes(startupIndexes(tasksService));
  await inner.collection<Doc>(Collections.users).insertOne({ _id: ALICE, username: 'alice' });
  await bus.serve(tasksService.bindings({ store, clock: fixedClock(T0), log }), { queue: 'tasks', log });
  return {
    inner, store, bus,
    /** The numbered events (the committed writes numbered first, as a reader sees them). */
    events: async () => {
      await catchUpOutbox(inner);
      return inner.collection(Collections.events).find({}, { sort: { seq: 1 } });
    },
    async [Symbol.asyncDispose]() {
      await bus.close();
      await inner.close();
    },
  };
}

describe('outbox under store faults', () => {
  it('a fault on the task write inside the transaction: 503, the task unchanged, no event', async () => {
    await using f = await faulty();
    const task = await f.bus.request(TasksOps.create, { title: 'before' }, { userId: ALICE });
    const eventsBefore = await f.events();
    f.store.failOn((c) => c.collection === 'tasks' && c.op === 'findOneAndUpdate' && c.inTransaction);
    await expect(f.bus.request(TasksOps.update, { taskId: task.id, title: 'after' }, { userId: ALICE })).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
    expect(await f.events()).toEqual(eventsBefore);
    expect(await f.inner.collection(Collections.tasks).findOne({ _id: task.id })).toMatchObject({ title: 'before', version: 1 });
  });

  it('a fault on the event append: 503 and the write itself rolled back (never a write without its event)', async () => {
    await using f = await faulty();
    f.store.failOn((c) => c.collection === 'outbox' && c.op === 'insertOne');
    await expect(f.bus.request(TasksOps.create, { title: 'lost' }, { userId: ALICE })).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
    expect(await f.inner.collection(Collections.tasks).countDocuments({})).toBe(0);
    expect(await f.events()).toEqual([]);
    // nothing reached the outbox either: the next event is seq 1
    const task = await f.bus.request(TasksOps.create, { title: 'kept' }, { userId: ALICE });
    expect((await f.events()).map((e) => [e.seq, e.type, e.task_id])).toEqual([[1, 'task.created', task.id]]);
  });
});
