import { describe, expect, test } from 'vitest';
import { QueryOps, type In } from '@app/shared/contracts';
import { rejection } from '@app/shared/testing';
import { aBoard, aColumn, ALICE, aTask, BOB, queryFixture } from './fixtures.js';

type Fixture = Awaited<ReturnType<typeof queryFixture>>;
const read = (f: Fixture, input: In<typeof QueryOps.column>, userId = ALICE) => f.bus.request(QueryOps.column, input, { userId });

const SPRINT = 'sprint-7';
const OTHER_SPRINT = 'sprint-6';

async function seeded(boardOver: Parameters<typeof aBoard>[0] = {}) {
  const f = await queryFixture();
  const board = aBoard({
    default_tags: ['web'],
    activeSprintId: SPRINT,
    columns: [
      aColumn('col-todo', "status = 'todo'"),
      aColumn('col-doing', "status = 'doing' ORDER BY updated_at DESC"),
      aColumn('col-all', ''),
    ],
    ...boardOver,
  });
  const card = (title: string, order: number, sprint: string | undefined, over: Parameters<typeof aTask>[0] = {}) =>
    aTask({ title, tags: ['web'], metadata: { order, ...(sprint ? { 'app.sprint': sprint } : {}) }, ...over });
  const cards = {
    second: card('second', 2, SPRINT),
    first: card('first', 1, SPRINT, { assignee: BOB }),
    third: card('third', 3, SPRINT, { description: 'not on a card' }),
    lastSprint: card('last sprint', 0, OTHER_SPRINT),
    backlog: card('backlog', 5, undefined),
    untagged: aTask({ title: 'untagged', metadata: { order: 1, 'app.sprint': SPRINT } }),
  };
  await f.boards(board);
  await f.tasks(...Object.values(cards));
  return { f, board, cards };
}

describe('POST /boards/:boardId/columns/:columnId/query: effective_query', () => {
  test.each([
    [{}, "status = 'todo' AND 'web' IN tags AND app.sprint = 'sprint-7' AND app.type != 'sprint' ORDER BY metadata.order ASC"],
    [{ sprint: 'active' }, "status = 'todo' AND 'web' IN tags AND app.sprint = 'sprint-7' AND app.type != 'sprint' ORDER BY metadata.order ASC"],
    [{ sprint: 'none' }, "status = 'todo' AND 'web' IN tags AND app.type != 'sprint' ORDER BY metadata.order ASC"],
    [{ sprint: OTHER_SPRINT }, "status = 'todo' AND 'web' IN tags AND app.sprint = 'sprint-6' AND app.type != 'sprint' ORDER BY metadata.order ASC"],
    [
      { filter: `assignee = '${BOB}' OR title ~ "it's"` },
      "status = 'todo' AND 'web' IN tags AND app.sprint = 'sprint-7' AND app.type != 'sprint' AND (assignee = 'user-bob' OR title ~ 'it\\'s') ORDER BY metadata.order ASC",
    ],
  ])('%j → %s', async (body, golden) => {
    const { f, board } = await seeded();
    await using _ = f;
    expect((await read(f, { boardId: board._id, columnId: 'col-todo', ...body })).effective_query).toBe(golden);
  });

  test("a column's own ORDER BY wins over the default metadata.order", async () => {
    const { f, board } = await seeded();
    await using _ = f;
    const res = await read(f, { boardId: board._id, columnId: 'col-doing', sprint: 'none' });
    expect(res.effective_query).toBe("status = 'doing' AND 'web' IN tags AND app.type != 'sprint' ORDER BY updated_at DESC");
  });

  test('with sprint active and no running sprint there is no sprint clause; an empty column query adds nothing', async () => {
    const { f, board } = await seeded({ activeSprintId: undefined, default_tags: [] });
    await using _ = f;
    expect((await read(f, { boardId: board._id, columnId: 'col-todo' })).effective_query).toBe("status = 'todo' AND app.type != 'sprint' ORDER BY metadata.order ASC");
    expect((await read(f, { boardId: board._id, columnId: 'col-all' })).effective_query).toBe("app.type != 'sprint' ORDER BY metadata.order ASC");
  });
});

