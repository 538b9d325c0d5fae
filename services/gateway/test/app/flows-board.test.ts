import { describe, expect, it } from 'vitest';
import { expectDeprecated, expectError, NOW, system } from './system.js';

/**
 * A board's day through HTTP, gateway + all four services (docs/boards.md: a board's day and its
 * lifecycle; docs/architecture.md §7, §9): columns defined by queries, cards created into columns, column read,
 * board query, summary, move (real, dry run, stale, unreachable), column edits, delete.
 */

const COLUMNS = [
  { name: 'To Do', query: "status = 'todo'" },
  { name: 'Doing', query: "status = 'doing' AND 'wip' IN tags" },
  { name: 'Done', query: "status = 'done'" },
];
const IDS = ['col-to-do', 'col-doing', 'col-done'];

/** A system, a user and a board with the three columns and `default_tags: ['team-a']`. */
async function boardFixture() {
  const sys = await system();
  const alice = await sys.user('alice');
  const created = await sys.call('POST', '/api/v1/boards', alice, { name: 'Team A', board_type: 'private', columns: COLUMNS, default_tags: ['team-a'] });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  const boardId: string = created.body.id;
  const card = async (body: Record<string, unknown>) => {
    const res = await sys.call('POST', `/api/v1/boards/${boardId}/tasks`, alice, body);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body;
  };
  const move = (taskId: string, body: Record<string, unknown>) => sys.call('POST', `/api/v1/boards/${boardId}/tasks/${taskId}/move`, alice, body);
  const column = (columnId: string, body: Record<string, unknown> = {}) =>
    sys.call('POST', `/api/v1/boards/${boardId}/columns/${columnId}/query`, alice, body);
  const task = (id: string) => sys.call('GET', `/api/v1/tasks/${id}`, alice);
  return { sys, alice, board: created.body, boardId, card, move, column, task, [Symbol.asyncDispose]: () => sys[Symbol.asyncDispose]() };
}

/** The actions of a column as `trigger operation field value` lines (order-free comparisons). */
const actionLines = (col: { actions: Array<{ trigger: string; operation: string; field: string; value?: unknown; source: string }> }) =>
  col.actions.map((a) => `${a.trigger} ${a.operation} ${a.field} ${JSON.stringify(a.value)} ${a.source}`).sort();

