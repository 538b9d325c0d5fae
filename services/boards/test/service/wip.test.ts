import { describe, expect, it } from 'vitest';
import { BoardsOps, type ColumnInput } from '@app/shared/contracts';
import type { EventDoc } from '@app/shared/domain';
import { catchUpOutbox } from '@app/shared/events';
import { Collections } from '@app/shared/store';
import { buildBoards, fields, rejects, type Fixture } from './fixture.js';

/** To Do, and Doing with a WIP limit of 2 under `policy`. */
const columns = (policy?: 'warn' | 'block'): ColumnInput[] => [
  { id: 'todo', name: 'To Do', query: "status = 'todo'" },
  { id: 'doing', name: 'Doing', query: "status = 'doing'", wip_limit: 2, ...(policy ? { wip_policy: policy } : {}) },
  { id: 'done', name: 'Done', query: "status = 'done'" },
];

async function boardWith(t: Fixture, policy?: 'warn' | 'block') {
  const board = await t.newBoard({ columns: columns(policy) });
  const cards = [];
  for (let i = 0; i < 4; i++) cards.push(await t.newCard(board.id, { title: `card ${i}`, status: 'todo' }));
  return { boardId: board.id, cards };
}

const move = (t: Fixture, boardId: string, taskId: string, from: string, to: string, dry_run?: boolean) =>
  t.call(BoardsOps.move, { boardId, taskId, from_column_id: from, to_column_id: to, ...(dry_run ? { dry_run } : {}) });

describe('WIP limits', () => {
  it('warn (the default): the move succeeds, and the reply and the card.moved event say the column is over its limit', async () => {
    await using t = await buildBoards();
    const { boardId, cards } = await boardWith(t);
    const first = await move(t, boardId, cards[0]!.id, 'todo', 'doing');
    expect(first.wip).toEqual({ column_id: 'doing', wip_limit: 2, count: 1, over_limit: false });
    await move(t, boardId, cards[1]!.id, 'todo', 'doing');
    const third = await move(t, boardId, cards[2]!.id, 'todo', 'doing');
    expect(third.task.status).toBe('doing');
    expect(third.wip).toEqual({ column_id: 'doing', wip_limit: 2, count: 3, over_limit: true });
    await catchUpOutbox(t.store);
    const moved = await t.store.collection<EventDoc>(Collections.events).find({ type: 'card.moved', task_id: cards[2]!.id });
    expect(moved[0]?.data).toMatchObject({ wip: { column_id: 'doing', count: 3, over_limit: true } });
  });

  it('block: a move into a full column is 409 WIP_LIMIT_REACHED naming the column, its limit and count; nothing is written', async () => {
    await using t = await buildBoards();
    const { boardId, cards } = await boardWith(t, 'block');
    await move(t, boardId, cards[0]!.id, 'todo', 'doing');
    await move(t, boardId, cards[1]!.id, 'todo', 'doing');
    const err = await rejects(move(t, boardId, cards[2]!.id, 'todo', 'doing'), 'WIP_LIMIT_REACHED');
    expect(err.details).toEqual({ column_id: 'doing', wip_limit: 2, count: 2 });
    expect(err.message).toContain('Doing');
    expect((await t.stored(cards[2]!.id)).status).toBe('todo');
    // the dry run reports it too
    await rejects(move(t, boardId, cards[2]!.id, 'todo', 'doing', true), 'WIP_LIMIT_REACHED');
    // moving a card out frees a place
    await move(t, boardId, cards[0]!.id, 'doing', 'done');
    const ok = await move(t, boardId, cards[2]!.id, 'todo', 'doing');
    expect(ok.wip).toEqual({ column_id: 'doing', wip_limit: 2, count: 2, over_limit: false });
  });

  it('block: a card created into a full column is refused; a card created elsewhere is not counted', async () => {
    await using t = await buildBoards();
    const { boardId } = await boardWith(t, 'block');
    await t.newCard(boardId, { title: 'a', column_id: 'doing' });
    await t.newCard(boardId, { title: 'b', column_id: 'doing' });
    const err = await rejects(t.newCard(boardId, { title: 'c', column_id: 'doing' }), 'WIP_LIMIT_REACHED');
    expect(err.details).toMatchObject({ column_id: 'doing', count: 2 });
    expect(await t.tasks.countDocuments({ boardId, title: 'c' })).toBe(0);
    await t.newCard(boardId, { title: 'd', column_id: 'todo' });
  });

  it('counts within the active sprint, as the board summary does', async () => {
    await using t = await buildBoards();
    const { boardId, cards } = await boardWith(t, 'block');
    // two cards in Doing outside any sprint fill the column while no sprint runs
    await move(t, boardId, cards[0]!.id, 'todo', 'doing');
    await move(t, boardId, cards[1]!.id, 'todo', 'doing');
    await rejects(move(t, boardId, cards[2]!.id, 'todo', 'doing'), 'WIP_LIMIT_REACHED');
    const sprint = await t.newCard(boardId, { title: 'Sprint 1', status: 'todo', metadata: { 'app.type': 'sprint' } });
    await t.boards.updateOne({ _id: boardId }, { $set: { activeSprintId: sprint.id } });
    const inSprint = await t.newCard(boardId, { title: 'sprint card', status: 'todo' });
    const res = await move(t, boardId, inSprint.id, 'todo', 'doing');
    expect(res.wip).toMatchObject({ count: 1, over_limit: false });
  });

  it('a board write refuses wip_policy without a wip_limit, naming the field', async () => {
    await using t = await buildBoards();
    const bad = [{ id: 'doing', name: 'Doing', query: "status = 'doing'", wip_policy: 'block' as const }];
    const err = await rejects(t.newBoard({ columns: bad }), 'VALIDATION_FAILED');
    expect(fields(err)).toEqual(['/columns/0/wip_policy']);
    const board = await t.newBoard({ columns: columns('block') });
    expect(board.columns[1]).toMatchObject({ wip_limit: 2, wip_policy: 'block' });
  });
});
