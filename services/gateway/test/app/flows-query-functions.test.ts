import { describe, expect, it } from 'vitest';
import { expectError, system } from './system.js';

/**
 * Query functions through HTTP (docs/query-language.md "Functions"): `me()`, the sprint functions
 * and the period functions on the global query (target and legacy path), the board query, column
 * reads and moves, each resolved for the caller under its access rules.
 */

async function fixture() {
  const sys = await system();
  const alice = await sys.user('alice');
  const bob = await sys.user('bob');
  const post = async (as: typeof alice, url: string, body: Record<string, unknown>) => {
    const res = await sys.call('POST', url, as, body);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body;
  };
  const sprint = async (as: typeof alice, title: string, status = 'todo') =>
    (await post(as, '/api/v1/tasks', { title, status, metadata: { 'app.type': 'sprint' } })).id as string;
  const titles = (res: { status: number; body: { data: Array<{ title: string }> } }) => {
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.data.map((t) => t.title).sort();
  };
  return { sys, alice, bob, post, sprint, titles, [Symbol.asyncDispose]: () => sys[Symbol.asyncDispose]() };
}

describe('query functions through HTTP', () => {
  it('me() is each caller, on the target and the legacy query path', async () => {
    await using f = await fixture();
    await f.post(f.alice, '/api/v1/tasks', { title: 'mine', assignee: f.alice.id });
    await f.post(f.alice, '/api/v1/tasks', { title: 'unassigned' });
    await f.post(f.bob, '/api/v1/tasks', { title: 'bob made it' });
    for (const url of ['/api/v1/tasks/query', '/api/v1/todolist/query']) {
      expect(f.titles(await f.sys.call('POST', url, f.alice, { query: 'assignee = me()' }))).toEqual(['mine']);
      expect(f.titles(await f.sys.call('POST', url, f.bob, { query: 'created_by = me()' }))).toEqual(['bob made it']);
    }
  });

  it("openSprints() / closedSprints() list only the sprints the caller can read; activeSprint('<board>') of an unreadable board is 404", async () => {
    await using f = await fixture();
    const open = await f.sprint(f.alice, 'Open');
    const closed = await f.sprint(f.alice, 'Closed', 'done');
    await f.sprint(f.bob, 'Bob sprint');
    await f.post(f.alice, '/api/v1/tasks', { title: 'in open', metadata: { 'app.sprint': open } });
    await f.post(f.alice, '/api/v1/tasks', { title: 'in closed', metadata: { 'app.sprint': closed } });
    const ask = (as: typeof f.alice, query: string) => f.sys.call('POST', '/api/v1/tasks/query', as, { query });
    expect(f.titles(await ask(f.alice, 'app.sprint IN openSprints()'))).toEqual(['in open']);
    expect(f.titles(await ask(f.alice, 'app.sprint IN closedSprints()'))).toEqual(['in closed']);
    expect(f.titles(await ask(f.alice, "app.type = 'sprint' AND id IN openSprints()"))).toEqual(['Open']);

    const board = await f.post(f.alice, '/api/v1/boards', { name: 'B', board_type: 'private' });
    expect((await f.sys.call('PUT', `/api/v1/boards/${board.id}`, f.alice, { activeSprintId: open })).status).toBe(200);
    expect(f.titles(await ask(f.alice, `app.sprint = activeSprint('${board.id}')`))).toEqual(['in open']);
    // bob cannot read alice's board: the same answer as a board that does not exist
    const hidden = expectError(await ask(f.bob, `app.sprint = activeSprint('${board.id}')`), 404, 'BOARD_NOT_FOUND');
    const missing = expectError(await ask(f.bob, "app.sprint = activeSprint('no-such-board')"), 404, 'BOARD_NOT_FOUND');
    expect(hidden.message.replace(board.id, 'X')).toBe(missing.message.replace('no-such-board', 'X'));
    // the global query runs on no board
    const bare = expectError(await ask(f.alice, "status = 'todo' AND app.sprint = activeSprint()"), 400, 'QUERY_FUNCTION_CONTEXT');
    expect(bare.details.position).toBe(33);
  });

  it('an unknown function is a 400 with its position and the nearest name', async () => {
    await using f = await fixture();
    const body = expectError(await f.sys.call('POST', '/api/v1/tasks/query', f.alice, { query: 'app.sprint = currentSprint()' }), 400, 'QUERY_UNKNOWN_FUNCTION');
    expect(body.details).toMatchObject({ position: 13, suggestion: 'activeSprint()' });
    expect(body.message).toContain('did you mean activeSprint()');
  });

  it('a "My work" column shows each reader their cards, echoes me() in effective_query, and a move into it assigns the mover', async () => {
    await using f = await fixture();
    const columns = [
      { name: 'Backlog', query: "status = 'todo'" },
      { name: 'My work', query: "assignee = me() AND status = 'doing'" },
    ];
    const board = await f.post(f.alice, '/api/v1/boards', { name: 'B', board_type: 'private', columns });
    const myWork = board.columns[1];
    expect(myWork.actions).toContainEqual({ trigger: 'enter', field: 'assignee', operation: 'set', value: 'me()', value_type: 'function', source: 'query' });
    const card = await f.post(f.alice, `/api/v1/boards/${board.id}/tasks`, { title: 'card', column_id: 'col-backlog' });

    const moved = await f.sys.call('POST', `/api/v1/boards/${board.id}/tasks/${card.id}/move`, f.alice, { from_column_id: 'col-backlog', to_column_id: myWork.id });
    expect(moved.status, JSON.stringify(moved.body)).toBe(200);
    expect(moved.body.applied_actions).toContainEqual({ op: 'set', field: 'assignee', to: f.alice.id });

    const read = await f.sys.call('POST', `/api/v1/boards/${board.id}/columns/${myWork.id}/query`, f.alice, {});
    expect(read.status).toBe(200);
    expect(read.body.effective_query).toBe("assignee = me() AND status = 'doing' AND app.type != 'sprint' ORDER BY metadata.order ASC");
    expect(read.body.data.map((c: { title: string }) => c.title)).toEqual(['card']);
    expect(f.titles(await f.sys.call('POST', `/api/v1/boards/${board.id}/query`, f.alice, { query: 'assignee = me()' }))).toEqual(['card']);
    // a card created in the column is its creator's
    const created = await f.post(f.alice, `/api/v1/boards/${board.id}/tasks`, { title: 'new', column_id: myWork.id });
    expect(created).toMatchObject({ assignee: f.alice.id, status: 'doing' });
  });
});

