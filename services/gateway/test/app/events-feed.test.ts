import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sweepEvents } from '@app/shared/events';
import { aBoard, aGroup, appendTestEvents, aTask, insert } from '@app/shared/testing';
import { expectError, NOW, system, type System, type User } from './system.js';

/*
 * The change feed `GET /api/v1/events` through HTTP on the whole system. Events are put
 * in the outbox by `appendTestEvents` (exactly the agreed envelope), so paging, filters,
 * access and retention are tested apart from which write emits what.
 */

let sys: System;
let alice: User;
let bob: User;

beforeEach(async () => {
  sys = await system();
  alice = await sys.user('alice');
  bob = await sys.user('bob');
});
afterEach(async () => {
  await sys[Symbol.asyncDispose]();
});

/** Stores a task owned by `owner` and returns its id. */
async function taskOf(owner: User, fields: Parameters<typeof aTask>[0] = {}): Promise<string> {
  const t = aTask({ owner: owner.id, ...fields });
  await insert(sys.store, { tasks: [t] });
  return t._id;
}

const seqs = (body: { data: Array<{ seq: number }> }) => body.data.map((e) => e.seq);

describe('GET /api/v1/events', () => {
  it('pages oldest first with next_after, then answers an empty page with the same cursor', async () => {
    const taskId = await taskOf(alice);
    const stored = await appendTestEvents(sys.store, [1, 2, 3, 4, 5].map((n) => ({ type: 'task.updated', task_id: taskId, actor: alice.id, data: { n } })));
    const first = await sys.call('GET', '/api/v1/events?limit=2', alice);
    expect(first.status).toBe(200);
    expect(seqs(first.body)).toEqual([1, 2]);
    expect(first.body.data[0]).toEqual({
      id: stored[0]!._id, seq: 1, type: 'task.updated', occurred_at: stored[0]!.occurred_at, actor: alice.id,
      request_id: stored[0]!.request_id, task_id: taskId, data: { n: 1 },
    });
    expect(first.body.next_after).toBe(2);
    const second = await sys.call('GET', '/api/v1/events?limit=2&after=2', alice);
    expect(seqs(second.body)).toEqual([3, 4]);
    const third = await sys.call('GET', `/api/v1/events?limit=2&after=${second.body.next_after}`, alice);
    expect(seqs(third.body)).toEqual([5]);
    expect(third.body.next_after).toBe(5);
    const empty = await sys.call('GET', '/api/v1/events?after=5', alice);
    expect(empty.body).toEqual({ data: [], next_after: 5 });
  });

  it('keeps a page of large events within 512 KiB of JSON (at least one event) and pages through all of them intact', async () => {
    const taskId = await taskOf(alice);
    const big = '\u0002'.repeat(50_000); // 300 KB of JSON
    await appendTestEvents(sys.store, [0, 1, 2, 3].map((i) => ({ type: 'task.updated', task_id: taskId, actor: alice.id, data: { big, i } })));
    const seen: number[] = [];
    let after = 0;
    for (let pages = 0; pages < 10; pages++) {
      const page = await sys.call('GET', `/api/v1/events?after=${after}`, alice);
      expect(page.status).toBe(200);
      if (page.body.data.length === 0) break;
      expect(page.body.data.length === 1 || JSON.stringify(page.body.data).length <= 512 * 1024).toBe(true);
      for (const e of page.body.data) {
        expect(e.data.big).toBe(big);
        seen.push(e.data.i);
      }
      expect(page.body.next_after).toBe(page.body.data[page.body.data.length - 1].seq);
      after = page.body.next_after;
    }
    expect(seen).toEqual([0, 1, 2, 3]);
    const first = await sys.call('GET', '/api/v1/events?after=0', alice);
    expect(seqs(first.body)).toEqual([1]);
  });

  it('filters by types and board_id', async () => {
    const taskId = await taskOf(alice);
    const board = aBoard({ owner: alice.id });
    await insert(sys.store, { boards: [board] });
    await appendTestEvents(sys.store, [
      { type: 'task.created', task_id: taskId },
      { type: 'card.moved', task_id: taskId, board_id: board._id },
      { type: 'task.updated', task_id: taskId },
      { type: 'board.updated', board_id: board._id },
      { type: 'card.moved', task_id: taskId, board_id: 'another-board' },
    ]);
    const moved = await sys.call('GET', '/api/v1/events?types=card.moved', alice);
    expect(seqs(moved.body)).toEqual([2, 5]);
    const two = await sys.call('GET', '/api/v1/events?types=task.created,%20board.updated', alice);
    expect(seqs(two.body)).toEqual([1, 4]);
    const onBoard = await sys.call('GET', `/api/v1/events?board_id=${board._id}`, alice);
    expect(seqs(onBoard.body)).toEqual([2, 4]);
    const both = await sys.call('GET', `/api/v1/events?board_id=${board._id}&types=card.moved`, alice);
    expect(seqs(both.body)).toEqual([2]);
  });

  it('shows only events about tasks and boards the caller can read now, and pages past hidden ones', async () => {
    const mine = await taskOf(alice);
    const theirs = await taskOf(bob);
    const bobsBoard = aBoard({ owner: bob.id });
    await insert(sys.store, { boards: [bobsBoard] });
    await appendTestEvents(sys.store, [
      { type: 'task.created', task_id: theirs, actor: bob.id },
      { type: 'task.created', task_id: mine, actor: alice.id },
      { type: 'board.created', board_id: bobsBoard._id, actor: bob.id },
      { type: 'task.updated', task_id: theirs, actor: bob.id },
    ]);
    const page = await sys.call('GET', '/api/v1/events?limit=1', alice);
    expect(seqs(page.body)).toEqual([2]);
    const rest = await sys.call('GET', `/api/v1/events?after=${page.body.next_after}`, alice);
    expect(rest.body).toEqual({ data: [], next_after: 4 });
    expect(seqs((await sys.call('GET', '/api/v1/events', bob)).body)).toEqual([1, 3, 4]);

    // Access is decided when the event is read: bob shares his task and board with a group alice joins.
    const group = aGroup(bob.id, [alice.id]);
    await insert(sys.store, { groups: [group] });
    await sys.store.collection('tasks').updateOne({ _id: theirs }, { $set: { groupId: group._id, groupPermission: 'r' } });
    await sys.store.collection('boards').updateOne({ _id: bobsBoard._id }, { $set: { groupId: group._id, board_type: 'shared' } });
    expect(seqs((await sys.call('GET', '/api/v1/events', alice)).body)).toEqual([1, 2, 3, 4]);
  });

  it('keeps showing the deletion of a readable task, and uses the snapshot of a task that is gone', async () => {
    const deleted = await taskOf(alice, { deleted: true });
    await appendTestEvents(sys.store, [
      { type: 'task.deleted', task_id: deleted, data: { task_id: deleted } },
      { type: 'task.deleted', task_id: 'purged', data: { task_id: 'purged', task: { id: 'purged', created_by: alice.id } } },
      { type: 'task.deleted', task_id: 'purged-2', data: { task_id: 'purged-2', task: { id: 'purged-2', created_by: bob.id } } },
    ]);
    expect(seqs((await sys.call('GET', '/api/v1/events', alice)).body)).toEqual([1, 2]);
  });

  it('answers 410 EVENTS_EXPIRED for a cursor older than the retention window', async () => {
    const taskId = await taskOf(alice);
    const old = new Date(Date.parse(NOW) - 8 * 86_400_000);
    await appendTestEvents(sys.store, [{ type: 'task.created', task_id: taskId }, { type: 'task.updated', task_id: taskId }], old);
    await appendTestEvents(sys.store, [{ type: 'task.updated', task_id: taskId }], new Date(NOW));
    expect(await sweepEvents(sys.store, new Date(NOW), 7)).toBe(2);
    expect(await sweepEvents(sys.store, new Date(NOW), 7)).toBe(0);
    const expired = expectError(await sys.call('GET', '/api/v1/events?after=1', alice), 410, 'EVENTS_EXPIRED');
    expect(expired.details).toEqual({ after: 1, oldest_available_after: 2 });
    expectError(await sys.call('GET', '/api/v1/events?after=0', alice), 410, 'EVENTS_EXPIRED');
    expect(seqs((await sys.call('GET', '/api/v1/events?after=2', alice)).body)).toEqual([3]);
    expect(seqs((await sys.call('GET', '/api/v1/events', alice)).body)).toEqual([3]);
  });

  it('answers 400 naming the parameter at fault, and 401 without a token', async () => {
    const invalid = (body: any, field: string) => {
      expect(body.code).toBe('VALIDATION_FAILED');
      expect(body.validationErrors.map((v: { field: string }) => v.field)).toEqual([field]);
    };
    invalid(expectError(await sys.call('GET', '/api/v1/events?limit=0', alice), 400, 'VALIDATION_FAILED'), '/limit');
    invalid(expectError(await sys.call('GET', '/api/v1/events?limit=501', alice), 400, 'VALIDATION_FAILED'), '/limit');
    invalid(expectError(await sys.call('GET', '/api/v1/events?after=-1', alice), 400, 'VALIDATION_FAILED'), '/after');
    invalid(expectError(await sys.call('GET', '/api/v1/events?after=x', alice), 400, 'VALIDATION_FAILED'), '/after');
    // a cursor is decimal digits, at most Number.MAX_SAFE_INTEGER: nothing is rounded or read as hex
    for (const after of ['9007199254740993', '9007199254740992', '0x10', '1e3', '16.0', '+16', '%2016', '99999999999999999999']) {
      invalid(expectError(await sys.call('GET', `/api/v1/events?after=${after}`, alice), 400, 'VALIDATION_FAILED'), '/after');
    }
    expect((await sys.call('GET', '/api/v1/events?after=9007199254740991', alice)).body).toEqual({ data: [], next_after: 9007199254740991 });
    expect((await sys.call('GET', '/api/v1/events?after=0016', alice)).status).toBe(200);
    const types = expectError(await sys.call('GET', '/api/v1/events?types=task.created,task.moved', alice), 400, 'VALIDATION_FAILED');
    invalid(types, '/types');
    expect(types.message).toContain('task.moved');
    expectError(await sys.call('GET', '/api/v1/events'), 401, 'UNAUTHORIZED');
  });
});
