import { describe, expect, it } from 'vitest';
import { BoardsOps } from '@app/shared/contracts';
import { Collections, escapeKey } from '@app/shared/store';
import { ALICE, BOB, DAVE, T0, buildBoards, fields, raceBeforeWrite, rejects } from './fixture.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('boards.create', () => {
  it('returns the board unwrapped, owned by the caller, with ids backfilled and actions materialized', async () => {
    await using t = await buildBoards();
    const board = await t.call(BoardsOps.create, {
      name: '  Sprint board ',
      board_type: 'private',
      default_tags: ['team', 'team'],
      metadata: { 'ui.color': 'blue' },
      columns: [
        { name: 'To Do', query: "status = 'todo'" },
        { name: 'To Do', query: "status = 'todo' AND cf.priority = 'high'" },
        { name: 'Recent', query: 'ORDER BY updated_at DESC', wip_limit: 5 },
      ],
    });
    expect(board.id).toMatch(UUID);
    expect(board).toMatchObject({
      name: 'Sprint board', board_type: 'private', default_tags: ['team'], metadata: { 'ui.color': 'blue' },
      owner_id: ALICE, created_at: T0, updated_at: T0, is_owner: true,
    });
    expect(board.columns.map((c) => c.id)).toEqual(['col-to-do', 'col-to-do-2', 'col-recent']);
    // actions come from the column query alone: default_tags give none, an ORDER BY only column has none
    expect(board.columns[2]).toEqual({ id: 'col-recent', name: 'Recent', query: 'ORDER BY updated_at DESC', wip_limit: 5, actions: [], order: 2 });
    expect(board.columns[0]!.actions).toEqual([{ trigger: 'enter', field: 'status', operation: 'set', value: 'todo', source: 'query' }]);
    expect(board.columns[1]!.actions.filter((a) => a.operation === 'set')).toEqual([
      { trigger: 'enter', field: 'status', operation: 'set', value: 'todo', source: 'query' },
      { trigger: 'enter', field: 'metadata.cf.priority', operation: 'set', value: 'high', source: 'query' },
    ]);
    // metadata keys are stored escaped and come back decoded
    const stored = await t.boards.findOne({ _id: board.id });
    expect(stored!.metadata).toEqual({ [escapeKey('ui.color')]: 'blue' });
    expect(await t.call(BoardsOps.get, { boardId: board.id })).toEqual(board);
  });

  it('gives a board created without columns the todo / doing / done columns', async () => {
    await using t = await buildBoards();
    const board = await t.call(BoardsOps.create, { name: 'b', board_type: 'shared' });
    expect(board.columns.map((c) => [c.id, c.query])).toEqual([
      ['col-to-do', "status = 'todo'"], ['col-doing', "status = 'doing'"], ['col-done', "status = 'done'"],
    ]);
    expect(await t.call(BoardsOps.create, { name: 'empty', board_type: 'private', columns: [] })).toMatchObject({ columns: [] });
  });

  it('refuses a column query that does not parse, naming the column and the position', async () => {
    await using t = await buildBoards();
    const e = await rejects(t.newBoard({ columns: [{ name: 'ok' }, { name: 'bad', query: "status = 'todo' AND" }] }), 'QUERY_SYNTAX');
    expect(e.details).toMatchObject({ field: '/columns/1/query', position: 19 });
    expect(e.message).toMatch(/^columns\/1\/query: /);
    const u = await rejects(t.newBoard({ columns: [{ name: 'x', query: "stauts = 'todo'" }] }), 'QUERY_UNKNOWN_FIELD');
    expect(u.details).toMatchObject({ field: '/columns/0/query', position: 0 });
    expect(await t.boards.countDocuments({})).toBe(0);
  });

  it('refuses bad column shapes with 400 naming the field', async () => {
    await using t = await buildBoards();
    const cases: Array<[unknown, string]> = [
      [[{ id: 'a', name: 'x' }, { id: 'a', name: 'y' }], '/columns/1/id'],
      [[{ name: 'x', wip_limit: 0 }], '/columns/0/wip_limit'],
      [[{ name: 'x', wip_limit: 1.5 }], '/columns/0/wip_limit'],
      [[{ name: '' }], '/columns/0/name'],
      [[{ id: 'has space', name: 'x' }], '/columns/0/id'],
      [[{ name: 'x', actions: [{ trigger: 'enter', field: 'title', operation: 'set', value: 'x' }] }], '/columns/0/actions/0/field'],
      [[{ name: 'x', actions: [{ trigger: 'enter', field: 'tags', operation: 'set', value: 'x' }] }], '/columns/0/actions/0/operation'],
      [[{ name: 'x', actions: [{ trigger: 'enter', field: 'status', operation: 'add', value: 'x' }] }], '/columns/0/actions/0/operation'],
      [[{ name: 'x', actions: [{ trigger: 'enter', field: 'status', operation: 'set' }] }], '/columns/0/actions/0/value'],
      [[{ name: 'x', actions: [{ trigger: 'enter', field: 'deadline', operation: 'set', value: 'soon' }] }], '/columns/0/actions/0/value'],
      [[{ name: 'x', actions: [{ trigger: 'sideways', field: 'status', operation: 'set', value: 'x' }] }], '/columns/0/actions/0/trigger'],
    ];
    for (const [columns, field] of cases) {
      const e = await rejects(t.newBoard({ columns: columns as never }), 'VALIDATION_FAILED');
      expect(fields(e), JSON.stringify(columns)).toContain(field);
    }
    await rejects(t.call(BoardsOps.create, { name: 'x', board_type: 'public' as never }), 'VALIDATION_FAILED');
    await rejects(t.call(BoardsOps.create, { name: '   ', board_type: 'private' }), 'VALIDATION_FAILED');
    expect(await t.boards.countDocuments({})).toBe(0);
  });

  it('keeps valid manual actions after the regenerated query actions, normalized', async () => {
    await using t = await buildBoards();
    const board = await t.newBoard({
      columns: [{
        name: 'Review', query: "status = 'review'",
        actions: [
          { trigger: 'enter', field: 'cf.reviewer', operation: 'set', value: 'bob' },
          { trigger: 'exit', field: 'tags', operation: 'remove', value: 'needs-review' },
          { trigger: 'enter', field: 'status', operation: 'set', value: 'stale', source: 'query' },
          { trigger: 'enter', field: 'deadline', operation: 'set', value: '2026-12-01', source: 'manual' },
        ],
      }],
    });
    expect(board.columns[0]!.actions).toEqual([
      { trigger: 'enter', field: 'status', operation: 'set', value: 'review', source: 'query' },
      { trigger: 'enter', field: 'metadata.cf.reviewer', operation: 'set', value: 'bob', source: 'manual' },
      { trigger: 'exit', field: 'tags', operation: 'remove', value: 'needs-review', source: 'manual' },
      { trigger: 'enter', field: 'deadline', operation: 'set', value: '2026-12-01T00:00:00.000Z', source: 'manual' },
    ]);
  });

  it('stores and returns one tag per tag action, and every action value as a string (ud\'s ColumnActionDTO)', async () => {
    await using t = await buildBoards();
    const board = await t.newBoard({
      columns: [{
        name: 'Sized', query: "tags CONTAINS_ALL ('a', 'b') AND cf.size = 3 AND cf.hot = true",
        actions: [
          { trigger: 'enter', field: 'tags', operation: 'add', value: ['x', 'y', 'x'] },
          { trigger: 'enter', field: 'cf.points', operation: 'set', value: 5 },
          { trigger: 'enter', field: 'cf.shape', operation: 'set', value: { w: 1 } },
          { trigger: 'exit', field: 'cf.points', operation: 'set', value: '8', value_type: 'number' },
        ],
      }],
    });
    const tag = (trigger: 'enter' | 'exit', operation: 'add' | 'remove', value: string, source: 'query' | 'manual') => ({ trigger, field: 'tags', operation, value, source });
    const expected = [
      tag('enter', 'add', 'a', 'query'), tag('exit', 'remove', 'a', 'query'), tag('enter', 'add', 'b', 'query'), tag('exit', 'remove', 'b', 'query'),
      { trigger: 'enter', field: 'metadata.cf.size', operation: 'set', value: '3', value_type: 'number', source: 'query' },
      { trigger: 'enter', field: 'metadata.cf.hot', operation: 'set', value: 'true', value_type: 'boolean', source: 'query' },
      tag('enter', 'add', 'x', 'manual'), tag('enter', 'add', 'y', 'manual'),
      { trigger: 'enter', field: 'metadata.cf.points', operation: 'set', value: '5', value_type: 'number', source: 'manual' },
      { trigger: 'enter', field: 'metadata.cf.shape', operation: 'set', value: '{"w":1}', value_type: 'json', source: 'manual' },
      { trigger: 'exit', field: 'metadata.cf.points', operation: 'set', value: '8', value_type: 'number', source: 'manual' },
    ];
    expect(board.columns[0]!.actions).toEqual(expected);
    // stored typed: a client sending the actions back unchanged (value_type included) keeps the types
    const stored = (await t.boards.findOne({ _id: board.id }))!.columns[0]!.actions;
    expect(stored.filter((a) => a.source === 'manual').map((a) => a.value)).toEqual(['x', 'y', 5, { w: 1 }, 8]);
    const again = await t.call(BoardsOps.update, { boardId: board.id, columns: board.columns });
    expect(again.columns[0]!.actions).toEqual(expected);
    expect((await t.boards.findOne({ _id: board.id }))!.columns[0]!.actions).toEqual(stored);
    // a value_type the value does not fit is refused, naming the action
    const bad = await rejects(
      t.call(BoardsOps.update, { boardId: board.id, columns: [{ name: 'Sized', actions: [{ trigger: 'enter', field: 'cf.points', operation: 'set', value: 'five', value_type: 'number' }] }] }),
      'VALIDATION_FAILED',
    );
    expect(bad.validationErrors).toEqual([expect.objectContaining({ field: '/columns/0/actions/0/value' })]);
  });
});

