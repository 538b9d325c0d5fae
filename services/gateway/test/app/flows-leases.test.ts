import { describe, expect, it } from 'vitest';
import { expectError, NOW, system } from './system.js';

/**
 * Cards claimed under a lease through HTTP (docs/boards.md "Claiming a card under a lease"):
 * claim (200 and 204), the lease in the task, column and board reads, renew, complete into Done,
 * release, another user's write to a leased card, the events in the feed, and bad input.
 */

const COLUMNS = [
  { id: 'todo', name: 'To Do', query: "status = 'todo'" },
  { id: 'done', name: 'Done', query: "status = 'done'" },
];

async function leaseFixture() {
  const sys = await system();
  const alice = await sys.user('alice');
  const bob = await sys.user('bob');
  const board = await sys.call('POST', '/api/v1/boards', alice, { name: 'Agents', board_type: 'shared', columns: COLUMNS });
  const group = await sys.call('POST', '/api/v1/groups', alice, { name: 'team' });
  await sys.call('POST', `/api/v1/groups/${group.body.id}/members`, alice, { user_id: bob.id });
  await sys.call('POST', `/api/v1/boards/${board.body.id}/share`, alice, { group_id: group.body.id, permission: 'rw' });
  const boardId: string = board.body.id;
  const card = async (title: string) => (await sys.call('POST', `/api/v1/boards/${boardId}/tasks`, alice, { title, status: 'todo' })).body;
  const claim = (as = alice, body: Record<string, unknown> = { lease_seconds: 120 }) =>
    sys.call('POST', `/api/v1/boards/${boardId}/columns/todo/claim`, as, body);
  return { sys, alice, bob, boardId, card, claim, [Symbol.asyncDispose]: () => sys[Symbol.asyncDispose]() };
}

