import { describe, expect, it } from 'vitest';
import { expectError, system, type Answer, type System, type User } from './system.js';

/**
 * Versions and conditional requests through HTTP: every write of one task or board
 * answers an increasing `ETag`, a stale `If-Match` is 412 with `details.current_version` and
 * nothing written, `If-Match: *` means "exists", and GET answers `If-None-Match` with 304.
 */

const COLUMNS = [
  { name: 'To Do', query: "status = 'todo'" },
  { name: 'Doing', query: "status = 'doing'" },
];

async function fixture() {
  const sys = await system();
  const alice = await sys.user('alice');
  const task = await sys.call('POST', '/api/v1/tasks', alice, { title: 'versioned', status: 'todo', metadata: { 'cf.size': 'L' } });
  expect(task.status).toBe(201);
  return { sys, alice, task, [Symbol.asyncDispose]: () => sys[Symbol.asyncDispose]() };
}

const etag = (res: Answer) => res.headers.etag as string | undefined;

/** A write of one task or board: how to send it (given an If-Match header) and how to read the resource back. */
interface WriteCase {
  name: string;
  /** Creates what the write needs; returns the write and the read of the written resource. */
  setup(sys: System, u: User): Promise<{ write: (h: Record<string, string>) => Promise<Answer>; read: () => Promise<Answer> }>;
}

const newTask = async (sys: System, u: User, body: Record<string, unknown> = {}) =>
  (await sys.call('POST', '/api/v1/tasks', u, { title: 't', status: 'todo', metadata: { k: 1 }, ...body })).body.id as string;
const newBoard = async (sys: System, u: User) =>
  (await sys.call('POST', '/api/v1/boards', u, { name: 'B', board_type: 'shared', columns: COLUMNS })).body.id as string;
const readTask = (sys: System, u: User, id: string) => () => sys.call('GET', `/api/v1/tasks/${id}`, u);
const readBoard = (sys: System, u: User, id: string) => () => sys.call('GET', `/api/v1/boards/${id}`, u);

const cases: WriteCase[] = [
  { name: 'PATCH task', setup: async (sys, u) => { const id = await newTask(sys, u); return { write: (h) => sys.call('PATCH', `/api/v1/tasks/${id}`, u, { title: 'x' }, h), read: readTask(sys, u, id) }; } },
  { name: 'legacy POST task update', setup: async (sys, u) => { const id = await newTask(sys, u); return { write: (h) => sys.call('POST', `/api/v1/todolist/${id}`, u, { title: 'x' }, h), read: readTask(sys, u, id) }; } },
  { name: 'PATCH metadata', setup: async (sys, u) => { const id = await newTask(sys, u); return { write: (h) => sys.call('PATCH', `/api/v1/tasks/${id}/metadata`, u, { key: 'k', value: 2 }, h), read: readTask(sys, u, id) }; } },
  { name: 'DELETE metadata key', setup: async (sys, u) => { const id = await newTask(sys, u); return { write: (h) => sys.call('DELETE', `/api/v1/tasks/${id}/metadata/k`, u, undefined, h), read: readTask(sys, u, id) }; } },
  { name: 'folder move', setup: async (sys, u) => { const id = await newTask(sys, u); return { write: (h) => sys.call('PATCH', `/api/v1/tasks/${id}/move`, u, { path: '/a' }, h), read: readTask(sys, u, id) }; } },
  {
    name: 'card move',
    setup: async (sys, u) => {
      const boardId = await newBoard(sys, u);
      const id = (await sys.call('POST', `/api/v1/boards/${boardId}/tasks`, u, { title: 'card', status: 'todo' })).body.id as string;
      // moves the card to the other column, wherever it is
      const write = async (h: Record<string, string>) => {
        const todo = (await sys.call('GET', `/api/v1/tasks/${id}`, u)).body.status === 'todo';
        const [from_column_id, to_column_id] = todo ? ['col-to-do', 'col-doing'] : ['col-doing', 'col-to-do'];
        return sys.call('POST', `/api/v1/boards/${boardId}/tasks/${id}/move`, u, { from_column_id, to_column_id }, h);
      };
      return { write, read: readTask(sys, u, id) };
    },
  },
  { name: 'PUT board', setup: async (sys, u) => { const id = await newBoard(sys, u); return { write: (h) => sys.call('PUT', `/api/v1/boards/${id}`, u, { name: 'renamed' }, h), read: readBoard(sys, u, id) }; } },
  {
    name: 'share board',
    setup: async (sys, u) => {
      const id = await newBoard(sys, u);
      const group = (await sys.call('POST', '/api/v1/groups', u, { name: 'g' })).body.id as string;
      return { write: (h) => sys.call('POST', `/api/v1/boards/${id}/share`, u, { group_id: group, permission: 'rw' }, h), read: readBoard(sys, u, id) };
    },
  },
  { name: 'unshare board', setup: async (sys, u) => { const id = await newBoard(sys, u); return { write: (h) => sys.call('DELETE', `/api/v1/boards/${id}/share`, u, undefined, h), read: readBoard(sys, u, id) }; } },
];

