import { describe, expect, test } from 'vitest';
import { QueryOps, type In } from '@app/shared/contracts';
import { rejection } from '@app/shared/testing';
import { aBoard, aColumn, ALICE, aTask, BOB, CAROL, queryFixture, team, TEAM } from './fixtures.js';

type Fixture = Awaited<ReturnType<typeof queryFixture>>;
const summary = (f: Fixture, input: In<typeof QueryOps.summary>, userId = ALICE) => f.bus.request(QueryOps.summary, input, { userId });

const SPRINT = 'sprint-7';

async function seeded() {
  const f = await queryFixture();
  const board = aBoard({
    name: 'Web team',
    board_type: 'shared',
    groupId: TEAM,
    groupPermission: 'rw',
    default_tags: ['web'],
    activeSprintId: SPRINT,
    columns: [
      aColumn('col-todo', "status = 'todo'", { wip_limit: 5 }),
      aColumn('col-doing', "status = 'doing' ORDER BY title DESC", { wip_limit: 2 }),
      aColumn('col-done', "status = 'done'"),
      aColumn('col-urgent', "cf.priority = 'high' OR description ~ 'urgent'"),
    ],
  });
  const card = (title: string, status: string, order: number, over: Parameters<typeof aTask>[0] = {}) =>
    aTask({ title, status, tags: ['web'], groupId: TEAM, created_by: BOB, metadata: { order, 'app.sprint': SPRINT }, ...over });
  await f.groups(team());
  await f.boards(board);
  await f.tasks(
    card('t3', 'todo', 3),
    card('t1', 'todo', 1, { metadata: { order: 1, 'app.sprint': SPRINT, 'cf.priority': 'high' } }),
    card('t2', 'todo', 2),
    card('t4', 'todo', 4, { description: 'urgent: customer waiting' }),
    card('d-a', 'doing', 1),
    card('d-c', 'doing', 2),
    card('d-b', 'doing', 3),
    card('done', 'done', 1),
    card('old sprint', 'todo', 0, { metadata: { order: 0, 'app.sprint': 'sprint-6' } }),
    card('no tag', 'todo', 0, { tags: [] }),
    card('deleted', 'todo', 0, { deleted: true }),
    aTask({ title: 'alice private', tags: ['web'], metadata: { order: 0, 'app.sprint': SPRINT } }),
  );
  return { f, board };
}

describe('GET /boards/:boardId/summary', () => {
  test('per column: total, the first titles in column order and WIP flags', async () => {
    const { f, board } = await seeded();
    await using _ = f;
    expect(await summary(f, { boardId: board._id })).toEqual({
      board_id: board._id,
      name: 'Web team',
      active_sprint_id: SPRINT,
      columns: [
        { column_id: 'col-todo', name: 'col-todo', total: 4, preview: ['t1', 't2', 't3'], wip_limit: 5, over_wip_limit: false },
        { column_id: 'col-doing', name: 'col-doing', total: 3, preview: ['d-c', 'd-b', 'd-a'], wip_limit: 2, over_wip_limit: true },
        { column_id: 'col-done', name: 'col-done', total: 1, preview: ['done'] },
        { column_id: 'col-urgent', name: 'col-urgent', total: 2, preview: ['t1', 't4'] },
      ],
    });
  });

  test('preview 0 gives counts only; sprint none and an explicit sprint change the counts', async () => {
    const { f, board } = await seeded();
    await using _ = f;
    const totals = async (input: Partial<In<typeof QueryOps.summary>>) =>
      (await summary(f, { boardId: board._id, ...input })).columns.map((c) => [c.total, c.preview.length]);
    expect(await totals({ preview: 0 })).toEqual([[4, 0], [3, 0], [1, 0], [2, 0]]);
    expect(await totals({ preview: 1, sprint: 'none' })).toEqual([[5, 1], [3, 1], [1, 1], [2, 1]]);
    expect(await totals({ preview: 5, sprint: 'sprint-6' })).toEqual([[1, 1], [0, 0], [0, 0], [0, 0]]);
  });

  test('each column agrees with its column read: same total, preview = first titles of the read', async () => {
    const { f, board } = await seeded();
    await using _ = f;
    for (const sprint of ['active', 'none']) {
      const sum = await summary(f, { boardId: board._id, sprint, preview: 2 });
      for (const col of sum.columns) {
        const read = await f.bus.request(QueryOps.column, { boardId: board._id, columnId: col.column_id, sprint }, { userId: ALICE });
        expect(col.total).toBe(read.total);
        expect(col.preview).toEqual(read.data.slice(0, 2).map((c) => c.title));
      }
    }
  });

  test('a board without a running sprint has no active_sprint_id and no sprint clause', async () => {
    await using f = await queryFixture();
    const board = aBoard({ columns: [aColumn('col-all', '')] });
    await f.boards(board);
    await f.tasks(aTask({ title: 'x', metadata: { 'app.sprint': 'whatever' } }), aTask({ title: 'y' }));
    const res = await summary(f, { boardId: board._id });
    expect(Object.hasOwn(res, 'active_sprint_id')).toBe(false);
    expect(res.columns[0]).toMatchObject({ total: 2 });
  });

  test('an unreadable or missing board is 404; preview over 200 is a 400', async () => {
    const { f, board } = await seeded();
    await using _ = f;
    expect((await rejection(summary(f, { boardId: board._id }, CAROL))).code).toBe('BOARD_NOT_FOUND');
    expect((await rejection(summary(f, { boardId: 'missing' }))).code).toBe('BOARD_NOT_FOUND');
    expect((await rejection(summary(f, { boardId: board._id, preview: 201 }))).validationErrors?.[0]?.field).toBe('/preview');
  });

  test('reads each column with two counts (its matches, the sprints among them) and one page of titles', async () => {
    const { f, board } = await seeded();
    await using _ = f;
    const before = f.store.stats.roundTrips;
    await summary(f, { boardId: board._id });
    // principal + board + (two counts + preview) per column: sprints are counted apart and taken off
    // (docs/boards.md "Sprints are not cards"), and the board's custom field definitions for the one
    // column naming a cf.* field (docs/custom-fields.md)
    expect(f.store.stats.roundTrips - before).toBe(2 + 3 * board.columns.length + 1);
  });
});
