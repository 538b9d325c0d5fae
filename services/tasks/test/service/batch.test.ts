import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CustomFieldsOps, TasksOps } from '@app/shared/contracts';
import { Collections, type DocumentStore } from '@app/shared/store';
import { buildTasks } from './fixture.js';

/**
 * Batch writes under a transient transaction error: MongoDB answers a write conflict (or a
 * network error) inside a transaction with an error labelled TransientTransactionError, and the
 * driver reruns the transaction. The test store fails each transaction's first attempt that way
 * on every leg (`failFirstAttempt: true`), so these tests see the rerun.
 */
describe('tasks batches under a transient write conflict', () => {
  it('PATCH batch: the conflict reruns the whole batch; each item is applied once and a per-item 404 stays with its item', async () => {
    await using t = await buildTasks({ failFirstAttempt: true });
    const a = await t.newTask('a');
    const b = await t.newTask('b');
    const injected = t.store.counts.injected;
    const out = await t.call(TasksOps.updateBatch, {
      updates: [
        { id: a.id, changes: { title: 'a2' } },
        { id: randomUUID(), changes: { title: 'nobody' } },
        { id: b.id, changes: { tags: ['x'] } },
      ],
    });
    expect(t.store.counts.injected).toBe(injected + 1);
    expect(out.results.map((r) => r.status)).toEqual([200, 404, 200]);
    expect(out.results[1]?.error).toMatchObject({ code: 'TASK_NOT_FOUND' });
    expect(await t.stored(a.id)).toMatchObject({ title: 'a2', version: 2 });
    expect(await t.stored(b.id)).toMatchObject({ tags: ['x'], version: 2 });
  });

  it('POST batch: the conflict reruns the whole batch; each task is created once and a per-item 4xx stays with its item', async () => {
    await using t = await buildTasks({ failFirstAttempt: true });
    const out = await t.call(TasksOps.createBatch, { tasks: [{ title: 'one' }, { title: 'bad', assignee: 'nobody' }, { title: 'two' }] });
    expect(out.results.map((r) => r.status)).toEqual([201, 400, 201]);
    expect(out.results[1]?.error).toMatchObject({ code: 'ASSIGNEE_NOT_FOUND' });
    expect((await t.tasks.find({}, { sort: { title: 1 } })).map((d) => d.title)).toEqual(['one', 'two']);
    expect(await t.store.collection(Collections.tasks).countDocuments({})).toBe(2);
  });

  it('POST batch: the custom field definitions of the scope are read once per attempt, and every task gets the default, the rerun included', async () => {
    for (const failFirstAttempt of [false, true]) {
      await using t = await buildTasks({ failFirstAttempt });
      await t.call(CustomFieldsOps.create, { key: 'cf.estimate', name: 'Estimate', type: 'number', default: 3 });
      const reads = countFinds(t.store, Collections.customFields);
      const attempts = t.store.counts.attempts;
      const out = await t.call(TasksOps.createBatch, { tasks: Array.from({ length: 5 }, (_, i) => ({ title: `t${i}` })) });
      expect(out.results.map((r) => r.status)).toEqual([201, 201, 201, 201, 201]);
      expect(reads.n).toBe(t.store.counts.attempts - attempts);
      expect(reads.n).toBe(failFirstAttempt ? 2 : 1);
      expect((await t.tasks.find({})).map((d) => d.metadata['cf.estimate'] ?? d.metadata['cf%2Eestimate'])).toEqual([3, 3, 3, 3, 3]);
    }
  });
});

/** Counts the `find` calls on collection `name` of `store` from now on. */
function countFinds(store: DocumentStore, name: string): { n: number } {
  const counter = { n: 0 };
  const collection = store.collection.bind(store);
  store.collection = ((which: string) => {
    const c = collection(which);
    if (which !== name) return c;
    return new Proxy(c, {
      get(target, prop) {
        const v = Reflect.get(target, prop, target) as unknown;
        if (prop === 'find') return (...args: unknown[]) => (counter.n++, (v as (...a: unknown[]) => unknown).apply(target, args));
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
  }) as DocumentStore['collection'];
  return counter;
}
