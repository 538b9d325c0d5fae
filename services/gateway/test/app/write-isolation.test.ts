import { describe, expect, it } from 'vitest';
import { Collections } from '@app/shared/store';
import { commonWrites, type CommittedTransaction } from '@app/shared/testing';
import { system, type System, type User } from './system.js';

/**
 * Writes to different tasks never write a common document inside their transactions
 * (docs/concurrency.md "The events outbox"): on MongoDB two transactions that write the same
 * document conflict, and one of them is rerun, so a document every write touched (a counter
 * numbering the events) would serialize every write. The test store records the documents each
 * committed transaction wrote (`TransactionRulesStore`); each pair below is two writes of one
 * kind to different tasks (or sprints, on different boards), and their records must not meet.
 */

const COLUMNS = [
  { name: 'To Do', query: "status = 'todo'" },
  { name: 'Doing', query: "status = 'doing'" },
  { name: 'Done', query: "status = 'done'" },
];

/** The committed transactions of one HTTP call, which must answer `status`. */
async function wrote(sys: System, status: number, call: () => Promise<{ status: number; body: unknown }>): Promise<CommittedTransaction[]> {
  let answer: { status: number; body: unknown } | undefined;
  const txns = await sys.rules.transactionsDuring(async () => {
    answer = await call();
  });
  expect(answer!.status, JSON.stringify(answer!.body)).toBe(status);
  expect(txns.length).toBeGreaterThan(0);
  // every write records its events in the outbox: the record is not empty, and it is this write's own
  expect(txns.flatMap((t) => t.writes).some((w) => w.collection === Collections.outbox)).toBe(true);
  return txns;
}

/** A board with the three columns, pointing at a started sprint that has one finished and one open member. */
async function sprintBoard(sys: System, alice: User, name: string) {
  const board = await sys.call('POST', '/api/v1/boards', alice, { name, board_type: 'private', columns: COLUMNS });
  expect(board.status, JSON.stringify(board.body)).toBe(201);
  const sprint = await sys.call('POST', `/api/v1/boards/${board.body.id}/sprints`, alice, { title: `${name} sprint`, start: true });
  expect(sprint.status, JSON.stringify(sprint.body)).toBe(201);
  for (const status of ['done', 'todo']) {
    const card = await sys.call('POST', `/api/v1/boards/${board.body.id}/tasks`, alice, { title: `${name} ${status}`, status, metadata: { 'app.sprint': sprint.body.id } });
    expect(card.status, JSON.stringify(card.body)).toBe(201);
  }
  return { boardId: board.body.id as string, sprintId: sprint.body.id as string };
}

