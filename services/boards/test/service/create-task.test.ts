import { describe, expect, it } from 'vitest';
import { BoardsOps } from '@app/shared/contracts';
import { Collections, escapeKey } from '@app/shared/store';
import { ALICE, BOB, T0, buildBoards, fields, rejects, type Fixture } from './fixture.js';

/** A board with default_tags, an active sprint and a column whose enter actions set several fields. */
async function sprintBoard(t: Fixture) {
  const board = await t.newBoard({
    default_tags: ['team'],
    columns: [
      { id: 'todo', name: 'To Do', query: "status = 'todo'" },
      {
        id: 'doing', name: 'Doing', query: "status = 'doing' AND tags CONTAINS 'wip' AND cf.size = 3 AND assignee IS NULL",
        actions: [{ trigger: 'enter', field: 'path', operation: 'set', value: '/work' }],
      },
    ],
  });
  const sprint = await t.newCard(board.id, { title: 'Sprint 1', metadata: { 'app.type': 'sprint' } });
  await t.call(BoardsOps.update, { boardId: board.id, activeSprintId: sprint.id });
  return { boardId: board.id, sprintId: sprint.id };
}

describe('boards.createTask', () => {
  it('creates a task with the SPEC fields, default_tags merged without duplicates, recording the board', async () => {
    await using t = await buildBoards();
    const board = await t.newBoard({ default_tags: ['team', 'q4'] });
    const task = await t.newCard(board.id, { title: ' Card ', description: 'md', status: 'doing', tags: ['q4', 'x'], metadata: { 'cf.points': 3 } });
    expect(task).toEqual({
      id: task.id, title: 'Card', description: 'md', status: 'doing', path: '', tags: ['q4', 'x', 'team'], checkInCount: 0,
      metadata: { 'cf.points': 3 }, created_at: T0, created_by: ALICE, updated_at: T0, updated_by: ALICE, version: 1,
    });
    const doc = await t.stored(task.id);
    expect(doc).toMatchObject({ boardId: board.id, deleted: false });
    expect(doc).not.toHaveProperty('groupId');
  });

  it('gives a task created on a shared board the board\'s group and permission', async () => {
    await using t = await buildBoards();
    const groupId = await t.newGroup([BOB]);
    const board = await t.newBoard({ board_type: 'shared' });
    await t.call(BoardsOps.share, { boardId: board.id, group_id: groupId, permission: 'rw' });
    const task = await t.newCard(board.id, {}, BOB);
    expect(await t.stored(task.id)).toMatchObject({ groupId, groupPermission: 'rw', created_by: BOB });
  });

  it('uses the task rules of the tasks service (400 naming the field, references checked)', async () => {
    await using t = await buildBoards();
    const board = await t.newBoard();
    expect(fields(await rejects(t.newCard(board.id, { title: '  ' }), 'VALIDATION_FAILED'))).toEqual(['/title']);
    await rejects(t.newCard(board.id, { assignee: 'nobody' }), 'ASSIGNEE_NOT_FOUND');
    expect(fields(await rejects(t.newCard(board.id, { derived_from_id: 'nope' }), 'VALIDATION_FAILED'))).toEqual(['/derived_from_id']);
    expect(await t.tasks.countDocuments({})).toBe(0);
  });

  it('with column_id (Draft): starts from the enter actions and stamps the active sprint', async () => {
    await using t = await buildBoards();
    const { boardId, sprintId } = await sprintBoard(t);
    const task = await t.newCard(boardId, { title: 'In progress', column_id: 'doing' });
    expect(task).toMatchObject({ status: 'doing', path: '/work', tags: ['wip', 'team'], metadata: { 'cf.size': 3, 'app.sprint': sprintId } });
    expect(task).not.toHaveProperty('assignee');
    expect((await t.stored(task.id)).metadata).toEqual({ [escapeKey('cf.size')]: 3, [escapeKey('app.sprint')]: sprintId });
  });

  it('with column_id: explicitly sent fields win, and "app.sprint": null opts out of the sprint stamp', async () => {
    await using t = await buildBoards();
    const { boardId } = await sprintBoard(t);
    const task = await t.newCard(boardId, {
      column_id: 'doing', status: 'blocked', tags: ['mine'], assignee: BOB, metadata: { 'cf.size': 5, 'app.sprint': null },
    });
    expect(task).toMatchObject({ status: 'blocked', path: '/work', tags: ['mine', 'wip', 'team'], assignee: BOB, metadata: { 'cf.size': 5 } });
    expect(task.metadata).not.toHaveProperty('app.sprint');
    const another = await t.newCard(boardId, { title: 'Sprint 2', metadata: { 'app.type': 'sprint' } });
    const other = await t.newCard(boardId, { column_id: 'todo', metadata: { 'app.sprint': another.id } });
    expect(other.metadata).toEqual({ 'app.sprint': another.id });
  });

  it('a card naming a sprint the caller cannot read is 404, and nothing is created', async () => {
    await using t = await buildBoards();
    const { sprintId } = await sprintBoard(t);
    const bobsBoard = await t.newBoard({}, BOB);
    const err = await rejects(t.newCard(bobsBoard.id, { title: 'sneak', metadata: { 'app.sprint': sprintId, 'app.points': 100 } }, BOB), 'TASK_NOT_FOUND');
    expect(err.details).toMatchObject({ taskId: sprintId, field: '/metadata/app.sprint' });
    expect(await t.store.collection(Collections.tasks).find({ title: 'sneak' })).toEqual([]);
  });

  it('without column_id: no sprint stamp, and a null app.sprint is dropped', async () => {
    await using t = await buildBoards();
    const { boardId } = await sprintBoard(t);
    expect((await t.newCard(boardId, { metadata: { 'app.sprint': null } })).metadata).toEqual({});
    expect((await t.newCard(boardId)).metadata).toEqual({});
  });

  it('answers 404 COLUMN_NOT_FOUND for a column not on the board, writing nothing', async () => {
    await using t = await buildBoards();
    const board = await t.newBoard();
    const e = await rejects(t.newCard(board.id, { column_id: 'nope' }), 'COLUMN_NOT_FOUND');
    expect(e.details).toMatchObject({ columnId: 'nope' });
    expect(await t.tasks.countDocuments({})).toBe(0);
  });
});
