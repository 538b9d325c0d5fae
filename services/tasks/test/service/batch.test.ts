import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { TasksOps } from '@app/shared/contracts';
import { Collections } from '@app/shared/store';
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
});
