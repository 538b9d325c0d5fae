import { describe, expect, it } from 'vitest';
import { expectError, system } from './system.js';

/**
 * Saved views through HTTP (docs/views.md): create, list, read, change and delete with If-Match,
 * sharing through a board, and running a view for each reader with its functions resolved for them.
 */

/** alice owns a board shared read-only with a group holding bob; carol is outside. */
async function crew() {
  const sys = await system();
  const [alice, bob, carol] = [await sys.user('alice'), await sys.user('bob'), await sys.user('carol')];
  const group = await sys.call('POST', '/api/v1/groups', alice, { name: 'crew' });
  expect((await sys.call('POST', `/api/v1/groups/${group.body.id}/members`, alice, { user_id: bob.id })).status).toBe(200);
  const board = await sys.call('POST', '/api/v1/boards', alice, { name: 'Crew board', board_type: 'private' });
  const boardId: string = board.body.id;
  expect((await sys.call('POST', `/api/v1/boards/${boardId}/share`, alice, { group_id: group.body.id, permission: 'rw' })).status).toBe(200);
  const view = (as: typeof alice, body: Record<string, unknown>) => sys.call('POST', '/api/v1/views', as, body);
  const run = (as: typeof alice, id: string, body: Record<string, unknown> = {}) => sys.call('POST', `/api/v1/views/${id}/query`, as, body);
  const listed = async (as: typeof alice) => {
    const res = await sys.call('GET', '/api/v1/views', as);
    expect(res.status).toBe(200);
    return (res.body.data as Array<{ name: string }>).map((v) => v.name).sort();
  };
  return { sys, alice, bob, carol, boardId, view, run, listed, [Symbol.asyncDispose]: () => sys[Symbol.asyncDispose]() };
}