describe('boards.update', () => {
  it('changes only the carried fields', async () => {
    await using t = await buildBoards();
    const board = await t.newBoard({ default_tags: ['x'], metadata: { a: 1 } });
    t.clock.advance(60_000);
    const renamed = await t.call(BoardsOps.update, { boardId: board.id, name: 'Renamed' });
    expect(renamed).toEqual({ ...board, name: 'Renamed', updated_at: '2026-11-22T10:01:00.000Z', version: 2 });
    const meta = await t.call(BoardsOps.update, { boardId: board.id, metadata: { b: 2 } });
    expect(meta.metadata).toEqual({ b: 2 });
  });

  it('replaces the whole column list, keeping ids of columns that carry them or match a previous name', async () => {
    await using t = await buildBoards();
    const board = await t.newBoard({ columns: [{ name: 'To Do', query: "status = 'todo'" }, { name: 'Done', query: "status = 'done'" }] });
    expect(board.columns.map((c) => c.id)).toEqual(['col-to-do', 'col-done']);
    const updated = await t.call(BoardsOps.update, {
      boardId: board.id,
      columns: [
        { name: 'Done', query: "status = 'done'" }, // no id: takes the previous Done column's id
        { id: 'col-to-do', name: 'Backlog', query: "status = 'todo'" }, // renamed, id kept
        { name: 'To Do', query: "status = 'doing'" }, // its old id is taken: a fresh one
      ],
    });
    expect(updated.columns.map((c) => [c.id, c.name])).toEqual([['col-done', 'Done'], ['col-to-do', 'Backlog'], ['col-to-do-2', 'To Do']]);
    // and it is stable: writing the result back changes no id
    const again = await t.call(BoardsOps.update, { boardId: board.id, columns: updated.columns });
    expect(again.columns).toEqual(updated.columns);
  });

  it('keeps the actions of the column queries when default_tags change, keeping manual actions', async () => {
    await using t = await buildBoards();
    const manual = { trigger: 'enter' as const, field: 'assignee', operation: 'clear' as const, source: 'manual' as const };
    const board = await t.newBoard({ columns: [{ name: 'Todo', query: "status = 'todo'", actions: [manual] }] });
    const updated = await t.call(BoardsOps.update, { boardId: board.id, default_tags: ['q4'] });
    expect(updated.default_tags).toEqual(['q4']);
    expect(updated.columns[0]!.actions).toEqual([
      { trigger: 'enter', field: 'status', operation: 'set', value: 'todo', source: 'query' },
      manual,
    ]);
    expect((await t.boards.findOne({ _id: board.id }))!.columns[0]!.actions).toEqual(updated.columns[0]!.actions);
  });

  it('reads a board stored with default-tag actions (the older form) with the column query\'s actions only', async () => {
    await using t = await buildBoards();
    const manual = { trigger: 'enter' as const, field: 'tags', operation: 'add' as const, value: 'team', source: 'manual' as const };
    // a manual tag action as stored before tag actions carried one tag: a list
    const storedManual = { ...manual, value: ['team', 'ops', 'team'] };
    const board = await t.newBoard({ default_tags: ['team'], columns: [{ name: 'Todo', query: "status = 'todo'", actions: [manual] }, { name: 'All', query: '' }] });
    // the older stored form: every default tag as a query action, enter add + exit remove
    const stale = [
      { trigger: 'enter', field: 'status', operation: 'set', value: 'todo', source: 'query' },
      { trigger: 'enter', field: 'tags', operation: 'add', value: ['team'], source: 'query' },
      { trigger: 'exit', field: 'tags', operation: 'remove', value: ['team'], source: 'query' },
      storedManual,
    ];
    const staleAll = stale.slice(1, 3);
    const stored = (await t.boards.findOne({ _id: board.id }))!;
    const columns = [{ ...stored.columns[0]!, actions: stale }, { ...stored.columns[1]!, actions: staleAll }] as typeof stored.columns;
    await t.boards.updateOne({ _id: board.id }, { $set: { columns } });
    const read = await t.call(BoardsOps.get, { boardId: board.id });
    // read: query actions from the query alone, the stored list split into one action per distinct tag
    const split = [manual, { ...manual, value: 'ops' }];
    expect(read.columns[0]!.actions).toEqual([stale[0], ...split]);
    expect(read.columns[1]!.actions).toEqual([]);
    const listed = await t.call(BoardsOps.list, {});
    expect(listed.owned_boards.find((b) => b.id === board.id)!.columns).toEqual(read.columns);
    // the next board write stores the fresh actions
    await t.call(BoardsOps.update, { boardId: board.id, default_tags: ['team'] });
    expect((await t.boards.findOne({ _id: board.id }))!.columns.map((c) => c.actions)).toEqual([[stale[0], ...split], []]);
  });

  it('sets and clears the active sprint, accepting only an open sprint task the caller can read', async () => {
    await using t = await buildBoards();
    const board = await t.newBoard();
    const sprint = await t.newCard(board.id, { title: 'Sprint 1', metadata: { 'app.type': 'sprint' } });
    const plain = await t.newCard(board.id, { title: 'not a sprint' });
    const bobs = await t.newCard((await t.newBoard({}, BOB)).id, { title: 'bob sprint', metadata: { 'app.type': 'sprint' } }, BOB);
    expect(await t.call(BoardsOps.update, { boardId: board.id, activeSprintId: sprint.id })).toMatchObject({ activeSprintId: sprint.id });
    for (const id of [plain.id, bobs.id, 'nope']) {
      expect(fields(await rejects(t.call(BoardsOps.update, { boardId: board.id, activeSprintId: id }), 'VALIDATION_FAILED'))).toEqual(['/activeSprintId']);
    }
    await t.tasks.updateOne({ _id: sprint.id }, { $set: { status: 'done' } });
    await rejects(t.call(BoardsOps.update, { boardId: board.id, activeSprintId: sprint.id }), 'VALIDATION_FAILED');
    const cleared = await t.call(BoardsOps.update, { boardId: board.id, activeSprintId: '' });
    expect(cleared).not.toHaveProperty('activeSprintId');
  });

  it('never loses a write made between its read and its write: the transaction reruns on top of it', async () => {
    let boardId = '';
    await using t = await buildBoards({
      serviceStore: raceBeforeWrite(Collections.boards, (store) => store.collection(Collections.boards).updateOne({ _id: boardId }, { $set: { columns: [] } })),
    });
    boardId = (await t.newBoard()).id;
    const out = await t.call(BoardsOps.update, { boardId, default_tags: ['x'] });
    expect(out).toMatchObject({ columns: [], default_tags: ['x'], version: 2 });
    expect(await t.boards.findOne({ _id: boardId })).toMatchObject({ columns: [], default_tags: ['x'], version: 2 });
  });
});