describe('board lifecycle through HTTP', () => {
  it('creates a board with backfilled column ids and materialized actions, and reads it back (target and legacy path)', async () => {
    await using f = await boardFixture();
    expect(f.board).toMatchObject({
      id: expect.any(String), name: 'Team A', board_type: 'private', default_tags: ['team-a'], metadata: {},
      owner_id: f.alice.id, is_owner: true, created_at: NOW, updated_at: NOW,
    });
    expect(f.board).not.toHaveProperty('activeSprintId');
    expect(f.board.columns.map((c: { id: string }) => c.id)).toEqual(IDS);
    expect(f.board.columns.map((c: { name: string; query: string }) => [c.name, c.query])).toEqual(COLUMNS.map((c) => [c.name, c.query]));
    const [todo, doing, done] = f.board.columns;
    // each column query gives its enter/exit actions; default_tags give none (docs/architecture.md §7)
    expect(actionLines(todo)).toEqual(['enter set status "todo" query']);
    expect(actionLines(done)).toEqual(['enter set status "done" query']);
    expect(actionLines(doing)).toEqual(['enter add tags "wip" query', 'enter set status "doing" query', 'exit remove tags "wip" query']);

    const read = await f.sys.call('GET', `/api/v1/boards/${f.boardId}`, f.alice);
    expect(read.status).toBe(200);
    expect(read.body).toEqual(f.board);
    const legacy = await f.sys.call('GET', `/api/v1/kanban/boards/${f.boardId}`, f.alice);
    expect(legacy.status).toBe(200);
    expect(legacy.body).toEqual(f.board);
    expectDeprecated(legacy, `/api/v1/boards/${f.boardId}`);

    const list = await f.sys.call('GET', '/api/v1/boards', f.alice);
    expect(list.status).toBe(200);
    expect(list.body).toEqual({ owned_boards: [f.board], shared_boards: [] });
  });

  it('creates cards with and without column_id: enter actions applied, default_tags merged, sent fields win', async () => {
    await using f = await boardFixture();
    const plain = await f.card({ title: 'Plain card', status: 'todo', tags: ['x'] });
    expect(plain).toMatchObject({
      id: expect.any(String), title: 'Plain card', status: 'todo', path: '', tags: ['x', 'team-a'], checkInCount: 0,
      created_at: NOW, created_by: f.alice.id, updated_at: NOW, updated_by: f.alice.id,
    });
    expect(plain.metadata ?? {}).not.toHaveProperty('app.sprint');

    const inDoing = await f.card({ title: 'Entered', column_id: 'col-doing', tags: ['x'] });
    expect(inDoing.status).toBe('doing');
    expect([...inDoing.tags].sort()).toEqual(['team-a', 'wip', 'x']);

    const explicit = await f.card({ title: 'Explicit', column_id: 'col-doing', status: 'todo', metadata: { 'cf.priority': 2 } });
    expect(explicit.status).toBe('todo');
    expect([...explicit.tags].sort()).toEqual(['team-a', 'wip']);
    expect(explicit.metadata).toMatchObject({ 'cf.priority': 2 });

    // the cards are where their fields put them
    const doing = await f.column('col-doing');
    expect(doing.body.data.map((c: { title: string }) => c.title)).toEqual(['Entered']);
    const todo = await f.column('col-to-do');
    expect(todo.body.data.map((c: { title: string }) => c.title).sort()).toEqual(['Explicit', 'Plain card']);

    const detail = await f.task(inDoing.id);
    expect(detail.status).toBe(200);
    expect(detail.body).toMatchObject({ id: inDoing.id, title: 'Entered', status: 'doing', tags: inDoing.tags, notes: [] });

    const unknown = await f.sys.call('POST', `/api/v1/boards/${f.boardId}/tasks`, f.alice, { title: 'Lost', column_id: 'col-nope' });
    expectError(unknown, 404, 'COLUMN_NOT_FOUND');
    const all = await f.sys.call('POST', `/api/v1/boards/${f.boardId}/query`, f.alice, { query: "title = 'Lost'" });
    expect(all.body.total).toBe(0);

    const legacy = await f.sys.call('POST', `/api/v1/kanban/boards/${f.boardId}/tasks`, f.alice, { title: 'Old client', status: 'done' });
    expect(legacy.status).toBe(201);
    expect(legacy.body).toMatchObject({ title: 'Old client', status: 'done', tags: ['team-a'] });
    expectDeprecated(legacy, `/api/v1/boards/${f.boardId}/tasks`);
  });

  it('reads a column: effective query, card shape, order by metadata.order, paging, filter', async () => {
    await using f = await boardFixture();
    for (const [title, order] of [['third', 3], ['first', 1], ['second', 2]] as const) {
      await f.card({ title, status: 'todo', description: 'long body', metadata: { order } });
    }
    await f.card({ title: 'elsewhere', status: 'done' });

    const page1 = await f.column('col-to-do', { page_size: 2 });
    expect(page1.status).toBe(200);
    expect(page1.body).toMatchObject({ total: 3, page: 1, page_size: 2 });
    expect(page1.body.effective_query).toBe("status = 'todo' AND 'team-a' IN tags AND app.type != 'sprint' ORDER BY metadata.order ASC");
    expect(page1.body.data.map((c: { title: string }) => c.title)).toEqual(['first', 'second']);
    for (const c of page1.body.data) {
      expect(Object.keys(c).sort()).toEqual(['id', 'metadata', 'status', 'tags', 'title']);
      expect(c).toMatchObject({ status: 'todo', tags: ['team-a'] });
    }
    const page2 = await f.column('col-to-do', { page: 2, page_size: 2 });
    expect(page2.body).toMatchObject({ total: 3, page: 2, page_size: 2 });
    expect(page2.body.data.map((c: { title: string; metadata: unknown }) => [c.title, c.metadata])).toEqual([['third', { order: 3 }]]);

    const defaults = await f.column('col-to-do');
    expect(defaults.body).toMatchObject({ total: 3, page: 1, page_size: 20 });

    const filtered = await f.column('col-to-do', { filter: 'title ~ "IRS"' });
    expect(filtered.body.data.map((c: { title: string }) => c.title)).toEqual(['first']);
    expect(filtered.body.effective_query).toContain('title ~ ');

    expectError(await f.column('col-missing'), 404, 'COLUMN_NOT_FOUND');
  });

  it('queries the board and summarizes its columns', async () => {
    await using f = await boardFixture();
    for (const title of ['a1', 'a2', 'a3']) await f.card({ title, status: 'todo', description: 'body', metadata: { order: Number(title[1]) } });
    await f.card({ title: 'b1', column_id: 'col-doing' });
    // a task of alice's outside the board (no default tag) is not in the board's scope
    const outside = await f.sys.call('POST', '/api/v1/tasks', f.alice, { title: 'not on board', status: 'todo' });
    expect(outside.status).toBe(201);

    const q = await f.sys.call('POST', `/api/v1/boards/${f.boardId}/query`, f.alice, { query: "status = 'todo' ORDER BY title ASC", page_size: 2 });
    expect(q.status).toBe(200);
    expect(q.body).toMatchObject({ total: 3, page: 1 });
    expect(q.body.data.map((t: { title: string }) => t.title)).toEqual(['a1', 'a2']);
    expect(q.body.data[0]).toMatchObject({
      id: expect.any(String), title: 'a1', description: 'body', status: 'todo', path: '', tags: ['team-a'], checkInCount: 0,
      metadata: { order: 1 }, created_at: NOW, created_by: f.alice.id, updated_at: NOW, updated_by: f.alice.id,
    });
    const q2 = await f.sys.call('POST', `/api/v1/kanban/boards/${f.boardId}/query`, f.alice, { query: "status = 'todo' ORDER BY title ASC", page: 2, page_size: 2 });
    expect(q2.status).toBe(200);
    expect(q2.body).toMatchObject({ total: 3, page: 2 });
    expect(q2.body.data.map((t: { title: string }) => t.title)).toEqual(['a3']);
    expectDeprecated(q2, `/api/v1/boards/${f.boardId}/query`);

    const summary = await f.sys.call('GET', `/api/v1/boards/${f.boardId}/summary`, f.alice);
    expect(summary.status).toBe(200);
    expect(summary.body).toEqual({
      board_id: f.boardId,
      name: 'Team A',
      columns: [
        { column_id: 'col-to-do', name: 'To Do', total: 3, preview: ['a1', 'a2', 'a3'] },
        { column_id: 'col-doing', name: 'Doing', total: 1, preview: ['b1'] },
        { column_id: 'col-done', name: 'Done', total: 0, preview: [] },
      ],
    });
    const short = await f.sys.call('GET', `/api/v1/boards/${f.boardId}/summary?preview=1`, f.alice);
    expect(short.body.columns.map((c: { preview: string[] }) => c.preview)).toEqual([['a1'], ['b1'], []]);
    const counts = await f.sys.call('GET', `/api/v1/boards/${f.boardId}/summary?preview=0`, f.alice);
    expect(counts.status).toBe(200);
    expect(counts.body.columns.map((c: { total: number; preview: string[] }) => [c.total, c.preview])).toEqual([[3, []], [1, []], [0, []]]);
  });
});

