import { describe, expect, it } from 'vitest';
import { mergeMoveActions, planMove, type ColumnAction, type TaskDoc } from '@app/shared/domain';
import { aTask as taskDoc, type TaskFields } from '@app/shared/testing';

const NOW = new Date('2026-11-22T12:00:00.000Z');

const enter = (field: string, operation: ColumnAction['operation'], value?: unknown): ColumnAction =>
  ({ trigger: 'enter', field, operation, source: 'manual', ...(value === undefined ? {} : { value }) });
const exit = (field: string, operation: ColumnAction['operation'], value?: unknown): ColumnAction =>
  ({ ...enter(field, operation, value), trigger: 'exit' });
const col = (...actions: ColumnAction[]) => ({ actions });

const aTask = (over: TaskFields = {}): TaskDoc =>
  taskDoc({ _id: 't1', title: 'Card', tags: ['a'], metadata: { 'cf.priority': 'low' }, at: '2026-11-01T00:00:00.000Z', owner: 'u1', ...over });

describe('mergeMoveActions', () => {
  it('takes exit actions of the source and enter actions of the target only', () => {
    const from = col(enter('status', 'set', 'ignored'), exit('tags', 'remove', ['todo']));
    const to = col(enter('status', 'set', 'done'), exit('assignee', 'set', 'ignored'));
    const e = mergeMoveActions(from, to);
    expect([...e.set]).toEqual([['status', 'done']]);
    expect(e.removeTags).toEqual(['todo']);
    expect(e.addTags).toEqual([]);
    expect([...e.clear]).toEqual([]);
  });

  it('lets enter win over exit on the same field, for set and clear alike', () => {
    const e = mergeMoveActions(
      col(exit('status', 'set', 'archived'), exit('assignee', 'clear'), exit('metadata.cf.x', 'set', 1)),
      col(enter('status', 'set', 'doing'), enter('assignee', 'set', 'bob'), enter('metadata.cf.x', 'clear')),
    );
    expect(Object.fromEntries(e.set)).toEqual({ status: 'doing', assignee: 'bob' });
    expect([...e.clear]).toEqual(['metadata.cf.x']);
  });

  it('keeps a tag both removed on exit and added on enter, and drops one added on exit but removed on enter', () => {
    const e = mergeMoveActions(
      col(exit('tags', 'remove', ['keep', 'gone']), exit('tags', 'add', ['undone'])),
      col(enter('tags', 'add', ['keep', 'new']), enter('tags', 'remove', ['undone'])),
    );
    expect(e.addTags.sort()).toEqual(['keep', 'new']);
    expect(e.removeTags.sort()).toEqual(['gone', 'undone']);
  });

  it('lets add beat remove within one side', () => {
    const e = mergeMoveActions(col(), col(enter('tags', 'remove', ['x']), enter('tags', 'add', ['x'])));
    expect(e.addTags).toEqual(['x']);
    expect(e.removeTags).toEqual([]);
  });
});

describe('planMove', () => {
  const effect = mergeMoveActions(
    col(exit('tags', 'remove', ['a', 'absent'])),
    col(
      enter('status', 'set', 'done'),
      enter('assignee', 'clear'),
      enter('metadata.cf.priority', 'set', 'high'),
      enter('metadata.app.sprint', 'clear'),
      enter('tags', 'add', ['b']),
    ),
  );

  it('reports every kind of action that changes something, in SPEC form', () => {
    const plan = planMove(aTask({ assignee: 'bob' }), effect, 'u2', NOW);
    expect(plan.applied).toEqual([
      { op: 'set', field: 'status', from: 'todo', to: 'done' },
      { op: 'set', field: 'metadata.cf.priority', from: 'low', to: 'high' },
      { op: 'set', field: 'assignee', from: 'bob' },
      { op: 'add_tags', value: ['b'] },
      { op: 'remove_tags', value: ['a'] },
    ]);
    expect(plan.after).toMatchObject({ status: 'done', tags: ['b'], metadata: { 'cf%2Epriority': 'high' }, updated_by: 'u2', updated_at: NOW.toISOString() });
    expect(plan.after.assignee).toBeUndefined();
    expect(plan.tagsChanged).toBe(true);
  });

  it('builds one update with stored (escaped) paths, setting every set field and unsetting cleared ones', () => {
    const plan = planMove(aTask({ assignee: 'bob' }), effect, 'u2', NOW);
    expect(plan.update).toEqual({
      $set: { status: 'done', 'metadata.cf%2Epriority': 'high', tags: ['b'], updated_at: NOW.toISOString(), updated_by: 'u2' },
      $unset: { assignee: '', 'metadata.app%2Esprint': '' },
    });
  });

  it('is idempotent: planning again on the result changes nothing and reports nothing', () => {
    const first = planMove(aTask({ assignee: 'bob' }), effect, 'u2', NOW);
    const again = planMove(first.after, effect, 'u2', NOW);
    expect(again.applied).toEqual([]);
    expect(again.tagsChanged).toBe(false);
    expect(again.after).toEqual(first.after);
    // set fields are still written (so a concurrent change cannot strand the card), tags are not
    expect(again.update.$set).toMatchObject({ status: 'done' });
    expect(again.update.$set).not.toHaveProperty('tags');
  });

  it('clears status and path to the empty string, since a task always has them', () => {
    const plan = planMove(aTask({ path: '/x' }), mergeMoveActions(col(), col(enter('path', 'clear'))), 'u1', NOW);
    expect(plan.after.path).toBe('');
    expect(plan.applied).toEqual([{ op: 'set', field: 'path', from: '/x', to: '' }]);
  });

  it('does not mutate the task it plans from', () => {
    const task = aTask();
    const copy = structuredClone(task);
    planMove(task, effect, 'u2', NOW);
    expect(task).toEqual(copy);
  });
});
