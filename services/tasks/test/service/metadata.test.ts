import { describe, expect, it } from 'vitest';
import { TasksOps } from '@app/shared/contracts';
import { ALICE, BOB, buildTasks, fields, rejects } from './fixture.js';

const LATER = '2026-11-22T12:00:00.000Z';

describe('tasks.setMetadata / tasks.deleteMetadata', () => {
  it.each([
    ['app.points', 5],
    ['order', 2.5],
    ['cf.flags', [true, false]],
    ['cf.obj', { a: { b: 'c' } }],
    ['cf.off', false],
    ['cf.zero', 0],
    ['$odd.key%', 'x'],
  ])('sets %s (stored escaped) and returns the full task detail', async (key, value) => {
    await using t = await buildTasks();
    const task = await t.newTask('x', ALICE, { metadata: { keep: 1 } });
    await t.call(TasksOps.addNote, { taskId: task.id, content: 'n' });
    t.clock.set(LATER);
    const detail = await t.call(TasksOps.setMetadata, { taskId: task.id, key, value });
    expect(detail.metadata).toEqual({ keep: 1, [key]: value });
    expect(detail).toMatchObject({ updated_at: LATER, linkedTo: [] });
    expect(detail.notes).toHaveLength(1);
    const stored = (await t.stored(task.id)).metadata;
    expect(Object.keys(stored).some((k) => k.includes('.') || k.startsWith('$'))).toBe(false);
    expect((await t.call(TasksOps.get, { taskId: task.id })).metadata).toEqual({ keep: 1, [key]: value });
  });

  it('refuses null with a hint to use DELETE, and a missing value or key', async () => {
    await using t = await buildTasks();
    const task = await t.newTask('x', ALICE, { metadata: { order: 1 } });
    const nul = await rejects(t.call(TasksOps.setMetadata, { taskId: task.id, key: 'order', value: null }), 'VALIDATION_FAILED');
    expect(nul.message).toContain('DELETE');
    expect(fields(nul)).toEqual(['/value']);
    const missing = await rejects(t.call(TasksOps.setMetadata, { taskId: task.id, key: 'order' } as never), 'VALIDATION_FAILED');
    expect(fields(missing)).toContain('/value');
    const noKey = await rejects(t.call(TasksOps.setMetadata, { taskId: task.id, key: '', value: 1 }), 'VALIDATION_FAILED');
    expect(fields(noKey)).toContain('/key');
    expect((await t.stored(task.id)).metadata).toEqual({ order: 1 });
  });

  it('removes a dotted key and answers 404 METADATA_KEY_NOT_FOUND for an absent one', async () => {
    await using t = await buildTasks();
    const sprint = await t.newTask('sprint', ALICE, { metadata: { 'app.type': 'sprint' } });
    const task = await t.newTask('x', ALICE, { metadata: { 'app.sprint': sprint.id, order: 1 } });
    t.clock.set(LATER);
    const detail = await t.call(TasksOps.deleteMetadata, { taskId: task.id, key: 'app.sprint' });
    expect(detail.metadata).toEqual({ order: 1 });
    expect(detail.updated_at).toBe(LATER);
    expect((await t.stored(task.id)).metadata).toEqual({ order: 1 });
    await rejects(t.call(TasksOps.deleteMetadata, { taskId: task.id, key: 'app.sprint' }), 'METADATA_KEY_NOT_FOUND');
    // `app.sprint` and a literal `app%2Esprint` key are different keys
    await rejects(t.call(TasksOps.deleteMetadata, { taskId: task.id, key: 'app%2Esprint' }), 'METADATA_KEY_NOT_FOUND');
  });

  it('applies task access: r members get 403, outsiders 404', async () => {
    await using t = await buildTasks();
    const task = await t.newTask('x', ALICE, { metadata: { order: 1 } });
    await rejects(t.call(TasksOps.setMetadata, { taskId: task.id, key: 'order', value: 2 }, BOB), 'TASK_NOT_FOUND');
    await t.share(task.id, 'r', [BOB]);
    await rejects(t.call(TasksOps.setMetadata, { taskId: task.id, key: 'order', value: 2 }, BOB), 'FORBIDDEN');
    await rejects(t.call(TasksOps.deleteMetadata, { taskId: task.id, key: 'order' }, BOB), 'FORBIDDEN');
    expect((await t.stored(task.id)).metadata).toEqual({ order: 1 });
  });
});
