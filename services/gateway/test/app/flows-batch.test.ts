import { describe, expect, it } from 'vitest';
import { Collections } from '@app/shared/store';
import { expectError, system, type System } from './system.js';
import { catchUpOutbox } from '@app/shared/events';

/** Batch writes through HTTP: POST and PATCH /api/v1/tasks/batch, atomic and not. */

/** Documents of `name` matching `filter`; for `events`, once the committed writes are numbered (as a reader sees them). */
const count = async (sys: System, name: string, filter: Record<string, unknown> = {}) => {
  if (name === Collections.events) await catchUpOutbox(sys.store);
  return sys.store.collection(name).countDocuments(filter);
};
const statuses = (res: { body: { results: Array<{ index: number; status: number }> } }) => res.body.results.map((r) => [r.index, r.status]);

describe('POST /api/v1/tasks/batch', () => {
  it('non-atomic: each item on its own, results in input order, one task.created per created task', async () => {
    await using sys = await system();
    const alice = await sys.user('alice');
    const res = await sys.call('POST', '/api/v1/tasks/batch', alice, { tasks: [{ title: 'a' }, { title: '  ' }, { title: 'c', status: 'doing' }] });
    expect(res.status).toBe(200);
    expect(statuses(res)).toEqual([[0, 201], [1, 400], [2, 201]]);
    expect(res.body.results[0].task).toMatchObject({ title: 'a', version: 1 });
    expect(res.body.results[1].error).toMatchObject({ code: 'VALIDATION_FAILED', validationErrors: [{ field: '/title' }] });
    expect(res.body.results[1]).not.toHaveProperty('task');
    expect(await count(sys, Collections.tasks)).toBe(2);
    await catchUpOutbox(sys.store);
    const events = await sys.store.collection(Collections.events).find({}, { sort: { seq: 1 } });
    expect(events.map((e) => [e.type, e.task_id])).toEqual([['task.created', res.body.results[0].task.id], ['task.created', res.body.results[2].task.id]]);
    // each is a normal task
    expect((await sys.call('GET', `/api/v1/tasks/${res.body.results[2].task.id}`, alice)).body.status).toBe('doing');
  });

  it('atomic: one bad item rolls back everything; it keeps its error, the others answer 424; nothing written, no event', async () => {
    await using sys = await system();
    const alice = await sys.user('alice');
    const res = await sys.call('POST', '/api/v1/tasks/batch', alice, {
      atomic: true,
      tasks: [{ title: 'a' }, { title: 'b' }, { title: 'c', assignee: 'nobody' }, { title: 'd' }],
    });
    expect(res.status).toBe(200);
    expect(statuses(res)).toEqual([[0, 424], [1, 424], [2, 400], [3, 424]]);
    expect(res.body.results[2].error.code).toBe('ASSIGNEE_NOT_FOUND');
    expect(res.body.results[0].error).toMatchObject({ code: 'BATCH_ITEM_NOT_APPLIED', details: { failed_index: 2 } });
    expect(await count(sys, Collections.tasks)).toBe(0);
    expect(await count(sys, Collections.events)).toBe(0);

    const ok = await sys.call('POST', '/api/v1/tasks/batch', alice, { atomic: true, tasks: [{ title: 'a' }, { title: 'b' }] });
    expect(statuses(ok)).toEqual([[0, 201], [1, 201]]);
    expect(await count(sys, Collections.tasks)).toBe(2);
  });

  it('1..100 items: 0 or 101 is 400 naming /tasks, nothing written; 100 is fine', async () => {
    await using sys = await system();
    const alice = await sys.user('alice');
    const many = (n: number) => Array.from({ length: n }, (_, i) => ({ title: `t${i}` }));
    for (const n of [0, 101]) {
      const res = await sys.call('POST', '/api/v1/tasks/batch', alice, { tasks: many(n) });
      expect(expectError(res, 400, 'VALIDATION_FAILED').validationErrors[0].field, String(n)).toBe('/tasks');
    }
    expect(await count(sys, Collections.tasks)).toBe(0);
    const hundred = await sys.call('POST', '/api/v1/tasks/batch', alice, { tasks: many(100), atomic: true });
    expect(hundred.body.results.every((r: { status: number }) => r.status === 201)).toBe(true);
    expect(await count(sys, Collections.tasks)).toBe(100);
  });

  it('accepts an Idempotency-Key: the repeat replays the results and creates nothing', async () => {
    await using sys = await system();
    const alice = await sys.user('alice');
    const body = { tasks: [{ title: 'a' }, { title: 'b' }] };
    const first = await sys.call('POST', '/api/v1/tasks/batch', alice, body, { 'idempotency-key': 'batch-1' });
    const again = await sys.call('POST', '/api/v1/tasks/batch', alice, body, { 'idempotency-key': 'batch-1' });
    expect(again.body).toEqual(first.body);
    expect(again.headers['idempotency-replayed']).toBe('true');
    expect(await count(sys, Collections.tasks)).toBe(2);
  });
});

