import { describe, expect, it } from 'vitest';
import { BoardsOps, type ColumnInput } from '@app/shared/contracts';
import { Collections, escapeKey } from '@app/shared/store';
import { BOB, buildBoards, raceBeforeWrite, rejects, type Fixture } from './fixture.js';

/** Columns exercising every action kind: set, add/remove tags, clear, metadata set, manual actions. */
const COLUMNS: ColumnInput[] = [
  { id: 'backlog', name: 'Backlog', query: "status = 'todo' AND 'backlog' IN tags" },
  {
    id: 'doing', name: 'Doing', query: "status = 'doing' AND cf.priority = 'high' AND assignee IS NULL",
    actions: [{ trigger: 'enter', field: 'tags', operation: 'add', value: ['wip'] }, { trigger: 'exit', field: 'tags', operation: 'remove', value: ['wip'] }],
  },
  {
    id: 'review', name: 'Review', query: "'wip' IN tags AND status = 'review'",
    actions: [{ trigger: 'exit', field: 'status', operation: 'set', value: 'reviewed' }, { trigger: 'exit', field: 'cf.priority', operation: 'clear' }],
  },
  { id: 'urgent', name: 'Urgent', query: "title ~ 'urgent'" },
  { id: 'done', name: 'Done', query: "status = 'done'" },
];

async function setup(t: Fixture, columns: ColumnInput[] = COLUMNS, defaultTags: string[] = []) {
  const board = await t.newBoard({ columns, default_tags: defaultTags });
  const card = await t.newCard(board.id, { title: 'Write docs', status: 'todo', tags: ['backlog', 'docs'], assignee: BOB, metadata: { 'cf.priority': 'low' } });
  return { boardId: board.id, taskId: card.id };
}

const move = (t: Fixture, ids: { boardId: string; taskId: string }, from: string, to: string, dry_run?: boolean) =>
  t.call(BoardsOps.move, { ...ids, from_column_id: from, to_column_id: to, ...(dry_run === undefined ? {} : { dry_run }) });

