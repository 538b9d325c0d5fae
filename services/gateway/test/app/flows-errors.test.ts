import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectDeprecated, expectError, system, type Answer, type System, type User } from './system.js';

/**
 * Error answers through HTTP, gateway + all services (docs/architecture.md §4, §6, §9; docs/http.md "Error
 * body"): every error is `{code, message, traceId, details?, validationErrors?}` with no stack,
 * bad input names its field or query position, and nothing is written.
 */

let sys: System;
let alice: User;
let boardId: string;

beforeAll(async () => {
  sys = await system();
  alice = await sys.user('alice');
  const board = await sys.call('POST', '/api/v1/boards', alice, { name: 'Errors', board_type: 'private' });
  boardId = board.body.id;
});
afterAll(async () => {
  await sys?.[Symbol.asyncDispose]();
});

/** Asserts a 400 `VALIDATION_FAILED` whose validationErrors name exactly `fields` (any order); returns the body. */
function expectInvalid(res: Answer, ...fields: string[]): any {
  const body = expectError(res, 400, 'VALIDATION_FAILED');
  expect(body.validationErrors.map((v: { field: string }) => v.field).sort()).toEqual([...fields].sort());
  return body;
}

/** The number of tasks alice can see: to check that a refused request wrote nothing. */
async function taskCount(): Promise<number> {
  return (await sys.call('POST', '/api/v1/tasks/query', alice, {})).body.total;
}

describe('query errors through HTTP', () => {
  it('a query syntax error is 400 QUERY_SYNTAX with details.position, on every query gate', async () => {
    const global = expectError(await sys.call('POST', '/api/v1/tasks/query', alice, { query: "status = 'todo' AND" }), 400, 'QUERY_SYNTAX');
    expect(global.details.position).toBe(19);
    // the legacy path: same code and status, the position folded into a string (docs/errors.md)
    const legacy = await sys.call('POST', '/api/v1/todolist/query', alice, { query: 'status = = 1' });
    expect(expectError(legacy, 400, 'QUERY_SYNTAX')).toMatchObject({ position: '9' });
    expectDeprecated(legacy, '/api/v1/tasks/query');

    const board = expectError(await sys.call('POST', `/api/v1/boards/${boardId}/query`, alice, { query: "tags CONTAINS ('a'" }), 400, 'QUERY_SYNTAX');
    expect(board.details.position).toEqual(expect.any(Number));

    // a column read's filter: the position is an offset into the filter text
    const filter = expectError(
      await sys.call('POST', `/api/v1/boards/${boardId}/columns/col-to-do/query`, alice, { filter: "title = 'x' AND AND" }),
      400,
      'QUERY_SYNTAX',
    );
    expect(filter.details).toMatchObject({ position: 16, part: 'filter' });
    expect(filter.message).toContain('AND');
  });

  it('an unknown field is 400 QUERY_UNKNOWN_FIELD naming it, its position and a suggestion', async () => {
    const res = expectError(await sys.call('POST', '/api/v1/tasks/query', alice, { query: "stauts = 'todo'" }), 400, 'QUERY_UNKNOWN_FIELD');
    expect(res.details).toMatchObject({ field: 'stauts', position: 0, suggestion: 'status' });
  });

  it('an unknown sort column is 400 VALIDATION_FAILED naming /sort/column', async () => {
    for (const column of ['bogus', 'metadata.']) {
      const res = await sys.call('POST', '/api/v1/tasks/query', alice, { sort: { column, direction: 'asc' } });
      expectInvalid(res, '/sort/column');
    }
    const ok = await sys.call('POST', '/api/v1/tasks/query', alice, { sort: { column: 'cf.priority', direction: 'desc' } });
    expect(ok.status).toBe(200);
  });

  it('a bad column query on a board write names the column and writes nothing', async () => {
    const res = await sys.call('POST', '/api/v1/boards', alice, {
      name: 'Broken', board_type: 'private', columns: [{ name: 'ok', query: "status = 'a'" }, { name: 'bad', query: "status = 'b' OR" }],
    });
    const body = expectError(res, 400, 'QUERY_SYNTAX');
    expect(body.details).toMatchObject({ field: '/columns/1/query', position: 15 });
    const list = await sys.call('GET', '/api/v1/boards', alice);
    expect(list.body.owned_boards.map((b: { name: string }) => b.name)).toEqual(['Errors']);
  });
});

