import { describe, expect, it } from 'vitest';
import { expectDeprecated, expectError, system, type Answer, type System, type User } from './system.js';

/**
 * Sharing a board with a group through HTTP (docs/boards.md "Access, sharing, groups", docs/auth.md;
 * docs/architecture.md §4, §5, §9): `r` members read, `rw` members also write cards, only the owner changes the
 * board, and outsiders see nothing (404, never 403).
 */

interface Team {
  sys: System;
  alice: User; // owner
  bob: User; // group member
  carol: User; // outsider
  boardId: string;
  groupId: string;
  share(permission: 'r' | 'rw'): Promise<Answer>;
  card(as: User, body?: Record<string, unknown>): Promise<Answer>;
  move(as: User, taskId: string, from: string, to: string): Promise<Answer>;
}

/** alice owns a board (default columns) and a group with bob in it; carol is in no group. */
async function team(): Promise<Team & AsyncDisposable> {
  const sys = await system();
  const [alice, bob, carol] = [await sys.user('alice'), await sys.user('bob'), await sys.user('carol')];
  const group = await sys.call('POST', '/api/v1/groups', alice, { name: 'crew' });
  expect(group.status).toBe(201);
  const added = await sys.call('POST', `/api/v1/groups/${group.body.id}/members`, alice, { user_id: bob.id });
  expect(added.status).toBe(200);
  expect(added.body.members).toEqual(expect.arrayContaining([{ user_id: alice.id, role: 'owner' }, { user_id: bob.id, role: 'member' }]));
  const board = await sys.call('POST', '/api/v1/boards', alice, { name: 'Crew board', board_type: 'private' });
  expect(board.status).toBe(201);
  const boardId: string = board.body.id;
  return {
    sys, alice, bob, carol, boardId, groupId: group.body.id,
    share: (permission) => sys.call('POST', `/api/v1/boards/${boardId}/share`, alice, { group_id: group.body.id, permission }),
    card: (as, body = {}) => sys.call('POST', `/api/v1/boards/${boardId}/tasks`, as, { title: `card by ${as.name}`, status: 'todo', ...body }),
    move: (as, taskId, from, to) => sys.call('POST', `/api/v1/boards/${boardId}/tasks/${taskId}/move`, as, { from_column_id: from, to_column_id: to }),
    [Symbol.asyncDispose]: () => sys[Symbol.asyncDispose](),
  };
}

/** Every read of a board: detail, board query, column read, summary. */
function boardReads(t: Team, as: User): Array<[string, Promise<Answer>]> {
  const base = `/api/v1/boards/${t.boardId}`;
  return [
    ['GET board', t.sys.call('GET', base, as)],
    ['board query', t.sys.call('POST', `${base}/query`, as, { query: "status = 'todo'" })],
    ['column read', t.sys.call('POST', `${base}/columns/col-to-do/query`, as, {})],
    ['summary', t.sys.call('GET', `${base}/summary`, as)],
  ];
}

/** Every owner-only operation of a board. */
function ownerOps(t: Team, as: User): Array<[string, Promise<Answer>]> {
  const base = `/api/v1/boards/${t.boardId}`;
  return [
    ['PUT', t.sys.call('PUT', base, as, { name: 'taken over' })],
    ['share', t.sys.call('POST', `${base}/share`, as, { group_id: t.groupId, permission: 'rw' })],
    ['unshare', t.sys.call('DELETE', `${base}/share`, as)],
    ['DELETE', t.sys.call('DELETE', base, as)],
  ];
}

async function expectAll(calls: Array<[string, Promise<Answer>]>, status: number, code?: string): Promise<void> {
  for (const [what, pending] of calls) {
    const res = await pending;
    if (code) expect({ what, status: res.status, code: res.body?.code }).toEqual({ what, status, code });
    else expect({ what, status: res.status }, JSON.stringify(res.body)).toEqual({ what, status });
  }
}