describe('POST /boards/:boardId/columns/:columnId/query: cards', () => {
  test('returns the matching cards in column order as {id, title, status, tags, assignee?, metadata}', async () => {
    const { f, board, cards } = await seeded();
    await using _ = f;
    const res = await read(f, { boardId: board._id, columnId: 'col-todo' });
    expect(res).toMatchObject({ total: 3, page: 1, page_size: 20 });
    expect(res.data.map((c) => c.title)).toEqual(['first', 'second', 'third']);
    expect(res.data[0]).toEqual({
      id: cards.first._id, title: 'first', status: 'todo', tags: ['web'], assignee: 'user-bob', metadata: { order: 1, 'app.sprint': SPRINT },
    });
    // A card without an assignee has no assignee key (the web board shows it when set).
    expect(res.data[1]).not.toHaveProperty('assignee');
  });

  test('sprint none, an explicit sprint and a filter change which cards match', async () => {
    const { f, board } = await seeded();
    await using _ = f;
    const titles = async (body: Partial<In<typeof QueryOps.column>>) =>
      (await read(f, { boardId: board._id, columnId: 'col-todo', ...body })).data.map((c) => c.title);
    expect(await titles({ sprint: 'none' })).toEqual(['last sprint', 'first', 'second', 'third', 'backlog']);
    expect(await titles({ sprint: OTHER_SPRINT })).toEqual(['last sprint']);
    expect(await titles({ filter: `assignee = '${BOB}'` })).toEqual(['first']);
  });

  test('pagination is per column', async () => {
    const { f, board } = await seeded();
    await using _ = f;
    const res = await read(f, { boardId: board._id, columnId: 'col-todo', page: 2, page_size: 2 });
    expect(res).toMatchObject({ total: 3, page: 2, page_size: 2 });
    expect(res.data.map((c) => c.title)).toEqual(['third']);
  });
});

describe('POST /boards/:boardId/columns/:columnId/query: errors', () => {
  test('a bad filter is a 400 whose position is relative to the filter text', async () => {
    const { f, board } = await seeded();
    await using _ = f;
    const filter = "title ~ 'x' AND OR";
    const err = await rejection(read(f, { boardId: board._id, columnId: 'col-todo', filter }));
    expect(err.code).toBe('QUERY_SYNTAX');
    expect(err.details).toMatchObject({ position: filter.indexOf('OR'), part: 'filter' });
  });

  test('an unknown field in the filter names it at its filter position', async () => {
    const { f, board } = await seeded();
    await using _ = f;
    const err = await rejection(read(f, { boardId: board._id, columnId: 'col-todo', filter: "status = 'x' AND asignee = 'y'" }));
    expect(err).toMatchObject({ code: 'QUERY_UNKNOWN_FIELD', details: { field: 'asignee', position: 17, suggestion: 'assignee' } });
  });

  test('a filter with its own ORDER BY is refused (the column decides the order)', async () => {
    const { f, board } = await seeded();
    await using _ = f;
    expect((await rejection(read(f, { boardId: board._id, columnId: 'col-todo', filter: 'ORDER BY title ASC' }))).code).toBe('QUERY_SYNTAX');
  });

  test('a column id not on the board is 404 COLUMN_NOT_FOUND; an unreadable board is 404 BOARD_NOT_FOUND', async () => {
    const { f, board } = await seeded();
    await using _ = f;
    expect((await rejection(read(f, { boardId: board._id, columnId: 'col-nope' }))).code).toBe('COLUMN_NOT_FOUND');
    expect((await rejection(read(f, { boardId: board._id, columnId: 'col-todo' }, BOB))).code).toBe('BOARD_NOT_FOUND');
  });
});
