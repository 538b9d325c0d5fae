import { describe, expect, it } from 'vitest';
import { Collections } from '@app/shared/store';
import { expectError, system } from './system.js';

/**
 * A stored column or view query that cannot run (saved before a limit existed, or written by an
 * older build) answers a 400 naming that column or view, never a 500 for the whole board
 * (docs/query-language.md "Stored queries").
 */
describe('stored queries that cannot run', () => {
  it("a column stored with `created_at >= startOfDay(+8000y)` makes the board read, summary and column read a 400 naming it; the query is refused as it is saved", async () => {
    await using sys = await system();
    const alice = await sys.user('alice');
    const columns = [{ id: 'todo', name: 'To do', query: "status = 'todo'" }, { id: 'far', name: 'Far future', query: 'deadline <= endOfWeek()' }];
    const board = await sys.call('POST', '/api/v1/boards', alice, { name: 'B', board_type: 'private', columns });
    expect(board.status, JSON.stringify(board.body)).toBe(201);
    const refused = await sys.call('PUT', `/api/v1/boards/${board.body.id}`, alice, {
      columns: [columns[0], { ...columns[1], query: 'created_at >= startOfDay(+8000y)' }],
    });
    expectError(refused, 400, 'QUERY_SYNTAX');
    // as an older build could have stored it
    await sys.store.collection(Collections.boards).updateOne(
      { _id: board.body.id },
      { $set: { 'columns.1.query': 'created_at >= startOfDay(+8000y)' } },
    );
    for (const url of [`/api/v1/boards/${board.body.id}/tasks`, `/api/v1/boards/${board.body.id}/summary`, `/api/v1/boards/${board.body.id}/columns/far/query`]) {
      const res = await sys.call(url.endsWith('/query') ? 'POST' : 'GET', url, alice, url.endsWith('/query') ? {} : undefined);
      const body = expectError(res, 400, 'QUERY_SYNTAX');
      expect(body.message).toContain('Column "Far future" (far)');
    }
    // the other column still reads
    expect((await sys.call('POST', `/api/v1/boards/${board.body.id}/columns/todo/query`, alice, {})).status).toBe(200);
  });

  it('a view stored with `endOfWeek(+999999w)` answers a 400 naming the view', async () => {
    await using sys = await system();
    const alice = await sys.user('alice');
    const created = await sys.call('POST', '/api/v1/views', alice, { name: 'Soon', query: 'deadline <= endOfWeek()' });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expectError(await sys.call('PATCH', `/api/v1/views/${created.body.id}`, alice, { query: 'deadline <= endOfWeek(+999999w)' }), 400, 'QUERY_SYNTAX');
    await sys.store.collection(Collections.views).updateOne({ _id: created.body.id }, { $set: { query: 'deadline <= endOfWeek(+999999w)' } });
    const body = expectError(await sys.call('POST', `/api/v1/views/${created.body.id}/query`, alice, {}), 400, 'QUERY_SYNTAX');
    expect(body.message).toContain('View "Soon"');
  });
});