describe('saved views through HTTP', () => {
  it('a shared "assigned to me" view is listed for the board\'s readers and runs as each reader\'s own', async () => {
    await using f = await crew();
    for (const [title, who] of [['for alice', f.alice.id], ['for bob', f.bob.id], ['nobody', undefined]] as const) {
      const res = await f.sys.call('POST', `/api/v1/boards/${f.boardId}/tasks`, f.alice, { title, status: 'todo', ...(who ? { assignee: who } : {}) });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
    }
    const shared = await f.view(f.alice, { name: 'Mine', query: 'assignee = me()', board_id: f.boardId, shared: true, sort: { column: 'title', direction: 'asc' } });
    expect(shared.status, JSON.stringify(shared.body)).toBe(201);
    expect(shared.body).toMatchObject({ name: 'Mine', query: 'assignee = me()', board_id: f.boardId, shared: true, owner_id: f.alice.id, is_owner: true, version: 1 });
    expect(shared.headers.etag).toBe('"1"');
    const privateView = await f.view(f.alice, { name: 'Private', query: "status = 'todo'" });
    expect(privateView.status).toBe(201);
    expect(privateView.body.shared).toBe(false);

    expect(await f.listed(f.alice)).toEqual(['Mine', 'Private']);
    expect(await f.listed(f.bob)).toEqual(['Mine']);
    expect(await f.listed(f.carol)).toEqual([]);
    expect((await f.sys.call('GET', `/api/v1/views/${shared.body.id}`, f.bob)).body.is_owner).toBe(false);
    expectError(await f.sys.call('GET', `/api/v1/views/${privateView.body.id}`, f.bob), 404, 'VIEW_NOT_FOUND');
    expectError(await f.sys.call('GET', `/api/v1/views/${shared.body.id}`, f.carol), 404, 'VIEW_NOT_FOUND');

    for (const [as, title] of [[f.alice, 'for alice'], [f.bob, 'for bob']] as const) {
      const res = await f.run(as, shared.body.id);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.data.map((t: { title: string }) => t.title)).toEqual([title]);
      expect(res.body).toMatchObject({ total: 1, page: 1, page_size: 20, effective_query: 'assignee = me()' });
    }
    expectError(await f.run(f.carol, shared.body.id), 404, 'VIEW_NOT_FOUND');

    // unsharing hides it from bob again
    const unshared = await f.sys.call('PATCH', `/api/v1/views/${shared.body.id}`, f.alice, { shared: false }, { 'if-match': '"1"' });
    expect(unshared.status, JSON.stringify(unshared.body)).toBe(200);
    expect(unshared.body).toMatchObject({ shared: false, version: 2 });
    expect(await f.listed(f.bob)).toEqual([]);
    expectError(await f.run(f.bob, shared.body.id), 404, 'VIEW_NOT_FOUND');
  });

  it('only the owner changes or deletes a view, with If-Match like every write, and each write is an event', async () => {
    await using f = await crew();
    const created = await f.view(f.alice, { name: 'Board', query: "status = 'todo'", board_id: f.boardId, shared: true });
    const id = created.body.id;
    expectError(await f.sys.call('PATCH', `/api/v1/views/${id}`, f.bob, { name: 'mine now' }), 403, 'FORBIDDEN');
    const stale = expectError(await f.sys.call('PATCH', `/api/v1/views/${id}`, f.alice, { name: 'x' }, { 'if-match': '"7"' }), 412, 'PRECONDITION_FAILED');
    expect(stale.details.current_version).toBe(1);
    const renamed = await f.sys.call('PATCH', `/api/v1/views/${id}`, f.alice, { name: 'Renamed', query: 'assignee = me()' });
    expect(renamed.body).toMatchObject({ name: 'Renamed', query: 'assignee = me()', version: 2 });
    expectError(await f.sys.call('DELETE', `/api/v1/views/${id}`, f.alice, undefined, { 'if-match': '"1"' }), 412, 'PRECONDITION_FAILED');
    expectError(await f.sys.call('DELETE', `/api/v1/views/${id}`, f.bob), 403, 'FORBIDDEN');
    expect((await f.sys.call('DELETE', `/api/v1/views/${id}`, f.alice, undefined, { 'if-match': '"2"' })).status).toBe(204);
    expectError(await f.sys.call('GET', `/api/v1/views/${id}`, f.alice), 404, 'VIEW_NOT_FOUND');

    const feed = await f.sys.call('GET', '/api/v1/events?types=view.created,view.updated,view.deleted', f.bob);
    expect(feed.status, JSON.stringify(feed.body)).toBe(200);
    expect(feed.body.data.map((e: { type: string }) => e.type)).toEqual(['view.created', 'view.updated', 'view.deleted']);
    // an unshared view's events are its owner's alone
    await f.view(f.alice, { name: 'Quiet', query: '' });
    const again = await f.sys.call('GET', '/api/v1/events?types=view.created', f.bob);
    expect(again.body.data).toHaveLength(1);
    const own = await f.sys.call('GET', '/api/v1/events?types=view.created', f.alice);
    expect(own.body.data).toHaveLength(2);
  });

  it('bad views are 400 naming the field or the query position; a board the caller cannot read is 404', async () => {
    await using f = await crew();
    const bad = expectError(await f.view(f.alice, { name: 'x', query: "status = 'todo' AND assignee = currentUser()" }), 400, 'QUERY_UNKNOWN_FUNCTION');
    expect(bad.details).toMatchObject({ position: 31, field: '/query', suggestion: expect.any(String) });
    expectError(await f.view(f.alice, { name: 'x', query: 'app.sprint = activeSprint()' }), 400, 'QUERY_FUNCTION_CONTEXT');
    const shared = expectError(await f.view(f.alice, { name: 'x', query: '', shared: true }), 400, 'VALIDATION_FAILED');
    expect(JSON.stringify(shared)).toContain('/shared');
    expectError(await f.view(f.alice, { name: '', query: '' }), 400, 'VALIDATION_FAILED');
    expectError(await f.view(f.alice, { query: '' }), 400, 'VALIDATION_FAILED');
    expectError(await f.view(f.alice, { name: 'x', query: '', sort: { column: 'nope', direction: 'asc' } }), 400, 'VALIDATION_FAILED');
    expectError(await f.view(f.carol, { name: 'x', query: '', board_id: f.boardId }), 404, 'BOARD_NOT_FOUND');
    const ok = await f.view(f.alice, { name: 'Sprint', query: 'app.sprint = activeSprint()', board_id: f.boardId });
    expect(ok.status, JSON.stringify(ok.body)).toBe(201);
    expect((await f.run(f.alice, ok.body.id)).body.total).toBe(0); // no running sprint: matches nothing
    expectError(await f.sys.call('PATCH', `/api/v1/views/${ok.body.id}`, f.alice, { board_id: '' }), 400, 'QUERY_FUNCTION_CONTEXT');
    expectError(await f.run(f.alice, ok.body.id, { page_size: 0 }), 400, 'VALIDATION_FAILED');
  });
});
