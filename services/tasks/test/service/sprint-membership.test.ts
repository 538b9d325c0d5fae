import { describe, expect, it } from 'vitest';
import { TasksOps } from '@app/shared/contracts';
import { escapeKey } from '@app/shared/store';
import { ALICE, BOB, buildTasks, rejects } from './fixture.js';

const SPRINT = escapeKey('app.sprint');

/** Alice's sprint, and bob's own task; `share` puts bob in a group the sprint is shared with. */
async function setup() {
  const t = await buildTasks();
  const sprint = await t.newTask('Sprint A', ALICE, { metadata: { 'app.type': 'sprint' } });
  const bobs = await t.newTask('bob private', BOB);
  return { t, sprint, bobs };
}

describe('joining a sprint needs write access to the sprint task', () => {
  it('create: 404 for a sprint the caller cannot read, 403 for a read-only one, 201 for a writable one', async () => {
    const { t, sprint } = await setup();
    await using _ = t;
    const unreadable = await rejects(t.newTask('x', BOB, { metadata: { 'app.sprint': sprint.id, 'app.points': 100 } }), 'TASK_NOT_FOUND');
    expect(unreadable.details).toMatchObject({ taskId: sprint.id, field: '/metadata/app.sprint' });
    expect(await t.tasks.find({ created_by: BOB, title: 'x' })).toEqual([]);

    await t.share(sprint.id, 'r', [BOB]);
    await rejects(t.newTask('x', BOB, { metadata: { 'app.sprint': sprint.id } }), 'FORBIDDEN');
    await rejects(t.newTask('x', BOB, { metadata: { 'app.sprint': 'not-a-task' } }), 'TASK_NOT_FOUND');

    await t.share(sprint.id, 'rw', [BOB]);
    const ok = await t.newTask('x', BOB, { metadata: { 'app.sprint': sprint.id } });
    expect(ok.metadata).toEqual({ 'app.sprint': sprint.id });
  });

  it('PATCH and the one-key metadata PATCH: 404 / 403 and nothing written', async () => {
    const { t, sprint, bobs } = await setup();
    await using _ = t;
    const patch = await rejects(t.call(TasksOps.update, { taskId: bobs.id, title: 'renamed', metadata: { 'app.sprint': sprint.id } }, BOB), 'TASK_NOT_FOUND');
    expect(patch.details).toMatchObject({ field: '/metadata/app.sprint' });
    const one = await rejects(t.call(TasksOps.setMetadata, { taskId: bobs.id, key: 'app.sprint', value: sprint.id }, BOB), 'TASK_NOT_FOUND');
    expect(one.details).toMatchObject({ field: '/value' });

    await t.share(sprint.id, 'r', [BOB]);
    await rejects(t.call(TasksOps.update, { taskId: bobs.id, metadata: { 'app.sprint': sprint.id } }, BOB), 'FORBIDDEN');
    await rejects(t.call(TasksOps.setMetadata, { taskId: bobs.id, key: 'app.sprint', value: sprint.id }, BOB), 'FORBIDDEN');
    const stored = await t.stored(bobs.id);
    expect(stored.title).toBe('bob private');
    expect(stored.metadata).not.toHaveProperty(SPRINT);
    expect(stored.version).toBe(1);
  });

  it('batch create and batch update: the item answers 404 / 403, the others stand', async () => {
    const { t, sprint, bobs } = await setup();
    await using _ = t;
    const created = await t.call(TasksOps.createBatch, { tasks: [{ title: 'fine' }, { title: 'sneak', metadata: { 'app.sprint': sprint.id } }] }, BOB);
    expect(created.results.map((r) => [r.status, r.error?.code])).toEqual([[201, undefined], [404, 'TASK_NOT_FOUND']]);

    await t.share(sprint.id, 'r', [BOB]);
    const updated = await t.call(TasksOps.updateBatch, {
      updates: [{ id: bobs.id, changes: { status: 'doing' } }, { id: bobs.id, changes: { metadata: { 'app.sprint': sprint.id } } }],
    }, BOB);
    expect(updated.results.map((r) => [r.status, r.error?.code])).toEqual([[200, undefined], [403, 'FORBIDDEN']]);
    expect((await t.stored(bobs.id)).metadata).not.toHaveProperty(SPRINT);

    const atomic = await t.call(TasksOps.createBatch, { atomic: true, tasks: [{ title: 'a' }, { title: 'b', metadata: { 'app.sprint': sprint.id } }] }, BOB);
    expect(atomic.results.map((r) => r.status)).toEqual([424, 403]);
  });

  it('a task already in a sprint may still be edited after the sprint is no longer writable; moving it to another needs access', async () => {
    const { t, sprint, bobs } = await setup();
    await using _ = t;
    const group = await t.share(sprint.id, 'rw', [BOB]);
    await t.call(TasksOps.update, { taskId: bobs.id, metadata: { 'app.sprint': sprint.id } }, BOB);
    // the share is removed after planning
    await t.tasks.updateOne({ _id: sprint.id }, { $unset: { groupId: '', groupPermission: '' } });
    expect(group).toBeTruthy();
    const edited = await t.call(TasksOps.update, { taskId: bobs.id, status: 'doing', metadata: { 'app.sprint': sprint.id, 'app.points': 2 } }, BOB);
    expect(edited.metadata).toEqual({ 'app.sprint': sprint.id, 'app.points': 2 });
    // leaving the sprint needs nothing; joining it again does
    await t.call(TasksOps.deleteMetadata, { taskId: bobs.id, key: 'app.sprint' }, BOB);
    await rejects(t.call(TasksOps.setMetadata, { taskId: bobs.id, key: 'app.sprint', value: sprint.id }, BOB), 'TASK_NOT_FOUND');
  });

  it('a non-string app.sprint names no task and is stored as sent', async () => {
    const { t } = await setup();
    await using _ = t;
    const task = await t.newTask('x', BOB, { metadata: { 'app.sprint': 7 } });
    expect(task.metadata).toEqual({ 'app.sprint': 7 });
  });
});