describe('boards.move', () => {
  it('applies merge(exit(from), enter(to)) in one write and reports every kind of applied action', async () => {
    await using t = await buildBoards();
    const ids = await setup(t);
    t.clock.advance(60_000);
    const res = await move(t, ids, 'backlog', 'doing');
    expect(res).toEqual({
      task: { id: ids.taskId, title: 'Write docs', status: 'doing', tags: ['docs', 'wip'], version: 2 },
      applied_actions: [
        { op: 'set', field: 'status', from: 'todo', to: 'doing' },
        { op: 'set', field: 'metadata.cf.priority', from: 'low', to: 'high' },
        { op: 'set', field: 'assignee', from: BOB },
        { op: 'add_tags', value: ['wip'] },
        { op: 'remove_tags', value: ['backlog'] },
      ],
    });
    const doc = await t.stored(ids.taskId);
    expect(doc).toMatchObject({ status: 'doing', tags: ['docs', 'wip'], metadata: { [escapeKey('cf.priority')]: 'high' }, updated_at: '2026-11-22T10:01:00.000Z' });
    expect(doc).not.toHaveProperty('assignee');
  });

  it('lets enter win on conflicts: a tag removed on exit and added on enter is kept', async () => {
    await using t = await buildBoards();
    const ids = await setup(t);
    await move(t, ids, 'backlog', 'doing');
    const res = await move(t, ids, 'doing', 'review'); // doing exits `wip` (manual), review enters `wip` (query)
    expect(res.task.tags).toEqual(['docs', 'wip']);
    expect(res.applied_actions).toEqual([{ op: 'set', field: 'status', from: 'doing', to: 'review' }]);
    // review's exit sets status too, but done's enter wins; review's exit clear still applies
    const done = await move(t, ids, 'review', 'done');
    expect(done.applied_actions).toEqual([
      { op: 'set', field: 'status', from: 'review', to: 'done' },
      { op: 'set', field: 'metadata.cf.priority', from: 'high' },
      { op: 'remove_tags', value: ['wip'] },
    ]);
    expect((await t.stored(ids.taskId)).metadata).toEqual({});
  });

  it('keeps default_tags through a move and requires them in the source column', async () => {
    await using t = await buildBoards();
    const ids = await setup(t, COLUMNS, ['team']);
    expect((await t.stored(ids.taskId)).tags).toEqual(['backlog', 'docs', 'team']);
    const res = await move(t, ids, 'backlog', 'doing');
    expect(res.task.tags).toEqual(['docs', 'team', 'wip']);
    await t.tasks.updateOne({ _id: ids.taskId }, { $set: { tags: ['docs', 'wip'] } });
    await rejects(move(t, ids, 'doing', 'review'), 'KANBAN_TASK_NOT_IN_SOURCE_COLUMN');
  });

  it('dry run returns the same response as the real move and writes nothing', async () => {
    await using t = await buildBoards();
    const ids = await setup(t);
    const before = JSON.stringify(await t.stored(ids.taskId));
    const dry = await move(t, ids, 'backlog', 'doing', true);
    expect(JSON.stringify(await t.stored(ids.taskId))).toBe(before);
    const real = await move(t, ids, 'backlog', 'doing');
    // the dry run reports the card's current version (its ETag), the move the version it wrote
    expect([dry.task.version, real.task.version]).toEqual([1, 2]);
    expect({ ...real, task: { ...real.task, version: 1 } }).toEqual(dry);
  });

  it('answers 409 with the current snapshot when the card left the source column meanwhile, writing nothing', async () => {
    await using t = await buildBoards();
    const ids = await setup(t);
    await t.tasks.updateOne({ _id: ids.taskId }, { $set: { status: 'blocked' } }); // another client's change
    const before = JSON.stringify(await t.stored(ids.taskId));
    for (const dry_run of [true, false]) {
      const e = await rejects(move(t, ids, 'backlog', 'doing', dry_run), 'KANBAN_TASK_NOT_IN_SOURCE_COLUMN');
      expect(e.extra).toEqual({ task: { id: ids.taskId, status: 'blocked', tags: ['backlog', 'docs'] } });
      expect(e.message).toMatch(/backlog/);
    }
    expect(JSON.stringify(await t.stored(ids.taskId))).toBe(before);
  });

  it('answers 409 when the card leaves the source column between the read and the write', async () => {
    let taskId = '';
    await using t = await buildBoards({
      serviceStore: raceBeforeWrite(Collections.tasks, (s) => s.collection(Collections.tasks).updateOne({ _id: taskId }, { $set: { status: 'blocked' } })),
    });
    const ids = await setup(t);
    taskId = ids.taskId;
    const e = await rejects(move(t, ids, 'backlog', 'doing'), 'KANBAN_TASK_NOT_IN_SOURCE_COLUMN');
    expect(e.extra).toMatchObject({ task: { status: 'blocked' } });
    expect(await t.stored(taskId)).toMatchObject({ status: 'blocked', tags: ['backlog', 'docs'], assignee: BOB });
  });

  it('never drops a tag added concurrently while the card stays in the source column', async () => {
    let taskId = '';
    await using t = await buildBoards({
      serviceStore: raceBeforeWrite(Collections.tasks, (s) => s.collection(Collections.tasks).updateOne({ _id: taskId }, { $addToSet: { tags: 'late' } })),
    });
    const ids = await setup(t);
    taskId = ids.taskId;
    const res = await move(t, ids, 'backlog', 'doing');
    expect(res.task.tags).toEqual(['docs', 'late', 'wip']);
    expect((await t.stored(taskId)).tags).toEqual(['docs', 'late', 'wip']);
  });

  it('answers 422 and writes nothing when the card cannot match the target column', async () => {
    await using t = await buildBoards();
    const ids = await setup(t);
    const before = JSON.stringify(await t.stored(ids.taskId));
    const e = await rejects(move(t, ids, 'backlog', 'urgent'), 'KANBAN_TARGET_COLUMN_UNREACHABLE');
    expect(e.details).toMatchObject({ to_column_id: 'urgent' });
    expect(JSON.stringify(await t.stored(ids.taskId))).toBe(before);
  });

  it('answers 404 for an unknown column or card', async () => {
    await using t = await buildBoards();
    const ids = await setup(t);
    expect((await rejects(move(t, ids, 'nope', 'doing'), 'COLUMN_NOT_FOUND')).details).toMatchObject({ columnId: 'nope' });
    await rejects(move(t, ids, 'backlog', 'nope'), 'COLUMN_NOT_FOUND');
    await rejects(move(t, { ...ids, taskId: 'missing' }, 'backlog', 'doing'), 'TASK_NOT_FOUND');
    await t.tasks.updateOne({ _id: ids.taskId }, { $set: { deleted: true } });
    await rejects(move(t, ids, 'backlog', 'doing'), 'TASK_NOT_FOUND');
  });

  it('answers 403 for a card on the board that the caller may read but not change', async () => {
    await using t = await buildBoards();
    const groupId = await t.newGroup([BOB]);
    const shared = await t.newBoard({ board_type: 'shared' });
    await t.call(BoardsOps.share, { boardId: shared.id, group_id: groupId, permission: 'r' });
    const card = await t.newCard(shared.id, { status: 'todo' }); // alice's card, group read-only
    const bobsBoard = await t.newBoard({}, BOB); // bob's private board shows every task he can read
    const before = JSON.stringify(await t.stored(card.id));
    const e = await rejects(t.call(BoardsOps.move, { boardId: bobsBoard.id, taskId: card.id, from_column_id: 'todo', to_column_id: 'done' }, BOB), 'FORBIDDEN');
    expect(e.details).toMatchObject({ taskId: card.id });
    expect(JSON.stringify(await t.stored(card.id))).toBe(before);
  });

  it('lets exactly one of 20 concurrent identical moves win; the rest get 409', async () => {
    await using t = await buildBoards();
    const ids = await setup(t);
    const results = await Promise.allSettled(Array.from({ length: 20 }, () => move(t, ids, 'backlog', 'doing')));
    const won = results.filter((r) => r.status === 'fulfilled');
    const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(won).toHaveLength(1);
    expect(lost.map((r) => (r.reason as { code: string }).code)).toEqual(Array(19).fill('KANBAN_TASK_NOT_IN_SOURCE_COLUMN'));
    expect(await t.stored(ids.taskId)).toMatchObject({ status: 'doing', tags: ['docs', 'wip'], metadata: { [escapeKey('cf.priority')]: 'high' } });
  });
});