describe('versions, ETag and If-Match on every write of one task or board', () => {
  for (const c of cases) {
    it(`${c.name}: ETag increases, a stale If-Match is 412 with nothing written, the current one writes`, async () => {
      await using f = await fixture();
      const { write, read } = await c.setup(f.sys, f.alice);
      const before = await read();
      expect(etag(before)).toBe(`"${before.body.version}"`);
      const v = before.body.version as number;

      const stale = await write({ 'if-match': `"${v + 7}"` });
      // legacy paths fold details into top-level strings (docs/errors.md)
      const refused = expectError(stale, 412, 'PRECONDITION_FAILED');
      if (c.name.startsWith('legacy')) expect(refused).toMatchObject({ current_version: String(v) });
      else expect(refused.details).toMatchObject({ current_version: v });
      expect((await read()).body).toEqual(before.body);

      const ok = await write({ 'if-match': `"${v + 7}", "${v}"` });
      expect(ok.status, JSON.stringify(ok.body)).toBeLessThan(300);
      if (ok.status !== 204) expect(etag(ok)).toBe(`"${v + 1}"`);
      const after = await read();
      expect(after.body.version).toBe(v + 1);
      expect(etag(after)).toBe(`"${v + 1}"`);
      // the version just replaced is stale now
      expectError(await write({ 'if-match': `"${v}"` }), 412, 'PRECONDITION_FAILED');
    });
  }

  it('DELETE task and DELETE board: 412 on a stale If-Match (still there), 204 on the current one', async () => {
    await using f = await fixture();
    const { sys, alice } = f;
    const taskId = await newTask(sys, alice);
    expectError(await sys.call('DELETE', `/api/v1/tasks/${taskId}`, alice, undefined, { 'if-match': '"2"' }), 412, 'PRECONDITION_FAILED');
    expect((await sys.call('GET', `/api/v1/tasks/${taskId}`, alice)).status).toBe(200);
    expect((await sys.call('DELETE', `/api/v1/tasks/${taskId}`, alice, undefined, { 'if-match': '"1"' })).status).toBe(204);
    expect((await sys.call('GET', `/api/v1/tasks/${taskId}`, alice)).status).toBe(404);

    const boardId = await newBoard(sys, alice);
    expectError(await sys.call('DELETE', `/api/v1/boards/${boardId}`, alice, undefined, { 'if-match': 'W/"1"' }), 412, 'PRECONDITION_FAILED');
    expect((await sys.call('GET', `/api/v1/boards/${boardId}`, alice)).status).toBe(200);
    expect((await sys.call('DELETE', `/api/v1/boards/${boardId}`, alice, undefined, { 'if-match': '*' })).status).toBe(204);
    expect((await sys.call('GET', `/api/v1/boards/${boardId}`, alice)).status).toBe(404);
  });

  it('If-Match: * writes when the task exists; on a missing task the answer stays 404', async () => {
    await using f = await fixture();
    const ok = await f.sys.call('PATCH', `/api/v1/tasks/${f.task.body.id}`, f.alice, { status: 'doing' }, { 'if-match': '*' });
    expect(ok.status).toBe(200);
    expect(ok.body.version).toBe(2);
    expectError(await f.sys.call('PATCH', '/api/v1/tasks/7d0e2b52-4a8e-4a5e-9e57-000000000000', f.alice, { status: 'x' }, { 'if-match': '*' }), 404, 'TASK_NOT_FOUND');
  });

  it('a malformed If-Match is 400 naming the header', async () => {
    await using f = await fixture();
    const res = await f.sys.call('PATCH', `/api/v1/tasks/${f.task.body.id}`, f.alice, { status: 'doing' }, { 'if-match': '3' });
    expect(expectError(res, 400, 'VALIDATION_FAILED').validationErrors[0].field).toMatch(/if-match/);
    expect((await f.sys.call('GET', `/api/v1/tasks/${f.task.body.id}`, f.alice)).body.version).toBe(1);
  });

  it('create answers version 1 with its ETag; without If-Match a write goes ahead as before', async () => {
    await using f = await fixture();
    expect(f.task.body.version).toBe(1);
    expect(etag(f.task)).toBe('"1"');
    for (let i = 2; i <= 4; i++) {
      const res = await f.sys.call('PATCH', `/api/v1/tasks/${f.task.body.id}`, f.alice, { title: `v${i}` });
      expect([res.body.version, etag(res)]).toEqual([i, `"${i}"`]);
    }
  });
});