describe('claiming cards under a lease through HTTP', () => {
  it('claims, shows the lease in every read, renews, completes into Done, and records the events', async () => {
    await using f = await leaseFixture();
    const card = await f.card('Write the docs');

    const claimed = await f.claim(f.bob);
    expect(claimed.status, JSON.stringify(claimed.body)).toBe(200);
    expect(claimed.headers.etag).toBe('"2"');
    const lease = { id: claimed.body.lease_id, holder: f.bob.id, board_id: f.boardId, column_id: 'todo', claimed_at: NOW, expires_at: '2026-03-02T09:02:00.000Z' };
    expect(claimed.body).toMatchObject({ lease_id: expect.any(String), expires_at: lease.expires_at, task: { id: card.id, lease } });
    expect((await f.claim(f.alice)).status).toBe(204);

    // reads show who holds it and until when
    expect((await f.sys.call('GET', `/api/v1/tasks/${card.id}`, f.alice)).body.lease).toEqual(lease);
    expect((await f.sys.call('POST', `/api/v1/boards/${f.boardId}/columns/todo/query`, f.alice, {})).body.data[0].lease).toEqual(lease);
    expect((await f.sys.call('GET', `/api/v1/boards/${f.boardId}/tasks`, f.alice)).body.column_tasks.todo[0].lease).toEqual(lease);

    // a claim, not a lock: another user's edit goes through and the lease stays
    const edit = await f.sys.call('PATCH', `/api/v1/tasks/${card.id}`, f.alice, { description: 'see the wiki' });
    expect(edit.status).toBe(200);
    expect(edit.body.lease).toEqual(lease);

    f.sys.clock.advance(60_000);
    const renewed = await f.sys.call('POST', `/api/v1/tasks/${card.id}/lease/renew`, f.bob, { lease_id: lease.id });
    expect([renewed.status, renewed.body.expires_at]).toEqual([200, '2026-03-02T09:03:00.000Z']);
    expectError(await f.sys.call('POST', `/api/v1/tasks/${card.id}/lease/renew`, f.alice, { lease_id: lease.id }), 409, 'LEASE_NOT_HELD');

    const done = await f.sys.call('POST', `/api/v1/tasks/${card.id}/lease/complete`, f.bob, { lease_id: lease.id, to_column_id: 'done' });
    expect(done.status, JSON.stringify(done.body)).toBe(200);
    expect(done.body.applied_actions).toEqual([{ op: 'set', field: 'status', from: 'todo', to: 'done' }]);
    expect(done.body.task).toMatchObject({ id: card.id, status: 'done' });
    expect(done.body.task).not.toHaveProperty('lease');

    const feed = await f.sys.call('GET', '/api/v1/events?types=card.claimed,card.moved,card.released', f.alice);
    expect(feed.body.data.map((e: { type: string; actor: string; data: { reason?: string } }) => [e.type, e.actor === f.bob.id, e.data.reason])).toEqual([
      ['card.claimed', true, undefined], ['card.moved', true, undefined], ['card.released', true, 'completed'],
    ]);
  });

  it('releases a card, which is claimable again; a retried claim with the same Idempotency-Key gets the same lease', async () => {
    await using f = await leaseFixture();
    const card = await f.card('one');
    await f.card('two');
    const first = await f.claim(f.alice, { lease_seconds: 60 });
    const again = await f.sys.call('POST', `/api/v1/boards/${f.boardId}/columns/todo/claim`, f.alice, { lease_seconds: 60 }, { 'idempotency-key': 'claim-1' });
    const replay = await f.sys.call('POST', `/api/v1/boards/${f.boardId}/columns/todo/claim`, f.alice, { lease_seconds: 60 }, { 'idempotency-key': 'claim-1' });
    expect([again.status, replay.status, replay.headers['idempotency-replayed']]).toEqual([200, 200, 'true']);
    expect(replay.body.lease_id).toBe(again.body.lease_id);
    expect(again.body.task.id).not.toBe(card.id);

    const released = await f.sys.call('POST', `/api/v1/tasks/${card.id}/lease/release`, f.alice, { lease_id: first.body.lease_id });
    expect(released.status).toBe(200);
    expect(released.body).not.toHaveProperty('lease');
    const next = await f.claim(f.bob);
    expect([next.status, next.body.task.id]).toEqual([200, card.id]);
  });

  it('records the access token a claim was made with; a read-only token, or one narrowed to another board, may not claim', async () => {
    await using f = await leaseFixture();
    const card = await f.card('for the agent');
    const token = async (body: Record<string, unknown>) => {
      const res = await f.sys.call('POST', '/api/v1/tokens', f.bob, { name: 'agent', ...body });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return { id: res.body.id as string, user: { ...f.bob, headers: { authorization: `Bearer ${res.body.token}` } } };
    };
    const reader = await token({ scopes: ['read'] });
    expectError(await f.claim(reader.user), 403, 'INSUFFICIENT_SCOPE');
    const other = await f.sys.call('POST', '/api/v1/boards', f.bob, { name: 'elsewhere', board_type: 'private' });
    const narrowed = await token({ scopes: ['write'], board_ids: [other.body.id] });
    expectError(await f.claim(narrowed.user), 404, 'BOARD_NOT_FOUND');

    const agent = await token({ scopes: ['write'], board_ids: [f.boardId] });
    const claimed = await f.claim(agent.user);
    expect(claimed.status, JSON.stringify(claimed.body)).toBe(200);
    expect(claimed.body.task).toMatchObject({ id: card.id, lease: { holder: f.bob.id, holder_token: agent.id, holder_token_name: 'agent' } });
    // the same user may finish the agent's lease with its id (the lease id, not the token, is the claim)
    const released = await f.sys.call('POST', `/api/v1/tasks/${card.id}/lease/release`, f.bob, { lease_id: claimed.body.lease_id });
    expect(released.status).toBe(200);
  });

  it('answers bad input with a 400 naming the field, and an expired lease with 409 LEASE_EXPIRED', async () => {
    await using f = await leaseFixture();
    const card = await f.card('one');
    for (const body of [{}, { lease_seconds: 0 }, { lease_seconds: 3601 }, { lease_seconds: 1.5 }, { lease_seconds: 60, extra: 1 }]) {
      const res = expectError(await f.claim(f.alice, body), 400, 'VALIDATION_FAILED');
      expect(res.validationErrors.length).toBeGreaterThan(0);
    }
    expectError(await f.claim(f.alice, { lease_seconds: 60, query: 'status =' }), 400, 'QUERY_SYNTAX');
    expectError(await f.sys.call('POST', `/api/v1/boards/${f.boardId}/columns/nope/claim`, f.alice, { lease_seconds: 60 }), 404, 'COLUMN_NOT_FOUND');
    expectError(await f.sys.call('POST', `/api/v1/tasks/${card.id}/lease/renew`, f.alice, {}), 400, 'VALIDATION_FAILED');

    const lease = (await f.claim(f.alice, { lease_seconds: 1 })).body;
    f.sys.clock.advance(1_000);
    const late = expectError(await f.sys.call('POST', `/api/v1/tasks/${card.id}/lease/complete`, f.alice, { lease_id: lease.lease_id }), 409, 'LEASE_EXPIRED');
    expect(late.details).toMatchObject({ expires_at: '2026-03-02T09:00:01.000Z' });
  });
});