describe('POST /api/v1/tasks/query/validate', () => {
  it('answers 200 with the fault, its position and length, or the canonical text', async () => {
    await using f = await fixture();
    const check = (body: Record<string, unknown>, as = f.alice) => f.sys.call('POST', '/api/v1/tasks/query/validate', as, body);
    const ok = await check({ query: "assignee=me() and status='todo'" });
    expect(ok.status).toBe(200);
    expect(ok.body).toEqual({ valid: true, errors: [], canonical: "assignee = me() AND status = 'todo'" });
    const bad = await check({ query: 'app.sprint = currentSprint()' });
    expect(bad.status).toBe(200);
    expect(bad.body).toEqual({
      valid: false, canonical: null,
      errors: [{ position: 13, length: 13, code: 'QUERY_UNKNOWN_FUNCTION', message: expect.stringContaining('did you mean activeSprint()'), suggestion: 'activeSprint()' }],
    });
    // activeSprint() needs the board the query runs on, one the caller can read
    expect((await check({ query: 'app.sprint = activeSprint()' })).body.errors[0].code).toBe('QUERY_FUNCTION_CONTEXT');
    const board = await f.post(f.alice, '/api/v1/boards', { name: 'B', board_type: 'private' });
    expect((await check({ query: 'app.sprint = activeSprint()', board_id: board.id })).body.valid).toBe(true);
    expectError(await check({ query: 'app.sprint = activeSprint()', board_id: board.id }, f.bob), 404, 'BOARD_NOT_FOUND');
    expectError(await check({}), 400, 'VALIDATION_FAILED');
    expectError(await check({ query: 3 }), 400, 'VALIDATION_FAILED');
  });
});