describe('If-None-Match on GET task and GET board', () => {
  it('answers 304 with no body while unchanged, 200 with the new ETag after a write', async () => {
    await using f = await fixture();
    const { sys, alice } = f;
    const id = f.task.body.id as string;
    const first = await sys.call('GET', `/api/v1/tasks/${id}`, alice);
    const not = await sys.call('GET', `/api/v1/tasks/${id}`, alice, undefined, { 'if-none-match': first.headers.etag as string });
    expect(not.status).toBe(304);
    expect(not.body).toBeUndefined();
    expect(not.headers.etag).toBe('"1"');
    expect((await sys.call('GET', `/api/v1/tasks/${id}`, alice, undefined, { 'if-none-match': 'W/"1", "9"' })).status).toBe(304);
    await sys.call('PATCH', `/api/v1/tasks/${id}`, alice, { title: 'changed' });
    const changed = await sys.call('GET', `/api/v1/tasks/${id}`, alice, undefined, { 'if-none-match': '"1"' });
    expect([changed.status, changed.headers.etag, changed.body.title]).toEqual([200, '"2"', 'changed']);

    const boardId = await newBoard(sys, alice);
    const board = await sys.call('GET', `/api/v1/boards/${boardId}`, alice);
    expect(board.headers.etag).toBe('"1"');
    expect((await sys.call('GET', `/api/v1/boards/${boardId}`, alice, undefined, { 'if-none-match': '"1"' })).status).toBe(304);
    await sys.call('PUT', `/api/v1/boards/${boardId}`, alice, { name: 'again' });
    expect((await sys.call('GET', `/api/v1/boards/${boardId}`, alice, undefined, { 'if-none-match': '"1"' })).status).toBe(200);
    // a reader who may not see the board still gets 404, whatever it sends
    const bob = await sys.user('bob');
    expectError(await sys.call('GET', `/api/v1/boards/${boardId}`, bob, undefined, { 'if-none-match': '*' }), 404, 'BOARD_NOT_FOUND');
  });

  it('a task stored without a version (older data) reads as version 1 and its first change makes it 2', async () => {
    await using f = await fixture();
    const id = f.task.body.id as string;
    await f.sys.store.collection('tasks').updateOne({ _id: id }, { $unset: { version: '' } });
    const read = await f.sys.call('GET', `/api/v1/tasks/${id}`, f.alice);
    expect([read.body.version, read.headers.etag]).toEqual([1, '"1"']);
    const res = await f.sys.call('PATCH', `/api/v1/tasks/${id}`, f.alice, { title: 'migrated' }, { 'if-match': '"1"' });
    expect([res.status, res.body.version]).toEqual([200, 2]);
  });
});
