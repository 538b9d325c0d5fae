import { describe, expect, it } from 'vitest';
import { TasksOps } from '@app/shared/contracts';
import { ALICE, BOB, T0, buildTasks, fields, rejects } from './fixture.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('tasks.create', () => {
  it('creates a task with the SPEC defaults, stamped by the clock and the caller', async () => {
    await using t = await buildTasks();
    const task = await t.call(TasksOps.create, { title: 'Write the spec' });
    expect(task.id).toMatch(UUID);
    expect(task).toEqual({
      id: task.id, title: 'Write the spec', description: '', status: 'todo', path: '', tags: [], checkInCount: 0, metadata: {},
      created_at: T0, created_by: ALICE, updated_at: T0, updated_by: ALICE, version: 1,
    });
    const doc = await t.stored(task.id);
    expect(doc).toMatchObject({ _id: task.id, deleted: false, created_by: ALICE, linkedToIds: [], resourceIds: [] });
    expect(doc.groupId).toBeUndefined();
  });

  it('stores every accepted field, normalizing dates to UTC and escaping metadata keys', async () => {
    await using t = await buildTasks();
    const parent = await t.newTask('parent');
    const other = await t.newTask('other');
    const task = await t.call(TasksOps.create, {
      title: '  Plan sprint  ',
      description: '# body',
      status: 'doing',
      path: '/projects/q4',
      tags: ['q4', 'ops', 'q4'],
      metadata: { 'app.sprint': parent.id, 'cf.priority': 2, order: 1.5, nested: { a: [1, 'x'] } },
      assignee: BOB,
      kickoff: '2026-12-01',
      deadline: '2026-12-05T17:30:00+02:00',
      derived_from_id: parent.id,
      linked_to_ids: [other.id, parent.id],
      resourceIds: ['res-1'],
    });
    expect(task).toMatchObject({
      title: 'Plan sprint', description: '# body', status: 'doing', path: '/projects/q4', tags: ['q4', 'ops'],
      metadata: { 'app.sprint': parent.id, 'cf.priority': 2, order: 1.5, nested: { a: [1, 'x'] } },
      assignee: BOB, kickoff: '2026-12-01T00:00:00.000Z', deadline: '2026-12-05T15:30:00.000Z',
      derivedFromId: parent.id, linkedToIds: [other.id, parent.id], resourceIds: ['res-1'],
    });
    // read back as stored: the dotted keys come back as written (their escaping is the store's, docs/store.md "Metadata keys")
    const read = await t.call(TasksOps.get, { taskId: task.id });
    expect(read.metadata).toEqual({ 'app.sprint': parent.id, 'cf.priority': 2, order: 1.5, nested: { a: [1, 'x'] } });
  });

  it('ignores unknown fields and treats "" assignee, kickoff and deadline as none', async () => {
    await using t = await buildTasks();
    const input = { title: 'x', assignee: '', kickoff: '', deadline: '', bogus: 1 };
    const task = await t.call(TasksOps.create, input as typeof input & { title: string });
    expect(task).not.toHaveProperty('assignee');
    expect(task).not.toHaveProperty('kickoff');
    expect(task).not.toHaveProperty('deadline');
    expect(await t.stored(task.id)).not.toHaveProperty('bogus');
  });

  it.each([
    [{}, '/title'],
    [{ title: '   ' }, '/title'],
    [{ title: 'x'.repeat(501) }, '/title'],
    [{ title: 7 }, '/title'],
    [{ title: 'x', tags: 'q4' }, '/tags'],
    [{ title: 'x', tags: [''] }, '/tags/0'],
    [{ title: 'x', status: '' }, '/status'],
    [{ title: 'x', metadata: [] }, '/metadata'],
    [{ title: 'x', metadata: { 'cf.x': null } }, '/metadata/cf.x'],
    [{ title: 'x', kickoff: 'tomorrow' }, '/kickoff'],
    [{ title: 'x', kickoff: '2026-02-30' }, '/kickoff'],
    [{ title: 'x', deadline: '2026-12-01T10:00:00' }, '/deadline'],
    [{ title: 'x', deadline: '2026-12-01T25:00:00Z' }, '/deadline'],
    [{ title: 'x', path: 'no-slash' }, '/path'],
    [{ title: 'x', path: '/a//b' }, '/path'],
    [{ title: 'x', path: '/a/b?' }, '/path'],
    [{ title: 'x', linked_to_ids: 'abc' }, '/linked_to_ids'],
  ])('rejects %j with 400 naming %s and writes nothing', async (body, field) => {
    await using t = await buildTasks();
    const err = await rejects(t.call(TasksOps.create, body as never), 'VALIDATION_FAILED');
    expect(fields(err)).toContain(field);
    expect(await t.tasks.countDocuments({})).toBe(0);
  });

  it('accepts a title of exactly 500 characters', async () => {
    await using t = await buildTasks();
    const task = await t.newTask('x'.repeat(500));
    expect(task.title).toHaveLength(500);
  });

  it('rejects an assignee that is not a user with 400 ASSIGNEE_NOT_FOUND', async () => {
    await using t = await buildTasks();
    const err = await rejects(t.call(TasksOps.create, { title: 'x', assignee: 'nobody' }), 'ASSIGNEE_NOT_FOUND');
    expect(fields(err)).toEqual(['/assignee']);
    expect(await t.tasks.countDocuments({})).toBe(0);
  });

  it('rejects links to tasks the caller cannot read, naming each field', async () => {
    await using t = await buildTasks();
    const mine = await t.newTask('mine');
    const bobs = await t.newTask('bobs', BOB);
    const err = await rejects(
      t.call(TasksOps.create, { title: 'x', derived_from_id: bobs.id, linked_to_ids: [mine.id, 'not-a-uuid'] }),
      'VALIDATION_FAILED',
    );
    expect(fields(err)).toEqual(['/derived_from_id', '/linked_to_ids/1']);
    expect(await t.tasks.countDocuments({})).toBe(2);
  });

  it('needs a caller', async () => {
    await using t = await buildTasks();
    await rejects(t.call(TasksOps.create, { title: 'x' }, null), 'UNAUTHORIZED');
  });
});
