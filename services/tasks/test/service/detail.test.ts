import { describe, expect, it } from 'vitest';
import { TasksOps } from '@app/shared/contracts';
import type { DocumentStore } from '@app/shared/store';
import { loadTaskWithDerived, SUBTASKS_MAX } from '../../src/task-store.js';
import { ALICE, BOB, CAROL, buildTasks, rejects } from './fixture.js';

describe('tasks.get', () => {
  it('returns the task with notes and summaries of linked tasks in link order', async () => {
    await using t = await buildTasks();
    const parent = await t.newTask('parent', ALICE, {
      description: 'the **why**', tags: ['q4'], metadata: { 'cf.size': 3 }, assignee: BOB, kickoff: '2026-01-01', deadline: '2026-02-01',
    });
    const a = await t.newTask('a', ALICE, { status: 'done' });
    const b = await t.newTask('b');
    const task = await t.newTask('child', ALICE, { derived_from_id: parent.id, linked_to_ids: [b.id, a.id] });
    const note = await t.call(TasksOps.addNote, { taskId: task.id, content: 'first' });
    const detail = await t.call(TasksOps.get, { taskId: task.id });
    // ud's LinkedItemInfoDTO: id, title, status and timestamps always; the rest when set
    const summary = (x: typeof a) => ({ id: x.id, title: x.title, status: x.status, created_at: x.created_at, updated_at: x.updated_at });
    expect(detail).toEqual({
      ...task,
      notes: [note],
      derivedFrom: {
        ...summary(parent), description: 'the **why**', tags: ['q4'], metadata: { 'cf.size': 3 },
        assignee: BOB, kickoff: '2026-01-01T00:00:00.000Z', deadline: '2026-02-01T00:00:00.000Z',
      },
      linkedTo: [summary(b), summary(a)],
    });
  });

  it('encodes the detail as JSON.stringify does, with the version as ETag, and answers changes as they are now', async () => {
    await using t = await buildTasks();
    const parent = await t.newTask('parent');
    const task = await t.newTask('child "quoted" \u00e9', ALICE, { derived_from_id: parent.id, linked_to_ids: [parent.id], metadata: { 'cf.priority': 2 } });
    await t.call(TasksOps.addNote, { taskId: task.id, content: 'first' });
    const reply = await t.bus.requestReply(TasksOps.get, { taskId: task.id }, { userId: ALICE });
    if (!reply.ok) throw reply.error;
    expect(reply.text).toBe(JSON.stringify(JSON.parse(reply.text)));
    expect(Object.keys(JSON.parse(reply.text)).slice(-3)).toEqual(['notes', 'linkedTo', 'derivedFrom']);
    expect(reply.meta.version).toBe(task.version);
    // a changed task and an added note are read anew, not taken from an earlier encoding
    const updated = await t.call(TasksOps.update, { taskId: task.id, title: 'renamed' });
    await t.call(TasksOps.addNote, { taskId: task.id, content: 'second' });
    const again = await t.bus.requestReply(TasksOps.get, { taskId: task.id }, { userId: ALICE });
    if (!again.ok) throw again.error;
    const detail = JSON.parse(again.text) as { title: string; notes: { content: string }[] };
    expect(detail.title).toBe('renamed');
    expect(detail.notes.map((n) => n.content).sort()).toEqual(['first', 'second']); // same created_at here: ordered by id
    expect(again.meta.version).toBe(updated.version);
  });

  it('leaves out links the caller cannot read and links to deleted tasks', async () => {
    await using t = await buildTasks();
    const shared = await t.newTask('shared');
    const gone = await t.newTask('gone');
    const task = await t.newTask('child', ALICE, { derived_from_id: gone.id, linked_to_ids: [shared.id, gone.id] });
    await t.share(task.id, 'r', [BOB]);
    await t.call(TasksOps.remove, { taskId: gone.id });
    const forAlice = await t.call(TasksOps.get, { taskId: task.id });
    expect(forAlice.linkedTo.map((l) => l.title)).toEqual(['shared']);
    expect(forAlice).not.toHaveProperty('derivedFrom');
    // bob reads the task through the group, but not the private task it links to
    const forBob = await t.call(TasksOps.get, { taskId: task.id }, BOB);
    expect(forBob.linkedTo).toEqual([]);
    expect(forBob.linkedToIds).toEqual([shared.id, gone.id]);
  });

  it('lists the live tasks derived from it that the caller can read as subtasks, oldest first', async () => {
    await using t = await buildTasks();
    const parent = await t.newTask('parent');
    expect(await t.call(TasksOps.get, { taskId: parent.id })).not.toHaveProperty('subtasks');
    await t.share(parent.id, 'r', [BOB]);
    const first = await t.newTask('first', ALICE, { derived_from_id: parent.id, tags: ['x'] });
    const second = await t.newTask('second', ALICE, { derived_from_id: parent.id });
    const gone = await t.newTask('gone', ALICE, { derived_from_id: parent.id });
    await t.call(TasksOps.remove, { taskId: gone.id });
    const bobs = await t.newTask('bob\'s', BOB, { derived_from_id: parent.id });
    const summary = (x: typeof first) => ({ id: x.id, title: x.title, status: x.status, created_at: x.created_at, updated_at: x.updated_at });
    // each caller sees the subtasks it can read: alice's are private to her, bob's to him
    expect((await t.call(TasksOps.get, { taskId: parent.id })).subtasks).toEqual([{ ...summary(first), tags: ['x'] }, summary(second)]);
    expect((await t.call(TasksOps.get, { taskId: parent.id }, BOB)).subtasks).toEqual([summary(bobs)]);
    // the metadata writes answer the same detail
    expect((await t.call(TasksOps.setMetadata, { taskId: parent.id, key: 'order', value: 1 })).subtasks).toHaveLength(2);
  });

  it('lists at most SUBTASKS_MAX subtasks: the oldest, ties by id, also when more exist', async () => {
    await using t = await buildTasks();
    const parent = await t.newTask('parent');
    const made = [];
    for (let i = 0; i <= SUBTASKS_MAX; i++) made.push(await t.newTask(`sub ${i}`, ALICE, { derived_from_id: parent.id }));
    const order = (a: { created_at: string; id: string }, b: { created_at: string; id: string }) =>
      a.created_at.localeCompare(b.created_at) || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
    const ids = (list: Array<{ created_at: string; id: string }>) => list.map((x) => x.id);
    const detail = await t.call(TasksOps.get, { taskId: parent.id });
    expect(ids(detail.subtasks ?? [])).toEqual(ids([...made].sort(order).slice(0, SUBTASKS_MAX)));
    // one fewer: every one of them, in the same order
    await t.call(TasksOps.remove, { taskId: made[0]!.id });
    const fewer = await t.call(TasksOps.get, { taskId: parent.id });
    expect(ids(fewer.subtasks ?? [])).toEqual(ids(made.slice(1).sort(order)));
  });

  it('reads the task by itself when its read with the subtasks comes back full without it', async () => {
    const taskId = '01890000-0000-7000-8000-000000000000';
    const doc = (id: string, derivedFromId?: string) => ({ _id: id, created_by: ALICE, deleted: false, linkedToIds: [], ...(derivedFromId ? { derivedFromId } : {}) });
    const subs = Array.from({ length: SUBTASKS_MAX + 2 }, (_, i) => doc(`01890000-0000-7000-8000-${String(i + 1).padStart(12, '0')}`, taskId));
    const reads: string[] = [];
    const tasks = {
      find: async () => (reads.push('find'), subs),
      findOne: async (filter: { _id: string }) => (reads.push('findOne'), filter._id === taskId ? doc(taskId) : null),
    };
    const store = { collection: () => tasks } as unknown as DocumentStore;
    const loaded = await loadTaskWithDerived(store, { userId: ALICE }, taskId);
    expect(loaded.task._id).toBe(taskId);
    expect(loaded.derived).toHaveLength(SUBTASKS_MAX + 2);
    expect(reads).toEqual(['find', 'findOne']);
    // an answer that is not full holds every match: no second read, and no task is none
    subs.length = 3;
    reads.length = 0;
    await rejects(loadTaskWithDerived(store, { userId: ALICE }, taskId), 'TASK_NOT_FOUND');
    expect(reads).toEqual(['find']);
  });

  it('answers 404 TASK_NOT_FOUND to other users, unknown ids and ids that are not UUIDs', async () => {
    await using t = await buildTasks();
    const task = await t.newTask();
    await rejects(t.call(TasksOps.get, { taskId: task.id }, BOB), 'TASK_NOT_FOUND');
    await rejects(t.call(TasksOps.get, { taskId: '00000000-0000-4000-8000-000000000000' }), 'TASK_NOT_FOUND');
    await rejects(t.call(TasksOps.get, { taskId: 'not-a-uuid' }), 'TASK_NOT_FOUND');
  });

  it('lets members of the task group read it, with either permission', async () => {
    await using t = await buildTasks();
    const r = await t.newTask('r');
    const rw = await t.newTask('rw');
    await t.share(r.id, 'r', [BOB]);
    await t.share(rw.id, 'rw', [CAROL]);
    expect((await t.call(TasksOps.get, { taskId: r.id }, BOB)).title).toBe('r');
    expect((await t.call(TasksOps.get, { taskId: rw.id }, CAROL)).title).toBe('rw');
    await rejects(t.call(TasksOps.get, { taskId: rw.id }, BOB), 'TASK_NOT_FOUND');
  });
});