describe('card move through HTTP', () => {
  it('moves todo → doing with applied actions and writes the card', async () => {
    await using f = await boardFixture();
    const card = await f.card({ title: 'Ship it', status: 'todo' });
    f.sys.clock.advance(60_000);
    const res = await f.move(card.id, { from_column_id: 'col-to-do', to_column_id: 'col-doing' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.task).toEqual({ id: card.id, title: 'Ship it', status: 'doing', tags: expect.any(Array), version: 2 });
    expect([...res.body.task.tags].sort()).toEqual(['team-a', 'wip']);
    expect(res.body.applied_actions).toEqual([
      { op: 'set', field: 'status', from: 'todo', to: 'doing' },
      { op: 'add_tags', value: ['wip'] },
    ]);
    const after = await f.task(card.id);
    expect(after.body).toMatchObject({ status: 'doing', updated_at: '2026-03-02T09:01:00.000Z', updated_by: f.alice.id });
    expect([...after.body.tags].sort()).toEqual(['team-a', 'wip']);
    expect((await f.column('col-doing')).body.data.map((c: { id: string }) => c.id)).toEqual([card.id]);
    expect((await f.column('col-to-do')).body.total).toBe(0);

    // back again: exit(doing) removes wip, enter(todo) keeps the default tag
    const back = await f.sys.call('POST', `/api/v1/kanban/boards/${f.boardId}/tasks/${card.id}/move`, f.alice, { from_column_id: 'col-doing', to_column_id: 'col-to-do' });
    expect(back.status).toBe(200);
    expectDeprecated(back, `/api/v1/boards/${f.boardId}/tasks/${card.id}/move`);
    expect(back.body.applied_actions).toEqual([
      { op: 'set', field: 'status', from: 'doing', to: 'todo' },
      { op: 'remove_tags', value: ['wip'] },
    ]);
    expect(back.body.task.tags).toEqual(['team-a']);
  });

  it('lets exactly one of several identical concurrent moves succeed; the others get the 409 snapshot', async () => {
    await using f = await boardFixture();
    const card = await f.card({ title: 'Raced', status: 'todo' });
    const answers = await Promise.all(Array.from({ length: 4 }, () => f.move(card.id, { from_column_id: 'col-to-do', to_column_id: 'col-doing' })));
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409, 409, 409]);
    for (const a of answers.filter((x) => x.status === 409)) expect(a.body.task).toMatchObject({ id: card.id, status: 'doing' });
    expect((await f.task(card.id)).body.tags.filter((t: string) => t === 'wip')).toEqual(['wip']);
  });

  it('computes a dry run like a real move and writes nothing', async () => {
    await using f = await boardFixture();
    const card = await f.card({ title: 'Maybe', status: 'todo' });
    const before = await f.task(card.id);
    f.sys.clock.advance(60_000); // a write would now change updated_at
    const dry = await f.move(card.id, { from_column_id: 'col-to-do', to_column_id: 'col-doing', dry_run: true });
    expect(dry.status).toBe(200);
    const after = await f.task(card.id);
    expect(after.body).toEqual(before.body);
    const real = await f.move(card.id, { from_column_id: 'col-to-do', to_column_id: 'col-doing' });
    expect(real.status).toBe(200);
    // the same answer, but the dry run names the card's current version and the move the one it wrote
    expect(dry.body).toEqual({ ...real.body, task: { ...real.body.task, version: 1 } });
    expect([dry.headers.etag, real.headers.etag]).toEqual(['"1"', '"2"']);
  });

  it('refuses a stale move (409 with the current snapshot), an unreachable column (422) and an unknown column (404)', async () => {
    await using f = await boardFixture();
    const card = await f.card({ title: 'Contested', status: 'todo' });
    // someone else finished it meanwhile
    const patched = await f.sys.call('PATCH', `/api/v1/tasks/${card.id}`, f.alice, { status: 'done' });
    expect(patched.status).toBe(200);
    const before = await f.task(card.id);

    const stale = await f.move(card.id, { from_column_id: 'col-to-do', to_column_id: 'col-doing' });
    const body = expectError(stale, 409, 'KANBAN_TASK_NOT_IN_SOURCE_COLUMN');
    expect(body.task).toEqual({ id: card.id, status: 'done', tags: ['team-a'] });
    expect((await f.task(card.id)).body).toEqual(before.body);

    // a column no action can reach: its query is a title search, which yields no enter action
    const columns = [...f.board.columns, { name: 'Urgent', query: 'title ~ "urgent"' }];
    const put = await f.sys.call('PUT', `/api/v1/boards/${f.boardId}`, f.alice, { columns });
    expect(put.status).toBe(200);
    const unreachable = await f.move(card.id, { from_column_id: 'col-done', to_column_id: 'col-urgent' });
    expectError(unreachable, 422, 'KANBAN_TARGET_COLUMN_UNREACHABLE');
    expect((await f.task(card.id)).body).toEqual(before.body);

    expectError(await f.move(card.id, { from_column_id: 'col-done', to_column_id: 'col-nope' }), 404, 'COLUMN_NOT_FOUND');
    expectError(await f.move(card.id, { from_column_id: 'col-nope', to_column_id: 'col-done' }), 404, 'COLUMN_NOT_FOUND');
    expectError(
      await f.sys.call('POST', `/api/v1/boards/${f.boardId}/tasks/00000000-0000-4000-8000-000000000000/move`, f.alice, { from_column_id: 'col-done', to_column_id: 'col-to-do' }),
      404,
      'TASK_NOT_FOUND',
    );
  });
});

