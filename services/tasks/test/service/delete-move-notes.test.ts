import { describe, expect, it } from 'vitest';
import { TasksOps } from '@app/shared/contracts';
import { ALICE, BOB, CAROL, T0, buildTasks, fields, rejects } from './fixture.js';

describe('tasks.remove', () => {
  it('soft-deletes: the document stays, marked, and every op answers 404 afterwards', async () => {
    await using t = await buildTasks();
    const task = await t.newTask();
    expect(await t.call(TasksOps.remove, { taskId: task.id })).toBeNull();
    expect(await t.stored(task.id)).toMatchObject({ deleted: true, deleted_at: T0, deleted_by: ALICE, title: 'a task' });
    const taskId = task.id;
    await rejects(t.call(TasksOps.get, { taskId }), 'TASK_NOT_FOUND');
    await rejects(t.call(TasksOps.update, { taskId, title: 'x' }), 'TASK_NOT_FOUND');
    await rejects(t.call(TasksOps.remove, { taskId }), 'TASK_NOT_FOUND');
    await rejects(t.call(TasksOps.setMetadata, { taskId, key: 'order', value: 1 }), 'TASK_NOT_FOUND');
    await rejects(t.call(TasksOps.deleteMetadata, { taskId, key: 'order' }), 'TASK_NOT_FOUND');
    await rejects(t.call(TasksOps.movePath, { taskId, path: '/x' }), 'TASK_NOT_FOUND');
    await rejects(t.call(TasksOps.addNote, { taskId, content: 'x' }), 'TASK_NOT_FOUND');
    await rejects(t.call(TasksOps.listNotes, { taskId }), 'TASK_NOT_FOUND');
    // nor can a deleted task be linked to
    await rejects(t.call(TasksOps.create, { title: 'y', derived_from_id: taskId }), 'VALIDATION_FAILED');
  });

  it('needs write access: r members get 403, outsiders 404', async () => {
    await using t = await buildTasks();
    const task = await t.newTask();
    await t.share(task.id, 'r', [BOB]);
    await rejects(t.call(TasksOps.remove, { taskId: task.id }, BOB), 'FORBIDDEN');
    await rejects(t.call(TasksOps.remove, { taskId: task.id }, CAROL), 'TASK_NOT_FOUND');
    expect((await t.stored(task.id)).deleted).toBe(false);
  });
});

describe('tasks.movePath', () => {
  it('changes the folder path only', async () => {
    await using t = await buildTasks();
    const task = await t.newTask('x', ALICE, { path: '/inbox', status: 'doing' });
    t.clock.set('2026-11-23T00:00:00.000Z');
    const moved = await t.call(TasksOps.movePath, { taskId: task.id, path: '/projects/q4 launch' });
    expect(moved).toEqual({ ...task, path: '/projects/q4 launch', updated_at: '2026-11-23T00:00:00.000Z', version: 2 });
    expect((await t.call(TasksOps.movePath, { taskId: task.id, path: '' })).path).toBe('');
    expect((await t.call(TasksOps.movePath, { taskId: task.id, path: '/' })).path).toBe('/');
  });

  it.each([['projects'], ['/a/'], ['/a/ b'], ['/a/b.'], ['/a:b'], [`/${'x'.repeat(65)}`]])('rejects path %j naming /path', async (path) => {
    await using t = await buildTasks();
    const task = await t.newTask('x', ALICE, { path: '/inbox' });
    const err = await rejects(t.call(TasksOps.movePath, { taskId: task.id, path }), 'VALIDATION_FAILED');
    expect(fields(err)).toEqual(['/path']);
    expect((await t.stored(task.id)).path).toBe('/inbox');
  });

  it('needs a path', async () => {
    await using t = await buildTasks();
    const task = await t.newTask();
    const err = await rejects(t.call(TasksOps.movePath, { taskId: task.id } as never), 'VALIDATION_FAILED');
    expect(fields(err)).toContain('/path');
  });
});

describe('notes', () => {
  it('adds notes and lists them oldest first, ties broken by id', async () => {
    await using t = await buildTasks();
    const task = await t.newTask();
    t.clock.set('2026-11-22T10:05:00.000Z');
    const late = await t.call(TasksOps.addNote, { taskId: task.id, content: 'late' });
    t.clock.set(T0);
    const tieA = await t.call(TasksOps.addNote, { taskId: task.id, content: 'tie a' });
    const tieB = await t.call(TasksOps.addNote, { taskId: task.id, content: 'tie b' });
    expect(late).toEqual({
      id: late.id, task_id: task.id, content: 'late',
      created_at: '2026-11-22T10:05:00.000Z', created_by: ALICE, updated_at: '2026-11-22T10:05:00.000Z', updated_by: ALICE,
    });
    const ties = [tieA, tieB].sort((x, y) => (x.id < y.id ? -1 : 1));
    expect(await t.call(TasksOps.listNotes, { taskId: task.id })).toEqual([...ties, late]);
    expect(await t.notes.findOne({ _id: late.id })).toMatchObject({ task_id: task.id, content: 'late' });
  });

  it('refuses blank content', async () => {
    await using t = await buildTasks();
    const task = await t.newTask();
    for (const body of [{ content: '  \n' }, {}]) {
      const err = await rejects(t.call(TasksOps.addNote, { taskId: task.id, ...body } as never), 'VALIDATION_FAILED');
      expect(fields(err)).toEqual(['/content']);
    }
    expect(await t.notes.countDocuments({})).toBe(0);
  });

  it('lets r members list but not add; outsiders get 404 for both', async () => {
    await using t = await buildTasks();
    const task = await t.newTask();
    await t.call(TasksOps.addNote, { taskId: task.id, content: 'hello' });
    await t.share(task.id, 'r', [BOB]);
    expect((await t.call(TasksOps.listNotes, { taskId: task.id }, BOB)).map((n) => n.content)).toEqual(['hello']);
    await rejects(t.call(TasksOps.addNote, { taskId: task.id, content: 'x' }, BOB), 'FORBIDDEN');
    await rejects(t.call(TasksOps.listNotes, { taskId: task.id }, CAROL), 'TASK_NOT_FOUND');
    await rejects(t.call(TasksOps.addNote, { taskId: task.id, content: 'x' }, CAROL), 'TASK_NOT_FOUND');
  });
});