describe('writes to different tasks share no document', () => {
  it('create, PATCH, metadata set and delete, folder move, note, card create and move, claim and lease complete, batch create and PATCH, delete, close-sprint', async () => {
    await using sys = await system();
    const alice = await sys.user('alice');
    const board = await sys.call('POST', '/api/v1/boards', alice, { name: 'Shared board', board_type: 'private', columns: COLUMNS });
    const boardId = board.body.id as string;
    const pair = async (label: string, status: number, a: () => Promise<{ status: number; body: any }>, b: () => Promise<{ status: number; body: any }>) => {
      const first = await wrote(sys, status, a);
      const second = await wrote(sys, status, b);
      expect(commonWrites(first, second), label).toEqual([]);
    };
    const task = async (title: string) => (await sys.call('POST', '/api/v1/tasks', alice, { title, status: 'todo' })).body.id as string;
    const card = async (title: string) => (await sys.call('POST', `/api/v1/boards/${boardId}/tasks`, alice, { title, status: 'todo' })).body.id as string;

    await pair('create', 201, () => sys.call('POST', '/api/v1/tasks', alice, { title: 'one' }), () => sys.call('POST', '/api/v1/tasks', alice, { title: 'two' }));
    const [t1, t2] = [await task('t1'), await task('t2')];
    await pair('PATCH', 200, () => sys.call('PATCH', `/api/v1/tasks/${t1}`, alice, { title: 't1 again' }), () => sys.call('PATCH', `/api/v1/tasks/${t2}`, alice, { title: 't2 again' }));
    await pair(
      'metadata set', 200,
      () => sys.call('PATCH', `/api/v1/tasks/${t1}/metadata`, alice, { key: 'app.points', value: 3 }),
      () => sys.call('PATCH', `/api/v1/tasks/${t2}/metadata`, alice, { key: 'app.points', value: 5 }),
    );
    await pair(
      'metadata delete', 200,
      () => sys.call('DELETE', `/api/v1/tasks/${t1}/metadata/app.points`, alice),
      () => sys.call('DELETE', `/api/v1/tasks/${t2}/metadata/app.points`, alice),
    );
    await pair('folder move', 200, () => sys.call('PATCH', `/api/v1/tasks/${t1}/move`, alice, { path: '/a' }), () => sys.call('PATCH', `/api/v1/tasks/${t2}/move`, alice, { path: '/b' }));
    await pair('note', 201, () => sys.call('POST', `/api/v1/tasks/${t1}/notes`, alice, { content: 'n1' }), () => sys.call('POST', `/api/v1/tasks/${t2}/notes`, alice, { content: 'n2' }));
    await pair(
      'card create on one board', 201,
      () => sys.call('POST', `/api/v1/boards/${boardId}/tasks`, alice, { title: 'c1' }),
      () => sys.call('POST', `/api/v1/boards/${boardId}/tasks`, alice, { title: 'c2' }),
    );
    const [c1, c2] = [await card('c1'), await card('c2')];
    const move = (id: string) => () => sys.call('POST', `/api/v1/boards/${boardId}/tasks/${id}/move`, alice, { from_column_id: 'col-to-do', to_column_id: 'col-doing' });
    await pair('card move on one board', 200, move(c1), move(c2));
    const claims: Array<{ lease_id: string; task: { id: string } }> = [];
    const claim = () => async () => {
      const res = await sys.call('POST', `/api/v1/boards/${boardId}/columns/col-to-do/claim`, alice, { lease_seconds: 60 });
      claims.push(res.body);
      return res;
    };
    await pair('claim on one column', 200, claim(), claim());
    const lease = (i: number, op: string, body: Record<string, unknown> = {}) => () =>
      sys.call('POST', `/api/v1/tasks/${claims[i]!.task.id}/lease/${op}`, alice, { lease_id: claims[i]!.lease_id, ...body });
    await pair('lease complete into another column', 200, lease(0, 'complete', { to_column_id: 'col-doing' }), lease(1, 'complete', { to_column_id: 'col-doing' }));
    await pair(
      'batch create', 200,
      () => sys.call('POST', '/api/v1/tasks/batch', alice, { tasks: [{ title: 'b1' }, { title: 'b2' }] }),
      () => sys.call('POST', '/api/v1/tasks/batch', alice, { tasks: [{ title: 'b3' }, { title: 'b4' }] }),
    );
    await pair(
      'batch PATCH', 200,
      () => sys.call('PATCH', '/api/v1/tasks/batch', alice, { updates: [{ id: t1, changes: { status: 'doing' } }] }),
      () => sys.call('PATCH', '/api/v1/tasks/batch', alice, { updates: [{ id: t2, changes: { status: 'doing' } }] }),
    );
    const [s1, s2] = [await sprintBoard(sys, alice, 'Alpha'), await sprintBoard(sys, alice, 'Beta')];
    await pair(
      'close-sprint', 200,
      () => sys.call('POST', `/api/v1/tasks/${s1.sprintId}/close-sprint`, alice, { rollover: 'backlog' }),
      () => sys.call('POST', `/api/v1/tasks/${s2.sprintId}/close-sprint`, alice, { rollover: 'backlog' }),
    );
    await pair('delete', 204, () => sys.call('DELETE', `/api/v1/tasks/${t1}`, alice), () => sys.call('DELETE', `/api/v1/tasks/${t2}`, alice));
  });
});