describe('PATCH /api/v1/tasks/batch', () => {
  it('each item obeys the single PATCH rules: access (404/403), if_match (412), body (400); non-atomic keeps the good ones', async () => {
    await using sys = await system();
    const alice = await sys.user('alice');
    const bob = await sys.user('bob');
    const mine = (await sys.call('POST', '/api/v1/tasks', alice, { title: 'mine' })).body.id;
    const mine2 = (await sys.call('POST', '/api/v1/tasks', alice, { title: 'mine2' })).body.id;
    const hers = (await sys.call('POST', '/api/v1/tasks', bob, { title: 'bobs' })).body.id;
    const res = await sys.call('PATCH', '/api/v1/tasks/batch', alice, {
      updates: [
        { id: mine, changes: { status: 'doing' } },
        { id: hers, changes: { status: 'doing' } },
        { id: mine2, if_match: '"3"', changes: { status: 'doing' } },
        { id: mine2, changes: { title: '' } },
        { id: mine2, if_match: '"1"', changes: { title: 'renamed' } },
      ],
    });
    expect(res.status).toBe(200);
    expect(statuses(res)).toEqual([[0, 200], [1, 404], [2, 412], [3, 400], [4, 200]]);
    expect(res.body.results[2].error).toMatchObject({ code: 'PRECONDITION_FAILED', details: { current_version: 1 } });
    expect(res.body.results[4].task).toMatchObject({ title: 'renamed', version: 2 });
    expect((await sys.call('GET', `/api/v1/tasks/${mine}`, alice)).body).toMatchObject({ status: 'doing', version: 2 });
    expect((await sys.call('GET', `/api/v1/tasks/${hers}`, bob)).body).toMatchObject({ status: 'todo', version: 1 });
    expect(await count(sys, Collections.events, { type: 'task.updated' })).toBe(2);
  });

  it('atomic: a stale if_match rolls back every update', async () => {
    await using sys = await system();
    const alice = await sys.user('alice');
    const a = (await sys.call('POST', '/api/v1/tasks', alice, { title: 'a' })).body.id;
    const b = (await sys.call('POST', '/api/v1/tasks', alice, { title: 'b' })).body.id;
    const res = await sys.call('PATCH', '/api/v1/tasks/batch', alice, {
      atomic: true,
      updates: [{ id: a, changes: { status: 'done' } }, { id: b, if_match: '"9"', changes: { status: 'done' } }],
    });
    expect(statuses(res)).toEqual([[0, 424], [1, 412]]);
    for (const id of [a, b]) expect((await sys.call('GET', `/api/v1/tasks/${id}`, alice)).body).toMatchObject({ status: 'todo', version: 1 });
    expect(await count(sys, Collections.events, { type: 'task.updated' })).toBe(0);
  });

  it('an item that would grow its task past the size limit is refused before any write: atomic and not, the same answer on every store', async () => {
    // MongoDB aborts the whole transaction on a write the server refuses; the test store does too
    // (docs/store.md "Transactions under test"), so the item's 413 must come before its write
    await using sys = await system();
    const alice = await sys.user('alice');
    const a = (await sys.call('POST', '/api/v1/tasks', alice, { title: 'a' })).body;
    const b = (await sys.call('POST', '/api/v1/tasks', alice, { title: 'b' })).body;
    const huge = '漢'.repeat(200_000); // 600 KB of UTF-8, past the 256 KiB of a task
    for (const atomic of [false, true]) {
      const res = await sys.call('PATCH', '/api/v1/tasks/batch', alice, {
        atomic, updates: [{ id: a.id, changes: { description: huge } }, { id: b.id, changes: { title: `b ${atomic}` } }],
      });
      expect(res.status, JSON.stringify(res.body).slice(0, 500)).toBe(200);
      expect(statuses(res)).toEqual([[0, 413], [1, atomic ? 424 : 200]]);
      expect(res.body.results[0].error.code).toBe('PAYLOAD_TOO_LARGE');
    }
    expect((await sys.call('GET', `/api/v1/tasks/${b.id}`, alice)).body.title).toBe('b false');
    expect(sys.rules.counts.refused).toBe(0);
  });

  it('a bad item shape is 400 for the whole batch, naming its position', async () => {
    await using sys = await system();
    const alice = await sys.user('alice');
    const res = await sys.call('PATCH', '/api/v1/tasks/batch', alice, { updates: [{ id: 'x', changes: { status: 1 } }] });
    expect(expectError(res, 400, 'VALIDATION_FAILED').validationErrors[0].field).toBe('/updates/0/changes/status');
  });
});
