import { describe, expect, it } from 'vitest';
import { expectError, system } from './system.js';

/**
 * WIP limits through HTTP (docs/boards.md "WIP limits"): `warn` moves and reports the column over
 * its limit, `block` refuses a move, a dry run and a card create into a full column with 409
 * `WIP_LIMIT_REACHED`; the board keeps the policy; the summary counts the same cards.
 */
const columns = (wip_policy: 'warn' | 'block') => [
  { id: 'todo', name: 'To Do', query: "status = 'todo'" },
  { id: 'doing', name: 'Doing', query: "status = 'doing'", wip_limit: 1, wip_policy },
];

async function fixture(policy: 'warn' | 'block') {
  const sys = await system();
  const alice = await sys.user('alice');
  const board = await sys.call('POST', '/api/v1/boards', alice, { name: 'Flow', board_type: 'private', columns: columns(policy) });
  expect(board.status, JSON.stringify(board.body)).toBe(201);
  expect(board.body.columns[1]).toMatchObject({ wip_limit: 1, wip_policy: policy });
  const boardId: string = board.body.id;
  const card = async (title: string) => (await sys.call('POST', `/api/v1/boards/${boardId}/tasks`, alice, { title, status: 'todo' })).body.id as string;
  const move = (taskId: string, dry_run = false) =>
    sys.call('POST', `/api/v1/boards/${boardId}/tasks/${taskId}/move`, alice, { from_column_id: 'todo', to_column_id: 'doing', ...(dry_run ? { dry_run } : {}) });
  return { sys, alice, boardId, card, move, [Symbol.asyncDispose]: () => sys[Symbol.asyncDispose]() };
}

describe('WIP limits through HTTP', () => {
  it('warn: the second card moves into a column limited to one, and the reply says it is over', async () => {
    await using f = await fixture('warn');
    const [a, b] = [await f.card('a'), await f.card('b')];
    expect((await f.move(a)).body.wip).toEqual({ column_id: 'doing', wip_limit: 1, count: 1, over_limit: false });
    const over = await f.move(b);
    expect(over.status).toBe(200);
    expect(over.body.wip).toEqual({ column_id: 'doing', wip_limit: 1, count: 2, over_limit: true });
    const summary = await f.sys.call('GET', `/api/v1/boards/${f.boardId}/summary`, f.alice);
    expect(summary.body.columns[1]).toMatchObject({ total: 2, wip_limit: 1, over_wip_limit: true });
  });

  it('block: a move, its dry run and a card create into the full column are 409 WIP_LIMIT_REACHED', async () => {
    await using f = await fixture('block');
    const [a, b] = [await f.card('a'), await f.card('b')];
    expect((await f.move(a)).status).toBe(200);
    const refused = expectError(await f.move(b), 409, 'WIP_LIMIT_REACHED');
    expect(refused.details).toEqual({ column_id: 'doing', wip_limit: 1, count: 1 });
    expectError(await f.move(b, true), 409, 'WIP_LIMIT_REACHED');
    expectError(await f.sys.call('POST', `/api/v1/boards/${f.boardId}/tasks`, f.alice, { title: 'c', column_id: 'doing' }), 409, 'WIP_LIMIT_REACHED');
    expect((await f.sys.call('GET', `/api/v1/tasks/${b}`, f.alice)).body.status).toBe('todo');
  });

  it('a board PUT with an unknown policy or a policy without a limit is 400 naming the column field', async () => {
    await using f = await fixture('warn');
    const put = (cols: unknown) => f.sys.call('PUT', `/api/v1/boards/${f.boardId}`, f.alice, { columns: cols });
    const unknown = expectError(await put([{ name: 'Doing', wip_limit: 2, wip_policy: 'stop' }]), 400, 'VALIDATION_FAILED');
    expect(JSON.stringify(unknown)).toContain('wip_policy');
    const noLimit = expectError(await put([{ name: 'Doing', wip_policy: 'block' }]), 400, 'VALIDATION_FAILED');
    expect(noLimit.validationErrors.map((v: { field: string }) => v.field)).toEqual(['/columns/0/wip_policy']);
  });
});