describe('request validation through HTTP', () => {
  it('a wrong body type is 400 VALIDATION_FAILED naming the field; nothing is written', async () => {
    const before = await taskCount();
    const res = await sys.call('POST', '/api/v1/tasks', alice, { title: 5 });
    const body = expectError(res, 400, 'VALIDATION_FAILED');
    expect(body.details).toMatchObject({ in: 'body' });
    expect(body.validationErrors).toEqual([{ field: '/title', code: 'type', message: expect.any(String) }]);
    expect(await taskCount()).toBe(before);

    const card = await sys.call('POST', `/api/v1/boards/${boardId}/tasks`, alice, { title: 'ok', tags: 'not-a-list', metadata: [] });
    expectInvalid(card, '/metadata', '/tags');
    const move = await sys.call('POST', `/api/v1/boards/${boardId}/tasks/x/move`, alice, { from_column_id: 'col-to-do', to_column_id: 7, dry_run: 'yes' });
    expectInvalid(move, '/dry_run', '/to_column_id');
    const patch = await sys.call('POST', '/api/v1/todolist/some-id', alice, { status: ['done'] });
    expect(expectError(patch, 400, 'VALIDATION_FAILED')).toMatchObject({ field: '/status', errors: expect.stringMatching(/^\/status: /) });
    expectDeprecated(patch, '/api/v1/tasks/some-id');
  });

  it('a missing required field or a bad enum is named', async () => {
    const missing = await sys.call('POST', '/api/v1/boards', alice, {});
    expectInvalid(missing, '/board_type', '/name');
    const noBody = await sys.call('POST', '/api/v1/tasks', alice);
    expectInvalid(noBody, '/title');
    const badEnum = await sys.call('POST', '/api/v1/boards', alice, { name: 'x', board_type: 'public' });
    expectInvalid(badEnum, '/board_type');
    const share = await sys.call('POST', `/api/v1/boards/${boardId}/share`, alice, { group_id: 'g', permission: 'w' });
    expectInvalid(share, '/permission');
    const blank = await sys.call('POST', '/api/v1/tasks', alice, { title: '   ' });
    expectInvalid(blank, '/title');
  });

  it('page sizes outside 1..200 and pages below 1 are refused, never clamped', async () => {
    for (const pageSize of [0, 201, 2.5]) {
      const res = await sys.call('POST', '/api/v1/tasks/query', alice, { pageSize });
      expectInvalid(res, '/pageSize');
    }
    expect((await sys.call('POST', '/api/v1/tasks/query', alice, { pageSize: 200 })).status).toBe(200);
    expect((await sys.call('POST', '/api/v1/tasks/query', alice, { pageSize: 1 })).status).toBe(200);
    const page0 = await sys.call('POST', '/api/v1/tasks/query', alice, { page: 0 });
    expectInvalid(page0, '/page');
    const board = await sys.call('POST', `/api/v1/boards/${boardId}/query`, alice, { page_size: 201 });
    expectInvalid(board, '/page_size');
    const column = await sys.call('POST', `/api/v1/boards/${boardId}/columns/col-to-do/query`, alice, { page_size: 0 });
    expectInvalid(column, '/page_size');
    const summary = await sys.call('GET', `/api/v1/boards/${boardId}/summary?preview=-1`, alice);
    expect(expectInvalid(summary, '/preview').details).toEqual({ in: 'querystring' });
  });

  it('a body over 1 MiB is 413 and writes nothing', async () => {
    const before = await taskCount();
    const res = await sys.call('POST', '/api/v1/tasks', alice, { title: 'huge', description: 'x'.repeat(1024 * 1024) });
    expectError(res, 413, 'PAYLOAD_TOO_LARGE');
    expect(await taskCount()).toBe(before);
  });

  it('malformed JSON and non-JSON bodies are 400 BAD_REQUEST', async () => {
    const send = async (payload: string, contentType: string): Promise<Answer> => {
      const res = await sys.app.inject({ method: 'POST', url: '/api/v1/tasks', headers: { ...alice.headers, 'content-type': contentType }, payload });
      return { status: res.statusCode, headers: res.headers, body: res.json() };
    };
    expectError(await send('{"title": "x",', 'application/json'), 400, 'BAD_REQUEST');
    expectError(await send('{"title": "x"}', 'text/plain'), 400, 'BAD_REQUEST');
    expectError(await send('{"__proto__": {"admin": true}, "title": "x"}', 'application/json'), 400, 'BAD_REQUEST');
  });
});