describe('board sharing through HTTP', () => {
  it('an `r` member sees and reads the shared board but cannot create or move cards', async () => {
    await using t = await team();
    const shared = await t.share('r');
    expect(shared.status).toBe(200);
    expect(shared.body).toMatchObject({ id: t.boardId, board_type: 'shared', group_id: t.groupId, permission: 'r', is_owner: true });
    const card = await t.card(t.alice);
    expect(card.status).toBe(201);

    const bobsList = await t.sys.call('GET', '/api/v1/boards', t.bob);
    expect(bobsList.status).toBe(200);
    expect(bobsList.body.owned_boards).toEqual([]);
    expect(bobsList.body.shared_boards).toEqual([expect.objectContaining({ id: t.boardId, is_owner: false, owner_id: t.alice.id, permission: 'r' })]);

    await expectAll(boardReads(t, t.bob), 200);
    const q = await t.sys.call('POST', `/api/v1/boards/${t.boardId}/query`, t.bob, { query: "status = 'todo'" });
    expect(q.body).toMatchObject({ total: 1, data: [{ id: card.body.id, title: 'card by alice' }] });
    const col = await t.sys.call('POST', `/api/v1/boards/${t.boardId}/columns/col-to-do/query`, t.bob, {});
    expect(col.body.data.map((c: { id: string }) => c.id)).toEqual([card.body.id]);
    expect((await t.sys.call('GET', `/api/v1/tasks/${card.body.id}`, t.bob)).status).toBe(200);

    expectError(await t.card(t.bob), 403, 'FORBIDDEN');
    expectError(await t.move(t.bob, card.body.id, 'col-to-do', 'col-doing'), 403, 'FORBIDDEN');
    const legacy = await t.sys.call('POST', `/api/v1/kanban/boards/${t.boardId}/tasks`, t.bob, { title: 'sneaky' });
    expectError(legacy, 403, 'FORBIDDEN');
    expectDeprecated(legacy, `/api/v1/boards/${t.boardId}/tasks`);
    expectError(await t.sys.call('PATCH', `/api/v1/tasks/${card.body.id}`, t.bob, { status: 'done' }), 403, 'FORBIDDEN');
    // nothing was written
    const after = await t.sys.call('POST', `/api/v1/boards/${t.boardId}/query`, t.alice, {});
    expect(after.body.data.map((d: { id: string; status: string }) => [d.id, d.status])).toEqual([[card.body.id, 'todo']]);
  });

  it('an `rw` member creates and moves cards, and the owner sees them', async () => {
    await using t = await team();
    expect((await t.share('r')).status).toBe(200);
    const upgraded = await t.share('rw');
    expect(upgraded.status).toBe(200);
    expect(upgraded.body).toMatchObject({ group_id: t.groupId, permission: 'rw' });

    const bobs = await t.card(t.bob);
    expect(bobs.status).toBe(201);
    expect(bobs.body).toMatchObject({ created_by: t.bob.id, status: 'todo' });
    const alices = await t.card(t.alice);
    const moved = await t.move(t.bob, alices.body.id, 'col-to-do', 'col-doing');
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    expect(moved.body.applied_actions).toEqual([{ op: 'set', field: 'status', from: 'todo', to: 'doing' }]);
    expect((await t.move(t.alice, bobs.body.id, 'col-to-do', 'col-done')).status).toBe(200);

    const summary = await t.sys.call('GET', `/api/v1/boards/${t.boardId}/summary`, t.alice);
    expect(summary.body.columns.map((c: { total: number }) => c.total)).toEqual([0, 1, 1]);
    const bobsView = await t.sys.call('GET', `/api/v1/boards/${t.boardId}/summary`, t.bob);
    expect(bobsView.body).toEqual(summary.body);
  });

  it('board changes and sharing are for the owner only (403 for members, even `rw`)', async () => {
    await using t = await team();
    expect((await t.share('rw')).status).toBe(200);
    const before = await t.sys.call('GET', `/api/v1/boards/${t.boardId}`, t.alice);
    await expectAll(ownerOps(t, t.bob), 403, 'FORBIDDEN');
    expect((await t.sys.call('GET', `/api/v1/boards/${t.boardId}`, t.alice)).body).toEqual(before.body);
    expectError(await t.sys.call('DELETE', `/api/v1/kanban/boards/${t.boardId}`, t.bob), 403, 'FORBIDDEN');

    // the owner may: unshare → bob no longer sees the board
    const unshared = await t.sys.call('DELETE', `/api/v1/boards/${t.boardId}/share`, t.alice);
    expect(unshared.status).toBe(200);
    expect(unshared.body).not.toHaveProperty('group_id');
    expect(unshared.body).not.toHaveProperty('permission');
    expectError(await t.sys.call('GET', `/api/v1/boards/${t.boardId}`, t.bob), 404, 'BOARD_NOT_FOUND');
    expect((await t.sys.call('GET', '/api/v1/boards', t.bob)).body.shared_boards).toEqual([]);
  });

  it('membership is read per request: a member removed from the group loses the board and its cards at once', async () => {
    await using t = await team();
    expect((await t.share('rw')).status).toBe(200);
    const card = await t.card(t.bob);
    expect(card.status).toBe(201);
    const removed = await t.sys.call('DELETE', `/api/v1/groups/${t.groupId}/members/${t.bob.id}`, t.alice);
    expect(removed.status).toBe(200);
    expect(removed.body.members).toEqual([{ user_id: t.alice.id, role: 'owner' }]);
    await expectAll(boardReads(t, t.bob), 404, 'BOARD_NOT_FOUND');
    expectError(await t.card(t.bob), 404, 'BOARD_NOT_FOUND');
    // bob still owns the card he created; alice still sees it on her board through the group
    expect((await t.sys.call('GET', `/api/v1/tasks/${card.body.id}`, t.bob)).status).toBe(200);
    const q = await t.sys.call('POST', `/api/v1/boards/${t.boardId}/query`, t.alice, {});
    expect(q.body.data.map((d: { id: string }) => d.id)).toEqual([card.body.id]);
  });

  it('a board owner who leaves the group keeps the board but no longer reads the group\'s cards through it', async () => {
    await using t = await team();
    // carol's group, with alice and bob in it; alice shares her board with it
    const crew = await t.sys.call('POST', '/api/v1/groups', t.carol, { name: "carol's crew" });
    for (const user of [t.alice, t.bob]) {
      expect((await t.sys.call('POST', `/api/v1/groups/${crew.body.id}/members`, t.carol, { user_id: user.id })).status).toBe(200);
    }
    expect((await t.sys.call('POST', `/api/v1/boards/${t.boardId}/share`, t.alice, { group_id: crew.body.id, permission: 'rw' })).status).toBe(200);
    const alices = await t.card(t.alice);
    const bobs = await t.card(t.bob);
    expect((await t.sys.call('POST', `/api/v1/boards/${t.boardId}/query`, t.alice, {})).body.total).toBe(2);

    const left = await t.sys.call('DELETE', `/api/v1/groups/${crew.body.id}/members/${t.alice.id}`, t.alice);
    expect(left.status).toBe(200);
    expectError(await t.sys.call('GET', `/api/v1/tasks/${bobs.body.id}`, t.alice), 404, 'TASK_NOT_FOUND');
    // the board is still hers, but it shows only the cards she can still read: her own
    expect((await t.sys.call('GET', `/api/v1/boards/${t.boardId}`, t.alice)).status).toBe(200);
    const q = await t.sys.call('POST', `/api/v1/boards/${t.boardId}/query`, t.alice, {});
    expect(q.body.data.map((d: { id: string }) => d.id)).toEqual([alices.body.id]);
    const column = await t.sys.call('POST', `/api/v1/boards/${t.boardId}/columns/col-to-do/query`, t.alice, {});
    expect(column.body.data.map((d: { id: string }) => d.id)).toEqual([alices.body.id]);
    const summary = await t.sys.call('GET', `/api/v1/boards/${t.boardId}/summary`, t.alice);
    expect(summary.body.columns[0]).toMatchObject({ total: 1, preview: ['card by alice'] });
    expectError(await t.move(t.alice, bobs.body.id, 'col-to-do', 'col-doing'), 404, 'TASK_NOT_FOUND');
    // bob, still in the group, still sees both cards on the board
    expect((await t.sys.call('POST', `/api/v1/boards/${t.boardId}/query`, t.bob, {})).body.total).toBe(2);
  });

  it('a non-member gets 404 everywhere and never sees the board or its cards', async () => {
    await using t = await team();
    expect((await t.share('rw')).status).toBe(200);
    const card = await t.card(t.alice);
    await expectAll(boardReads(t, t.carol), 404, 'BOARD_NOT_FOUND');
    await expectAll(ownerOps(t, t.carol), 404, 'BOARD_NOT_FOUND');
    expectError(await t.card(t.carol), 404, 'BOARD_NOT_FOUND');
    expectError(await t.move(t.carol, card.body.id, 'col-to-do', 'col-doing'), 404, 'BOARD_NOT_FOUND');
    expectError(await t.sys.call('GET', `/api/v1/kanban/boards/${t.boardId}`, t.carol), 404, 'BOARD_NOT_FOUND');
    expectError(await t.sys.call('GET', `/api/v1/tasks/${card.body.id}`, t.carol), 404, 'TASK_NOT_FOUND');
    expectError(await t.sys.call('PATCH', `/api/v1/tasks/${card.body.id}`, t.carol, { status: 'done' }), 404, 'TASK_NOT_FOUND');
    expect((await t.sys.call('GET', '/api/v1/boards', t.carol)).body).toEqual({ owned_boards: [], shared_boards: [] });
    const found = await t.sys.call('POST', '/api/v1/tasks/query', t.carol, { query: '' });
    expect(found.body).toMatchObject({ total: 0, data: [] });
    // carol cannot share the board into a group of her own either
    const own = await t.sys.call('POST', '/api/v1/groups', t.carol, { name: 'mine' });
    expectError(await t.sys.call('POST', `/api/v1/boards/${t.boardId}/share`, t.carol, { group_id: own.body.id, permission: 'rw' }), 404, 'BOARD_NOT_FOUND');
    // and the owner cannot share into a group she is not in
    expectError(await t.sys.call('POST', `/api/v1/boards/${t.boardId}/share`, t.alice, { group_id: own.body.id, permission: 'r' }), 403, 'NOT_GROUP_MEMBER');
  });
  it('cards follow their board: sharing, and raising `r` to `rw`, applies to cards created before', async () => {
    await using t = await team();
    const early = await t.card(t.alice);
    expect(early.status).toBe(201);
    // private board: bob cannot see alice's card at all
    expectError(await t.sys.call('GET', `/api/v1/tasks/${early.body.id}`, t.bob), 404, 'TASK_NOT_FOUND');

    expect((await t.share('r')).status).toBe(200);
    expect((await t.sys.call('GET', `/api/v1/tasks/${early.body.id}`, t.bob)).status).toBe(200);
    expectError(await t.move(t.bob, early.body.id, 'col-to-do', 'col-doing'), 403, 'FORBIDDEN');

    expect((await t.share('rw')).status).toBe(200);
    const moved = await t.move(t.bob, early.body.id, 'col-to-do', 'col-doing');
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    expect(moved.body.task.status).toBe('doing');

    // a task alice made outside the board is not swept into the group
    const loose = await t.sys.call('POST', '/api/v1/tasks', t.alice, { title: 'not on the board' });
    expectError(await t.sys.call('GET', `/api/v1/tasks/${loose.body.id}`, t.bob), 404, 'TASK_NOT_FOUND');
  });
});

