import { describe, expect, it } from 'vitest';
import { Collections } from '@app/shared/store';
import { expectError, system, type System } from './system.js';
import { catchUpOutbox } from '@app/shared/events';

/**
 * Idempotency-Key through HTTP: the first answer is stored and replayed byte for byte
 * with `Idempotency-Replayed: true`, nothing runs again, another body is 422, a concurrent repeat
 * is 409, keys are scoped per user, method and path, and a malformed key is 400.
 */

const key = (k: string) => ({ 'idempotency-key': k });
/** Documents of `name` matching `filter`; for `events`, once the committed writes are numbered (as a reader sees them). */
const count = async (sys: System, name: string, filter: Record<string, unknown> = {}) => {
  if (name === Collections.events) await catchUpOutbox(sys.store);
  return sys.store.collection(name).countDocuments(filter);
};

/** The raw answer (text body), to compare replays byte for byte. */
async function raw(sys: System, method: string, url: string, headers: Record<string, string>, body?: unknown) {
  const res = await sys.app.inject({ method: method as 'POST', url, headers, ...(body === undefined ? {} : { payload: body as object }) });
  return { status: res.statusCode, headers: res.headers, text: res.body };
}

describe('Idempotency-Key', () => {
  it('a repeated create answers the first answer byte for byte, flagged, and makes no second task or event', async () => {
    await using sys = await system();
    const alice = await sys.user('alice');
    const h = { ...alice.headers, ...key('create-1') };
    const first = await raw(sys, 'POST', '/api/v1/tasks', h, { title: 'once', tags: ['a'] });
    expect(first.status).toBe(201);
    expect(first.headers['idempotency-replayed']).toBeUndefined();
    const events = await count(sys, Collections.events);
    sys.clock.advance(60_000);
    const again = await raw(sys, 'POST', '/api/v1/tasks', h, { title: 'once', tags: ['a'] });
    expect(again.status).toBe(201);
    expect(again.text).toBe(first.text);
    expect(again.headers.etag).toBe(first.headers.etag);
    expect(again.headers['idempotency-replayed']).toBe('true');
    expect(await count(sys, Collections.tasks, { title: 'once' })).toBe(1);
    expect(await count(sys, Collections.events)).toBe(events);
  });

  it('the same key with another body is 422 IDEMPOTENCY_KEY_REUSED and runs nothing', async () => {
    await using sys = await system();
    const alice = await sys.user('alice');
    expect((await sys.call('POST', '/api/v1/tasks', alice, { title: 'a' }, key('k'))).status).toBe(201);
    const res = await sys.call('POST', '/api/v1/tasks', alice, { title: 'b' }, key('k'));
    expectError(res, 422, 'IDEMPOTENCY_KEY_REUSED');
    expect(await count(sys, Collections.tasks)).toBe(1);
  });

  it('keys are scoped per user, method and path', async () => {
    await using sys = await system();
    const alice = await sys.user('alice');
    const bob = await sys.user('bob');
    const a = await sys.call('POST', '/api/v1/tasks', alice, { title: 't' }, key('shared'));
    const b = await sys.call('POST', '/api/v1/tasks', bob, { title: 't' }, key('shared'));
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(b.headers['idempotency-replayed']).toBeUndefined();
    expect(a.body.id).not.toBe(b.body.id);
    // the same key on another path is another request
    const p = await sys.call('PATCH', `/api/v1/tasks/${a.body.id}`, alice, { title: 't' }, key('shared'));
    expect([p.status, p.headers['idempotency-replayed']]).toEqual([200, undefined]);
  });

  it('a repeated move applies nothing and answers the first answer; a later move with a new key runs', async () => {
    await using sys = await system();
    const alice = await sys.user('alice');
    const columns = [{ name: 'To Do', query: "status = 'todo'" }, { name: 'Doing', query: "status = 'doing'" }];
    const boardId = (await sys.call('POST', '/api/v1/boards', alice, { name: 'B', board_type: 'private', columns })).body.id;
    const card = (await sys.call('POST', `/api/v1/boards/${boardId}/tasks`, alice, { title: 'c', status: 'todo' })).body.id;
    const url = `/api/v1/boards/${boardId}/tasks/${card}/move`;
    const body = { from_column_id: 'col-to-do', to_column_id: 'col-doing' };
    const first = await raw(sys, 'POST', url, { ...alice.headers, ...key('mv-1') }, body);
    expect(first.status).toBe(200);
    const again = await raw(sys, 'POST', url, { ...alice.headers, ...key('mv-1') }, body);
    expect([again.status, again.text, again.headers['idempotency-replayed']]).toEqual([200, first.text, 'true']);
    const task = await sys.call('GET', `/api/v1/tasks/${card}`, alice);
    expect([task.body.status, task.body.version]).toEqual(['doing', 2]);
    expect(await count(sys, Collections.events, { type: 'card.moved' })).toBe(1);
    // without the key the same move is refused: the card is no longer in the source column
    expectError(await sys.call('POST', url, alice, body), 409, 'KANBAN_TASK_NOT_IN_SOURCE_COLUMN');
  });

  it('a 4xx answer is stored too and replayed with its first traceId; a DELETE replays its 204', async () => {
    await using sys = await system();
    const alice = await sys.user('alice');
    const id = (await sys.call('POST', '/api/v1/tasks', alice, { title: 't' })).body.id;
    const h = { ...alice.headers, ...key('stale'), 'if-match': '"5"' };
    const first = await raw(sys, 'PATCH', `/api/v1/tasks/${id}`, h, { title: 'x' });
    expect(first.status).toBe(412);
    const again = await raw(sys, 'PATCH', `/api/v1/tasks/${id}`, h, { title: 'x' });
    expect([again.status, again.text, again.headers['idempotency-replayed']]).toEqual([412, first.text, 'true']);

    const del1 = await raw(sys, 'DELETE', `/api/v1/tasks/${id}`, { ...alice.headers, ...key('del') });
    const del2 = await raw(sys, 'DELETE', `/api/v1/tasks/${id}`, { ...alice.headers, ...key('del') });
    expect([del1.status, del2.status, del2.headers['idempotency-replayed']]).toEqual([204, 204, 'true']);
    expect(await count(sys, Collections.events, { type: 'task.deleted' })).toBe(1);
  });

  it('a repeat while the first still runs is 409 IDEMPOTENCY_KEY_IN_PROGRESS; 20 concurrent creates make one task', async () => {
    await using sys = await system();
    const alice = await sys.user('alice');
    const results = await Promise.all(
      Array.from({ length: 20 }, () => sys.call('POST', '/api/v1/tasks', alice, { title: 'burst' }, key('burst'))),
    );
    const statuses = results.map((r) => r.status);
    expect(statuses.every((s) => s === 201 || s === 409), statuses.join()).toBe(true);
    for (const r of results.filter((x) => x.status === 409)) expectError(r, 409, 'IDEMPOTENCY_KEY_IN_PROGRESS');
    expect(await count(sys, Collections.tasks, { title: 'burst' })).toBe(1);
    // once the first has finished, a repeat is a replay
    const after = await sys.call('POST', '/api/v1/tasks', alice, { title: 'burst' }, key('burst'));
    expect([after.status, after.headers['idempotency-replayed']]).toEqual([201, 'true']);
    expect(results.filter((r) => r.status === 201).every((r) => r.body.id === after.body.id)).toBe(true);
  });

  it('the answer expires after IDEMPOTENCY_TTL_HOURS (24): then the key runs again', async () => {
    await using sys = await system();
    const alice = await sys.user('alice');
    const a = await sys.call('POST', '/api/v1/tasks', alice, { title: 'ttl' }, key('ttl'));
    sys.clock.advance(23 * 3_600_000);
    expect((await sys.call('POST', '/api/v1/tasks', alice, { title: 'ttl' }, key('ttl'))).headers['idempotency-replayed']).toBe('true');
    sys.clock.advance(2 * 3_600_000);
    const b = await sys.call('POST', '/api/v1/tasks', alice, { title: 'ttl' }, key('ttl'));
    expect([b.status, b.headers['idempotency-replayed']]).toEqual([201, undefined]);
    expect(b.body.id).not.toBe(a.body.id);
  });

  it('a key that is empty, longer than 255 or not visible ASCII is 400 naming the header', async () => {
    await using sys = await system();
    const alice = await sys.user('alice');
    for (const bad of ['', 'x'.repeat(256), 'with space', 'ünïcode']) {
      const res = await sys.call('POST', '/api/v1/tasks', alice, { title: 'k' }, key(bad));
      expect(expectError(res, 400, 'VALIDATION_FAILED').validationErrors[0].field, bad).toMatch(/idempotency-key/);
    }
    expect(await count(sys, Collections.tasks)).toBe(0);
    expect((await sys.call('POST', '/api/v1/tasks', alice, { title: 'k' }, key('x'.repeat(255)))).status).toBe(201);
  });
});