describe('boards.list, boards.remove, boards.previewActions', () => {
  it('lists owned and shared boards apart, oldest first, with is_owner', async () => {
    await using t = await buildBoards();
    const group = await t.newGroup([BOB]);
    const a = await t.newBoard({ name: 'a' });
    t.clock.advance(1000);
    const b = await t.newBoard({ name: 'b', board_type: 'shared' });
    await t.call(BoardsOps.share, { boardId: b.id, group_id: group, permission: 'r' });
    const bobs = await t.newBoard({ name: 'bob' }, BOB);
    const mine = await t.call(BoardsOps.list, {});
    expect(mine.owned_boards.map((x) => x.name)).toEqual(['a', 'b']);
    expect(mine.shared_boards).toEqual([]);
    const his = await t.call(BoardsOps.list, {}, BOB);
    expect(his.owned_boards.map((x) => [x.id, x.is_owner])).toEqual([[bobs.id, true]]);
    expect(his.shared_boards.map((x) => [x.id, x.is_owner, x.permission, x.group_id])).toEqual([[b.id, false, 'r', group]]);
    expect(await t.call(BoardsOps.list, {}, DAVE)).toEqual({ owned_boards: [], shared_boards: [] });
    expect(a.id).not.toBe(b.id);
  });

  it('deletes a board but keeps its tasks', async () => {
    await using t = await buildBoards();
    const board = await t.newBoard();
    const card = await t.newCard(board.id);
    expect(await t.call(BoardsOps.remove, { boardId: board.id })).toBeNull();
    await rejects(t.call(BoardsOps.get, { boardId: board.id }), 'BOARD_NOT_FOUND');
    expect(await t.stored(card.id)).toMatchObject({ deleted: false, boardId: board.id });
    await rejects(t.call(BoardsOps.remove, { boardId: board.id }), 'BOARD_NOT_FOUND');
  });

  it('previews the actions of a query without touching the store', async () => {
    await using t = await buildBoards();
    const before = t.store.stats.roundTrips;
    const { actions } = await t.call(BoardsOps.previewActions, { query: "status = 'doing' AND tags CONTAINS 'blog' AND deadline < now" });
    expect(actions).toEqual([
      { trigger: 'enter', field: 'status', operation: 'set', value: 'doing', source: 'query' },
      { trigger: 'enter', field: 'tags', operation: 'add', value: 'blog', source: 'query' },
      { trigger: 'exit', field: 'tags', operation: 'remove', value: 'blog', source: 'query' },
    ]);
    expect((await t.call(BoardsOps.previewActions, { query: '' })).actions).toEqual([]);
    expect((await t.call(BoardsOps.previewActions, { query: 'ORDER BY updated_at DESC' })).actions).toEqual([]);
    const e = await rejects(t.call(BoardsOps.previewActions, { query: "status = = 'x'" }), 'QUERY_SYNTAX');
    expect(e.details).toMatchObject({ position: 9, field: '/query' });
    expect(t.store.stats.roundTrips).toBe(before);
  });
});