describe('column edits, preview and delete through HTTP', () => {
  it('keeps column ids stable across PUTs and regenerates actions from the new queries', async () => {
    await using f = await boardFixture();
    const card = await f.card({ title: 'Stays put', column_id: 'col-doing' });
    // written back as read, plus a new column, reordered: no id changes
    const [todo, doing, done] = f.board.columns;
    const put = await f.sys.call('PUT', `/api/v1/boards/${f.boardId}`, f.alice, { columns: [done, todo, doing, { name: 'Blocked', query: "'blocked' IN tags" }] });
    expect(put.status).toBe(200);
    expect(put.body.columns.map((c: { id: string }) => c.id)).toEqual(['col-done', 'col-to-do', 'col-doing', 'col-blocked']);
    expect(put.body.name).toBe('Team A');
    expect(put.body.default_tags).toEqual(['team-a']);

    // sent without ids but with the same names: the previous ids are kept; a changed query re-materializes
    const renamedQuery = (await f.sys.call('PUT', `/api/v1/boards/${f.boardId}`, f.alice, {
      columns: [{ name: 'To Do', query: "status = 'todo'" }, { name: 'Doing', query: "status = 'in-progress'" }, { name: 'Done', query: "status = 'done'" }],
    })).body;
    expect(renamedQuery.columns.map((c: { id: string }) => c.id)).toEqual(IDS);
    expect(actionLines(renamedQuery.columns[1])).toEqual(['enter set status "in-progress" query']);
    // the card's move now follows the new definition
    const moved = await f.move(card.id, { from_column_id: 'col-doing', to_column_id: 'col-done' });
    expectError(moved, 409, 'KANBAN_TASK_NOT_IN_SOURCE_COLUMN');
    const read = await f.sys.call('GET', `/api/v1/boards/${f.boardId}`, f.alice);
    expect(read.body).toEqual(renamedQuery);
  });

  it('previews the actions of a column query without writing', async () => {
    await using f = await boardFixture();
    // a `default_tags` sent by an older client on the legacy path is ignored: the actions come from the column query alone
    const res = await f.sys.call('POST', '/api/v1/kanban/boards/preview-actions', f.alice, { query: "status = 'review' AND 'qa' IN tags AND cf.priority = 1", default_tags: ['team-a'] });
    expect(res.status).toBe(200);
    const strict = await f.sys.call('POST', '/api/v1/boards/preview-actions', f.alice, { query: "status = 'review'", default_tags: ['team-a'] });
    expect(strict.status).toBe(400);
    expect(strict.body.validationErrors.map((e: { field: string }) => e.field)).toEqual(['/default_tags']);
    expect(actionLines(res.body)).toEqual([
      'enter add tags "qa" query', 'enter set metadata.cf.priority "1" query', 'enter set status "review" query', 'exit remove tags "qa" query',
    ].sort());
    const orderOnly = await f.sys.call('POST', '/api/v1/boards/preview-actions', f.alice, { query: 'ORDER BY updated_at DESC' });
    expect(orderOnly.body).toEqual({ actions: [] });
    const none = await f.sys.call('POST', '/api/v1/kanban/boards/preview-actions', f.alice, { query: "status = 'a' OR status = 'b'" });
    expect(none.status).toBe(200);
    expect(none.body).toEqual({ actions: [] });
    expectDeprecated(none, '/api/v1/boards/preview-actions');
    expectError(await f.sys.call('POST', '/api/v1/boards/preview-actions', f.alice, { query: "status = = 'x'" }), 400, 'QUERY_SYNTAX');
    const board = await f.sys.call('GET', `/api/v1/boards/${f.boardId}`, f.alice);
    expect(board.body).toEqual(f.board);
  });

  it('deletes a board (204) and keeps its tasks', async () => {
    await using f = await boardFixture();
    const card = await f.card({ title: 'Survivor', status: 'todo' });
    const del = await f.sys.call('DELETE', `/api/v1/boards/${f.boardId}`, f.alice);
    expect(del.status).toBe(204);
    expect(del.body).toBeUndefined();
    expectError(await f.sys.call('GET', `/api/v1/boards/${f.boardId}`, f.alice), 404, 'BOARD_NOT_FOUND');
    expectError(await f.column('col-to-do'), 404, 'BOARD_NOT_FOUND');
    expectError(await f.sys.call('DELETE', `/api/v1/boards/${f.boardId}`, f.alice), 404, 'BOARD_NOT_FOUND');
    const task = await f.task(card.id);
    expect(task.status).toBe(200);
    expect(task.body).toMatchObject({ id: card.id, title: 'Survivor', status: 'todo' });
    const found = await f.sys.call('POST', '/api/v1/tasks/query', f.alice, { query: "'team-a' IN tags" });
    expect(found.body).toMatchObject({ total: 1, data: [{ id: card.id }] });
    expect((await f.sys.call('GET', '/api/v1/boards', f.alice)).body).toEqual({ owned_boards: [], shared_boards: [] });
  });

  it('a soft-deleted card answers 404 and leaves every read', async () => {
    await using f = await boardFixture();
    const card = await f.card({ title: 'Doomed', status: 'todo' });
    const keep = await f.card({ title: 'Kept', status: 'todo' });
    const del = await f.sys.call('DELETE', `/api/v1/todolist/${card.id}`, f.alice);
    expect(del.status).toBe(204);
    expectDeprecated(del, `/api/v1/tasks/${card.id}`);
    expectError(await f.task(card.id), 404, 'TASK_NOT_FOUND');
    expectError(await f.move(card.id, { from_column_id: 'col-to-do', to_column_id: 'col-doing' }), 404, 'TASK_NOT_FOUND');
    expect((await f.column('col-to-do')).body.data.map((c: { id: string }) => c.id)).toEqual([keep.id]);
    const summary = await f.sys.call('GET', `/api/v1/boards/${f.boardId}/summary`, f.alice);
    expect(summary.body.columns[0]).toMatchObject({ total: 1, preview: ['Kept'] });
    expect((await f.sys.call('POST', `/api/v1/boards/${f.boardId}/query`, f.alice, {})).body.total).toBe(1);
  });
});
