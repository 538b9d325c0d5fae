import { describe, expect, it } from 'vitest';
import { EmbeddedStore } from '@app/shared/store';
import { FaultyStore, rejection } from '@app/shared/testing';

async function seeded() {
  const store = new FaultyStore(EmbeddedStore.memory());
  await store.collection('tasks').insertMany([{ _id: 't1', status: 'todo' }, { _id: 't2', status: 'todo' }]);
  await store.collection('boards').insertOne({ _id: 'b1', activeSprintId: 's1' });
  return store;
}

describe('FaultyStore', () => {
  it('a fault inside withTransaction, after earlier writes, leaves nothing written on the embedded store', async () => {
    await using store = await seeded();
    store.failOn((c) => c.inTransaction && c.collection === 'boards' && c.op === 'updateMany');
    const err = await rejection(
      store.withTransaction(async (session) => {
        await store.collection('tasks').updateMany({}, { $set: { status: 'rolled' } }, { session });
        await store.collection('tasks').insertOne({ _id: 'retro' }, { session });
        await store.collection('boards').updateMany({ activeSprintId: 's1' }, { $set: { activeSprintId: 's2' } }, { session });
      }),
    );
    expect(err.code).toBe('STORE_UNAVAILABLE');
    expect(await store.collection('tasks').find({}, { sort: { _id: 1 } })).toEqual([
      { _id: 't1', status: 'todo' },
      { _id: 't2', status: 'todo' },
    ]);
    expect(await store.collection('boards').findOne({ _id: 'b1' })).toEqual({ _id: 'b1', activeSprintId: 's1' });
  });

  it('fails once by default, then lets the same call through', async () => {
    await using store = await seeded();
    store.failOn((c) => c.op === 'find');
    expect((await rejection(store.collection('tasks').find({}))).code).toBe('STORE_UNAVAILABLE');
    expect(await store.collection('tasks').countDocuments({})).toBe(2);
    expect(await store.collection('tasks').find({})).toHaveLength(2);
  });

  it('fails as many times as asked and shows each call to the predicate', async () => {
    await using store = await seeded();
    store.failOn((c) => c.collection === 'tasks' && !c.inTransaction, { times: 2 });
    const tasks = store.collection('tasks');
    expect((await rejection(tasks.updateOne({ _id: 't1' }, { $set: { status: 'x' } }))).code).toBe('STORE_UNAVAILABLE');
    expect((await rejection(tasks.deleteOne({ _id: 't1' }))).code).toBe('STORE_UNAVAILABLE');
    expect(await tasks.findOne({ _id: 't1' })).toEqual({ _id: 't1', status: 'todo' });
    expect(store.calls.slice(-3)).toEqual([
      { collection: 'tasks', op: 'updateOne', inTransaction: false, callIndex: 2 },
      { collection: 'tasks', op: 'deleteOne', inTransaction: false, callIndex: 3 },
      { collection: 'tasks', op: 'findOne', inTransaction: false, callIndex: 4 },
    ]);
  });
});
