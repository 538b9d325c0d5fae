import { describe, expect, it } from 'vitest';
import { catchUpOutbox } from '@app/shared/events';
import { Collections } from '@app/shared/store';
import { expectDeprecated, expectError, system, type System, type User } from './system.js';

/**
 * The board and auth calls ud's clients make beyond SPEC's list, through HTTP: the board read
 * with every column's cards, the default board, dry runs of board create and update, ud's
 * `BoardResponse` fields and `POST /auth/register` (docs/boards.md, docs/auth.md).
 */

/** Documents of `name` matching `filter`; for `events`, once the committed writes are numbered (as a reader sees them). */
const count = async (sys: System, name: string, filter: Record<string, unknown> = {}) => {
  if (name === Collections.events) await catchUpOutbox(sys.store);
  return sys.store.collection(name).countDocuments(filter);
};

const COLUMNS = [
  { name: 'Todo', query: "status = 'todo'" },
  { name: 'Doing', query: "status = 'doing' ORDER BY title DESC" },
  { name: 'Done', query: "status = 'done'" },
];

async function board(sys: System, as: User, body: Record<string, unknown> = {}): Promise<any> {
  const res = await sys.call('POST', '/api/v1/boards', as, { name: 'Team', board_type: 'private', columns: COLUMNS, ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
}

const ids = (list: Array<{ id: string }>) => list.map((t) => t.id);

describe('GET /api/v1/boards/{id}/tasks', () => {
  it('answers the board, each column\'s full count and its first page read exactly as the column read reads it', async () => {
    await using sys = await system();
    const alice = await sys.user('alice');
    const b = await board(sys, alice);
    for (let i = 0; i < 23; i++) {
      await sys.call('POST', `/api/v1/boards/${b.id}/tasks`, alice, { title: `todo ${i}`, status: 'todo', description: `d${i}`, metadata: { order: 100 - i } });
    }
    for (const title of ['b', 'c', 'a']) await sys.call('POST', `/api/v1/boards/${b.id}/tasks`, alice, { title, status: 'doing' });

    const res = await sys.call('GET', `/api/v1/boards/${b.id}/tasks`, alice);
    expect(res.status).toBe(200);
    expect(res.body.board).toMatchObject({ id: b.id, name: 'Team', columns: [{ id: 'col-todo', order: 0 }, { id: 'col-doing', order: 1 }, { id: 'col-done', order: 2 }] });
    expect(res.body.column_counts).toEqual({ 'col-todo': 23, 'col-doing': 3, 'col-done': 0 });
    for (const column of ['col-todo', 'col-doing', 'col-done']) {
      const read = await sys.call('POST', `/api/v1/boards/${b.id}/columns/${column}/query`, alice, {});
      expect(ids(res.body.column_tasks[column]), column).toEqual(ids(read.body.data));
    }
    expect(res.body.column_tasks['col-todo']).toHaveLength(20);
    expect(res.body.column_tasks['col-todo'][0]).toMatchObject({ title: 'todo 22', description: 'd22', created_by: alice.id, version: 1 });
    expect(res.body.column_tasks['col-doing'].map((t: { title: string }) => t.title)).toEqual(['c', 'b', 'a']);

    const small = await sys.call('GET', `/api/v1/boards/${b.id}/tasks?page_size=2`, alice);
    expect(small.body.column_counts['col-todo']).toBe(23);
    expect(small.body.column_tasks['col-todo'].map((t: { title: string }) => t.title)).toEqual(['todo 22', 'todo 21']);
    const countsOnly = await sys.call('GET', `/api/v1/boards/${b.id}/tasks?page_size=0`, alice);
    expect(countsOnly.body.column_tasks).toEqual({ 'col-todo': [], 'col-doing': [], 'col-done': [] });
    const tooMany = await sys.call('GET', `/api/v1/boards/${b.id}/tasks?page_size=201`, alice);
    expect(expectError(tooMany, 400, 'VALIDATION_FAILED').validationErrors[0].field).toMatch(/page_size/);
  });

  it("expands the board's active sprint into every column, like the column read", async () => {
    await using sys = await system();
    const alice = await sys.user('alice');
    const b = await board(sys, alice);
    const sprint = await sys.call('POST', '/api/v1/tasks', alice, { title: 'Sprint 1', metadata: { 'app.type': 'sprint' } });
    await sys.call('POST', `/api/v1/boards/${b.id}/tasks`, alice, { title: 'before the sprint', status: 'todo' });
    expect((await sys.call('PUT', `/api/v1/boards/${b.id}`, alice, { activeSprintId: sprint.body.id })).status).toBe(200);
    await sys.call('POST', `/api/v1/boards/${b.id}/tasks`, alice, { title: 'in the sprint', status: 'todo', column_id: 'col-todo' });

    const res = await sys.call('GET', `/api/v1/boards/${b.id}/tasks`, alice);
    expect(res.body.column_tasks['col-todo'].map((t: { title: string }) => t.title)).toEqual(['in the sprint']);
    const all = await sys.call('GET', `/api/v1/boards/${b.id}/tasks?sprint=none`, alice);
    const read = await sys.call('POST', `/api/v1/boards/${b.id}/columns/col-todo/query`, alice, { sprint: 'none' });
    expect(ids(all.body.column_tasks['col-todo'])).toEqual(ids(read.body.data));
    expect(all.body.column_tasks['col-todo'].map((t: { title: string }) => t.title)).toEqual(expect.arrayContaining(['before the sprint', 'in the sprint']));
  });

  it("is 404 for a board the caller cannot read and answers at ud's legacy path with the deprecation headers", async () => {
    await using sys = await system();
    const alice = await sys.user('alice');
    const bob = await sys.user('bob');
    const b = await board(sys, alice);
    expectError(await sys.call('GET', `/api/v1/boards/${b.id}/tasks`, bob), 404, 'BOARD_NOT_FOUND');
    const legacy = await sys.call('GET', `/api/v1/kanban/boards/${b.id}/tasks?page_size=5`, alice);
    expect(legacy.status).toBe(200);
    expectDeprecated(legacy, `/api/v1/boards/${b.id}/tasks?page_size=5`);
  });
});

describe('POST /api/v1/boards/default', () => {
  it('20 concurrent calls create one board; later calls return it as it is now', async () => {
    await using sys = await system();
    const alice = await sys.user('alice');
    const answers = await Promise.all(Array.from({ length: 20 }, () => sys.call('POST', '/api/v1/boards/default', alice)));
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
    const id = answers[0]!.body.id;
    expect(new Set(answers.map((a) => a.body.id))).toEqual(new Set([id]));
    expect(answers[0]!.body).toMatchObject({
      board_type: 'private', owner_id: alice.id, is_active: true,
      columns: [{ name: 'To Do', order: 0 }, { name: 'Doing', order: 1 }, { name: 'Done', order: 2 }],
    });
    expect(await count(sys, Collections.boards)).toBe(1);
    expect(await count(sys, Collections.events, { type: 'board.created' })).toBe(1);

    await sys.call('PUT', `/api/v1/boards/${id}`, alice, { name: 'Mine' });
    const later = await sys.call('POST', '/api/v1/kanban/boards/default', alice);
    expect(later.body).toMatchObject({ id, name: 'Mine' });
    expectDeprecated(later, '/api/v1/boards/default');
    expect(await count(sys, Collections.boards)).toBe(1);
  });

  it('gives each user their own default board, and makes a new one after the old was deleted', async () => {
    await using sys = await system();
    const alice = await sys.user('alice');
    const bob = await sys.user('bob');
    const hers = (await sys.call('POST', '/api/v1/boards/default', alice)).body.id;
    const his = (await sys.call('POST', '/api/v1/boards/default', bob)).body;
    expect(his.id).not.toBe(hers);
    expect(his.owner_id).toBe(bob.id);
    expect((await sys.call('DELETE', `/api/v1/boards/${hers}`, alice)).status).toBe(204);
    const again = await sys.call('POST', '/api/v1/boards/default', alice);
    expect(again.status).toBe(200);
    expect(again.body.version).toBe(1);
  });
});

describe('?dry_run=true on board create and update', () => {
  it('create: 200 {dry_run, board} with ids backfilled and actions materialized; nothing written, no event', async () => {
    await using sys = await system();
    const alice = await sys.user('alice');
    const res = await sys.call('POST', '/api/v1/boards?dry_run=true', alice, { name: 'Preview', board_type: 'private', columns: COLUMNS });
    expect(res.status).toBe(200);
    expect(res.body.dry_run).toBe(true);
    expect(res.body.board).toMatchObject({
      name: 'Preview', owner_id: alice.id, created_by: alice.id, version: 1,
      columns: [{ id: 'col-todo', order: 0, actions: [{ trigger: 'enter', field: 'status', operation: 'set', value: 'todo', source: 'query' }] }, { id: 'col-doing' }, { id: 'col-done' }],
    });
    expect(await count(sys, Collections.boards)).toBe(0);
    expect(await count(sys, Collections.events)).toBe(0);
    expectError(await sys.call('GET', `/api/v1/boards/${res.body.board.id}`, alice), 404, 'BOARD_NOT_FOUND');

    const legacy = await sys.call('POST', '/api/v1/kanban/boards?dry_run=true', alice, { name: 'Preview', board_type: 'private' });
    expect(legacy.status).toBe(200);
    expectDeprecated(legacy, '/api/v1/boards?dry_run=true');
    expect((await sys.call('POST', '/api/v1/boards?dry_run=false', alice, { name: 'Real', board_type: 'private' })).status).toBe(201);
    expect(await count(sys, Collections.boards)).toBe(1);
  });

  it('create: the same validation and errors as a real create', async () => {
    await using sys = await system();
    const alice = await sys.user('alice');
    const body = { name: 'Bad', board_type: 'private', columns: [{ name: 'A', query: "status = 'todo'" }, { name: 'B', query: 'status ==' }] };
    const dry = await sys.call('POST', '/api/v1/boards?dry_run=true', alice, body);
    const real = await sys.call('POST', '/api/v1/boards', alice, body);
    expect(dry.status).toBe(400);
    expect(dry.body.details.field).toBe('/columns/1/query');
    expect({ ...dry.body, traceId: undefined }).toEqual({ ...real.body, traceId: undefined });
    const blank = await sys.call('POST', '/api/v1/boards?dry_run=true', alice, { name: '  ', board_type: 'private' });
    expect(expectError(blank, 400, 'VALIDATION_FAILED').validationErrors[0].field).toBe('/name');
    expect(await count(sys, Collections.boards)).toBe(0);
  });

  it('update: the board as the PUT would leave it; the stored board, its version and the events are untouched', async () => {
    await using sys = await system();
    const alice = await sys.user('alice');
    const bob = await sys.user('bob');
    const b = await board(sys, alice);
    const before = await count(sys, Collections.events);
    const change = { name: 'Renamed', columns: [{ id: 'col-doing', name: 'Doing' }, { name: 'Review', query: "'review' IN tags" }] };
    const res = await sys.call('PUT', `/api/v1/boards/${b.id}?dry_run=true`, alice, change, { 'if-match': '"1"' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      dry_run: true,
      board: { id: b.id, name: 'Renamed', version: 2, columns: [{ id: 'col-doing', order: 0 }, { id: 'col-review', order: 1, actions: [{ field: 'tags', operation: 'add' }, { field: 'tags', operation: 'remove' }] }] },
    });
    const stored = await sys.call('GET', `/api/v1/boards/${b.id}`, alice);
    expect(stored.body).toMatchObject({ name: 'Team', version: 1 });
    expect(stored.body.columns.map((c: { id: string }) => c.id)).toEqual(['col-todo', 'col-doing', 'col-done']);
    expect(await count(sys, Collections.events)).toBe(before);

    expectError(await sys.call('PUT', `/api/v1/boards/${b.id}?dry_run=true`, alice, change, { 'if-match': '"7"' }), 412, 'PRECONDITION_FAILED');
    expectError(await sys.call('PUT', `/api/v1/boards/${b.id}?dry_run=true`, bob, change), 404, 'BOARD_NOT_FOUND');
    const bad = await sys.call('PUT', `/api/v1/boards/${b.id}?dry_run=true`, alice, { columns: [{ name: 'X', query: 'nope nope' }] });
    expect(bad.status).toBe(400);
    expect(bad.body.details.field).toBe('/columns/0/query');
    const legacy = await sys.call('PUT', `/api/v1/kanban/boards/${b.id}?dry_run=true`, alice, { name: 'Legacy' });
    expect(legacy.body.board.name).toBe('Legacy');
    expectDeprecated(legacy, `/api/v1/boards/${b.id}?dry_run=true`);
    expect((await sys.call('GET', `/api/v1/boards/${b.id}`, alice)).body.name).toBe('Team');
  });
});

describe("ud's BoardResponse fields", () => {
  it('carries created_by, updated_by, is_active, each column\'s order, and group_id / group_permission once shared', async () => {
    await using sys = await system();
    const alice = await sys.user('alice');
    const bob = await sys.user('bob');
    const b = await board(sys, alice);
    expect(b).toMatchObject({ created_by: alice.id, updated_by: alice.id, is_active: true });
    expect(b.columns.map((c: { order: number }) => c.order)).toEqual([0, 1, 2]);
    expect(b).not.toHaveProperty('group_permission');
    // columns read back and sent again (order included, reversed) keep their ids; order follows the list
    const reordered = await sys.call('PUT', `/api/v1/kanban/boards/${b.id}`, alice, { columns: [...b.columns].reverse() });
    expect(reordered.status, JSON.stringify(reordered.body)).toBe(200);
    expect(reordered.body.columns.map((c: { id: string; order: number }) => [c.id, c.order])).toEqual([['col-done', 0], ['col-doing', 1], ['col-todo', 2]]);
    expect(((await sys.store.collection(Collections.boards).findOne({ _id: b.id })) as unknown as { columns: object[] }).columns[0]).not.toHaveProperty('order');
    const group = await sys.call('POST', '/api/v1/groups', alice, { name: 'crew' });
    await sys.call('POST', `/api/v1/groups/${group.body.id}/members`, alice, { user_id: bob.id });
    const shared = await sys.call('POST', `/api/v1/boards/${b.id}/share`, alice, { group_id: group.body.id, permission: 'rw' });
    expect(shared.body).toMatchObject({ group_id: group.body.id, group_permission: 'rw', board_type: 'shared' });
    const asBob = await sys.call('GET', `/api/v1/kanban/boards/${b.id}`, bob);
    expect(asBob.body).toMatchObject({ group_permission: 'rw', created_by: alice.id, is_owner: false });
  });
});

describe('POST /auth/register', () => {
  it("registers with ud's body and answer (200 {username, timezone}); the user can log in, at the root and under /api/v1", async () => {
    await using sys = await system();
    const res = await sys.call('POST', '/auth/register', undefined, { username: 'dana', password: 'correct horse battery', inviteCode: '', language: 'en' });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ username: 'dana', timezone: 'UTC' });
    const login = await sys.call('POST', '/auth/v2/login', undefined, { username: 'dana', password: 'correct horse battery' });
    expect(login.status).toBe(200);
    const prefixed = await sys.call('POST', '/api/v1/auth/register', undefined, { username: 'erin', password: 'correct horse battery', inviteCode: 'x' });
    expect(prefixed.status).toBe(200);
    expectError(await sys.call('POST', '/auth/register', undefined, { username: 'dana', password: 'correct horse battery', inviteCode: 'x' }), 409, 'USERNAME_TAKEN');
  });

  it('names a missing field (inviteCode is required) and checks the invite code when INVITE_CODE is set', async () => {
    await using sys = await system({ env: { INVITE_CODE: 'sesame' } });
    const missing = await sys.call('POST', '/auth/register', undefined, { username: 'dana', password: 'correct horse battery' });
    expect(expectError(missing, 400, 'VALIDATION_FAILED').validationErrors[0].field).toBe('/inviteCode');
    expectError(await sys.call('POST', '/auth/register', undefined, { username: 'dana', password: 'correct horse battery', inviteCode: 'wrong' }), 403, 'REGISTRATION_DISABLED');
    const ok = await sys.call('POST', '/auth/register', undefined, { username: 'dana', password: 'correct horse battery', inviteCode: 'sesame' });
    expect(ok.status).toBe(200);
  });
});