describe('routing and auth errors through HTTP', () => {
  it('an unknown route or verb is 404 NOT_FOUND', async () => {
    expectError(await sys.call('GET', '/api/v1/nothing-here', alice), 404, 'NOT_FOUND');
    expectError(await sys.call('GET', '/api/v2/tasks', alice), 404, 'NOT_FOUND');
    expectError(await sys.call('PATCH', `/api/v1/boards/${boardId}`, alice, { name: 'x' }), 404, 'NOT_FOUND');
    // draft operations have no legacy path
    expectError(await sys.call('GET', `/api/v1/kanban/boards/${boardId}/summary`, alice), 404, 'NOT_FOUND');
  });

  it('an /api/v1 route without a valid token is 401, and nothing is revealed', async () => {
    const cases: Array<Record<string, string>> = [{}, { authorization: 'Bearer' }, { authorization: 'Bearer not.a.jwt' }, { authorization: alice.headers.authorization!.slice(7) }];
    for (const headers of cases) {
      for (const [method, url] of [['GET', `/api/v1/boards/${boardId}`], ['POST', '/api/v1/tasks/query'], ['POST', `/api/v1/kanban/boards/${boardId}/query`]] as const) {
        const res = await sys.call(method, url, { id: '', name: '', headers }, method === 'POST' ? {} : undefined);
        expectError(res, 401, 'UNAUTHORIZED');
      }
    }
  });

  it('a path id of any length is authenticated first (401), then answers 404 when it is no task, board or webhook', async () => {
    const anonymous = { id: '', name: '', headers: {} };
    for (const length of [101, 1_000, 8_000]) {
      const id = 'x'.repeat(length);
      expectError(await sys.call('GET', `/api/v1/tasks/${id}`, anonymous), 401, 'UNAUTHORIZED');
      expectError(await sys.call('GET', `/api/v1/boards/${id}`, anonymous), 401, 'UNAUTHORIZED');
      expectError(await sys.call('GET', `/api/v1/tasks/${id}`, alice), 404, 'TASK_NOT_FOUND');
      expectError(await sys.call('GET', `/api/v1/todolist/${id}`, alice), 404, 'TASK_NOT_FOUND');
      expectError(await sys.call('PATCH', `/api/v1/tasks/${id}`, alice, { title: 'x' }), 404, 'TASK_NOT_FOUND');
      expectError(await sys.call('GET', `/api/v1/boards/${id}`, alice), 404, 'BOARD_NOT_FOUND');
      expectError(await sys.call('GET', `/api/v1/webhooks/${id}`, alice), 404, 'WEBHOOK_NOT_FOUND');
    }
  });

  it('every error carries the request id as traceId and no internal detail', async () => {
    const res = await sys.app.inject({ method: 'GET', url: '/api/v1/boards/unknown-board', headers: { ...alice.headers, 'x-request-id': 'flow-trace-7' } });
    expect(res.statusCode).toBe(404);
    expect(res.headers['x-request-id']).toBe('flow-trace-7');
    expect(res.json()).toEqual({ code: 'BOARD_NOT_FOUND', message: expect.any(String), details: { boardId: 'unknown-board' }, traceId: 'flow-trace-7' });
  });

  it('replaces an x-request-id of 8,000 characters, or with a control character, by a generated UUID (echoed and the traceId)', async () => {
    const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
    for (const id of ['r'.repeat(8_000), 'trace\u0001x', 'a\u007fb']) {
      const res = await sys.app.inject({ method: 'GET', url: '/api/v1/boards/unknown-board', headers: { ...alice.headers, 'x-request-id': id } });
      expect(res.statusCode).toBe(404);
      expect(res.headers['x-request-id']).toMatch(uuid);
      expect(res.json().traceId).toBe(res.headers['x-request-id']);
    }
    const longest = 'r'.repeat(128);
    const kept = await sys.app.inject({ method: 'GET', url: '/api/v1/boards/unknown-board', headers: { ...alice.headers, 'x-request-id': longest } });
    expect(kept.headers['x-request-id']).toBe(longest);
  });

  it('the paths of ud\'s Swagger answer the same catalogue error in the legacy shape: every detail a string', async () => {
    const target = await sys.call('GET', '/api/v1/boards/unknown-board', alice);
    const legacy = await sys.call('GET', '/api/v1/kanban/boards/unknown-board', alice);
    expect(target.status).toBe(404);
    expect(legacy.status).toBe(404);
    expect(target.body).toEqual({ code: 'BOARD_NOT_FOUND', message: 'Board not found', details: { boardId: 'unknown-board' }, traceId: expect.any(String) });
    expect(legacy.body).toEqual({ code: 'BOARD_NOT_FOUND', message: 'Board not found', boardId: 'unknown-board', traceId: expect.any(String) });

    const invalid = await sys.call('POST', '/api/v1/kanban/boards', alice, { name: 7 });
    expect(invalid.status).toBe(400);
    expect(invalid.body).toEqual({
      code: 'VALIDATION_FAILED', message: expect.stringContaining('body/'), traceId: expect.any(String), in: 'body',
      field: expect.stringMatching(/^\/(board_type|name)$/), errors: expect.stringMatching(/\/board_type: .+; \/name: |\/name: .+; \/board_type: /),
    });
    for (const res of [legacy, invalid]) for (const v of Object.values(res.body)) expect(typeof v).toBe('string');

    // a route that is not there, the auth paths under /api/v1, and a missing token: the legacy shape too
    const unknown = await sys.call('GET', '/api/v1/todolist/a/b/c', alice);
    expect(unknown.body).toEqual({ code: 'NOT_FOUND', message: 'No route GET /api/v1/todolist/a/b/c', traceId: expect.any(String) });
    const login = await sys.call('POST', '/api/v1/auth/v2/login', undefined, { username: 'alice' });
    expect(login.body).toMatchObject({ code: 'VALIDATION_FAILED', field: '/password' });
    expect(login.body).not.toHaveProperty('validationErrors');
    const anonymous = await sys.call('GET', `/api/v1/kanban/boards/${boardId}`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toEqual({ code: 'UNAUTHORIZED', message: expect.any(String), traceId: expect.any(String) });
  });

  it('a service that is down is 503 SERVICE_UNAVAILABLE, a store that is down 503 STORE_UNAVAILABLE; the rest keeps answering', async () => {
    await using broken = await system();
    const bob = await broken.user('bob');
    await broken.stop('query');
    expectError(await broken.call('POST', '/api/v1/tasks/query', bob, {}), 503, 'SERVICE_UNAVAILABLE');
    const created = await broken.call('POST', '/api/v1/tasks', bob, { title: 'still works' });
    expect(created.status).toBe(201);
    await broken.store.close();
    expectError(await broken.call('POST', '/api/v1/tasks', bob, { title: 'lost' }), 503, 'STORE_UNAVAILABLE');
    expectError(await broken.call('GET', `/api/v1/tasks/${created.body.id}`, bob), 503, 'STORE_UNAVAILABLE');
  });
});
