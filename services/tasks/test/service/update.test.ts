import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { TasksOps } from '@app/shared/contracts';
import { ALICE, BOB, CAROL, T0, buildTasks, fields, rejects } from './fixture.js';

const LATER = '2026-11-22T11:00:00.000Z';

describe('tasks.update', () => {
  it('changes only the given fields and stamps updated_at/updated_by', async () => {
    await using t = await buildTasks();
    const task = await t.newTask('old', ALICE, { description: 'keep', tags: ['a'], metadata: { order: 1 } });
    t.clock.set(LATER);
    const after = await t.call(TasksOps.update, { taskId: task.id, title: ' new ', status: 'doing', tags: ['b', 'b', 'c'] });
    expect(after).toEqual({ ...task, title: 'new', status: 'doing', tags: ['b', 'c'], updated_at: LATER, version: 2 });
    expect(await t.stored(task.id)).toMatchObject({ title: 'new', description: 'keep', created_at: T0, updated_at: LATER });
  });

  it('normalizes kickoff and deadline, and "" clears assignee, kickoff, deadline and derivedFromId', async () => {
    await using t = await buildTasks();
    const parent = await t.newTask('parent');
    const task = await t.newTask();
    const set = await t.call(TasksOps.update, {
      taskId: task.id, assignee: BOB, kickoff: '2026-12-01', deadline: '2026-12-31T23:00:00-05:00', derivedFromId: parent.id,
    });
    expect(set).toMatchObject({ assignee: BOB, kickoff: '2026-12-01T00:00:00.000Z', deadline: '2027-01-01T04:00:00.000Z', derivedFromId: parent.id });
    const cleared = await t.call(TasksOps.update, { taskId: task.id, assignee: '', kickoff: '', deadline: '', derivedFromId: '' });
    for (const f of ['assignee', 'kickoff', 'deadline', 'derivedFromId']) {
      expect(cleared).not.toHaveProperty(f);
      expect(await t.call(TasksOps.get, { taskId: task.id })).not.toHaveProperty(f);
    }
  });

  it('merges metadata keys, dotted keys included', async () => {
    await using t = await buildTasks();
    const task = await t.newTask('x', ALICE, { metadata: { order: 1, 'cf.size': 'M' } });
    const after = await t.call(TasksOps.update, { taskId: task.id, metadata: { 'cf.size': 'L', 'app.points': 3 } });
    expect(after.metadata).toEqual({ order: 1, 'cf.size': 'L', 'app.points': 3 });
    expect((await t.call(TasksOps.get, { taskId: task.id })).metadata).toEqual({ order: 1, 'cf.size': 'L', 'app.points': 3 });
  });

  it.each([
    [{ title: '' }, '/title'],
    [{ title: 'x'.repeat(501) }, '/title'],
    [{ status: 3 }, '/status'],
    [{ tags: [1] }, '/tags/0'],
    [{ kickoff: '12/01/2026' }, '/kickoff'],
    [{ deadline: '2026-13-01' }, '/deadline'],
    [{ path: '/trailing/' }, '/path'],
    [{ metadata: { order: null } }, '/metadata/order'],
    [{ derivedFromId: '00000000-0000-4000-8000-000000000000' }, '/derivedFromId'],
  ])('rejects %j with 400 naming %s and writes nothing', async (patch, field) => {
    await using t = await buildTasks();
    const task = await t.newTask();
    const before = await t.stored(task.id);
    t.clock.set(LATER);
    const err = await rejects(t.call(TasksOps.update, { taskId: task.id, ...patch } as never), 'VALIDATION_FAILED');
    expect(fields(err)).toContain(field);
    expect(await t.stored(task.id)).toEqual(before);
  });

  it('points a null metadata value to the DELETE route', async () => {
    await using t = await buildTasks();
    const task = await t.newTask();
    const err = await rejects(t.call(TasksOps.update, { taskId: task.id, metadata: { 'app.sprint': null } }), 'VALIDATION_FAILED');
    expect(err.message).toContain('DELETE');
  });

  it('refuses to derive a task from itself', async () => {
    await using t = await buildTasks();
    const task = await t.newTask();
    const err = await rejects(t.call(TasksOps.update, { taskId: task.id, derivedFromId: task.id }), 'VALIDATION_FAILED');
    expect(fields(err)).toEqual(['/derivedFromId']);
  });

  it('rejects an unknown assignee with ASSIGNEE_NOT_FOUND and writes nothing', async () => {
    await using t = await buildTasks();
    const task = await t.newTask('x', ALICE, { assignee: BOB });
    await rejects(t.call(TasksOps.update, { taskId: task.id, title: 'changed', assignee: randomUUID() }), 'ASSIGNEE_NOT_FOUND');
    expect(await t.stored(task.id)).toMatchObject({ title: 'x', assignee: BOB });
  });

  it('lets a group member with rw update (updated_by is that member); r is 403, outsiders 404', async () => {
    await using t = await buildTasks();
    const task = await t.newTask();
    const other = await t.newTask();
    await t.share(task.id, 'rw', [BOB]);
    await t.share(other.id, 'r', [BOB]);
    const after = await t.call(TasksOps.update, { taskId: task.id, status: 'done' }, BOB);
    expect(after).toMatchObject({ status: 'done', updated_by: BOB, created_by: ALICE });
    await rejects(t.call(TasksOps.update, { taskId: other.id, status: 'done' }, BOB), 'FORBIDDEN');
    await rejects(t.call(TasksOps.update, { taskId: task.id, status: 'done' }, CAROL), 'TASK_NOT_FOUND');
    expect((await t.stored(other.id)).status).toBe('todo');
  });
});