describe('board members over HTTP (docs/boards.md "Members")', () => {
  it('invites by name as r or rw, changes and removes a member, owner only; bad inputs are 4xx naming the field', async () => {
    await using t = await team();
    const base = `/api/v1/boards/${t.boardId}/members`;
    const invited = await t.sys.call('POST', base, t.alice, { username: 'carol', permission: 'r' });
    expect(invited.status, JSON.stringify(invited.body)).toBe(200);
    expect(invited.body).toEqual([
      { id: t.alice.id, username: 'alice', permission: 'owner' },
      { id: t.carol.id, username: 'carol', permission: 'r' },
    ]);
    const card = await t.card(t.alice);
    expect((await t.sys.call('GET', `/api/v1/tasks/${card.body.id}`, t.carol)).status).toBe(200);
    expectError(await t.move(t.carol, card.body.id, 'col-to-do', 'col-doing'), 403, 'FORBIDDEN');
    // only the owner manages members: carol (a reader) gets 403, an outsider 404
    expectError(await t.sys.call('POST', base, t.carol, { username: 'bob', permission: 'rw' }), 403, 'FORBIDDEN');
    expectError(await t.sys.call('POST', base, t.bob, { username: 'bob', permission: 'rw' }), 404, 'BOARD_NOT_FOUND');

    const changed = await t.sys.call('PATCH', `${base}/${t.carol.id}`, t.alice, { permission: 'rw' });
    expect(changed.body.at(-1)).toEqual({ id: t.carol.id, username: 'carol', permission: 'rw' });
    expect((await t.move(t.carol, card.body.id, 'col-to-do', 'col-doing')).status).toBe(200);
    expectError(await t.sys.call('PATCH', `${base}/${t.carol.id}`, t.carol, { permission: 'r' }), 403, 'FORBIDDEN');

    const bad = expectError(await t.sys.call('POST', base, t.alice, { username: 'bob', permission: 'admin' }), 400, 'VALIDATION_FAILED');
    expect(bad.validationErrors.map((e: { field: string }) => e.field)).toEqual(['/permission']);
    expectError(await t.sys.call('POST', base, t.alice, { username: 'nobody', permission: 'r' }), 404, 'USER_NOT_FOUND');

    const removed = await t.sys.call('DELETE', `${base}/${t.carol.id}`, t.alice);
    expect(removed.body).toEqual([{ id: t.alice.id, username: 'alice', permission: 'owner' }]);
    expectError(await t.sys.call('GET', `/api/v1/boards/${t.boardId}`, t.carol), 404, 'BOARD_NOT_FOUND');
  });
});
