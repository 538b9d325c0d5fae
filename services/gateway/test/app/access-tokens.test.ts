import { describe, expect, it } from 'vitest';
import { Collections } from '@app/shared/store';
import { expectError, system, type System, type User } from './system.js';

/**
 * Personal access tokens through HTTP (docs/auth.md "Access tokens"): created and shown once,
 * listed without their secret, revoked at once; scopes and board lists narrow what a token's
 * user may do, never widen it; writes made with a token name it in their events.
 */

/** A token user: the same user, authenticating with `secret`. */
function withToken(user: User, secret: string): User {
  return { ...user, headers: { authorization: `Bearer ${secret}` } };
}

async function token(sys: System, as: User, body: Record<string, unknown>): Promise<{ id: string; secret: string; as: User }> {
  const res = await sys.call('POST', '/api/v1/tokens', as, { name: 'agent', ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return { id: res.body.id, secret: res.body.token, as: withToken(as, res.body.token) };
}

describe('creating, listing and revoking tokens', () => {
  it('shows the bts_ secret once, keeps only its hash, and lists the token without it', async () => {
    await using sys = await system();
    const alice = await sys.user('alice');
    const created = await sys.call('POST', '/api/v1/tokens', alice, { name: 'ci bot', scopes: ['read', 'write'], expires_at: '2027-01-01T00:00:00Z' });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'ci bot', scopes: ['read', 'write'], revoked: false, expires_at: '2027-01-01T00:00:00.000Z' });
    const secret: string = created.body.token;
    expect(secret).toMatch(/^bts_[A-Za-z0-9_-]{43}$/);
    expect(created.body.prefix).toBe(secret.slice(0, 8));

    const stored = await sys.store.collection(Collections.accessTokens).find({});
    expect(JSON.stringify(stored)).not.toContain(secret.slice(4));

    const listed = await sys.call('GET', '/api/v1/tokens', alice);
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual([expect.objectContaining({ id: created.body.id, name: 'ci bot' })]);
    expect(JSON.stringify(listed.body)).not.toContain(secret);
  });

  it('authenticates as its user, and is refused from the request after its revocation', async () => {
    await using sys = await system();
    const alice = await sys.user('alice');
    const t = await token(sys, alice, { scopes: ['read'] });
    expect((await sys.call('GET', '/api/v1/boards', t.as)).status).toBe(200);
    expect((await sys.call('DELETE', `/api/v1/tokens/${t.id}`, alice)).status).toBe(204);
    expectError(await sys.call('GET', '/api/v1/boards', t.as), 401, 'UNAUTHORIZED');
    expect((await sys.call('GET', '/api/v1/tokens', alice)).body[0]).toMatchObject({ id: t.id, revoked: true });
  });

  it('lists when a token was last used: absent before its first request, then at most a minute behind', async () => {
    await using sys = await system();
    const alice = await sys.user('alice');
    const t = await token(sys, alice, { scopes: ['read'] });
    const lastUsed = async () => ((await sys.call('GET', '/api/v1/tokens', alice)).body as Array<{ last_used_at?: string }>)[0]!.last_used_at;
    expect(await lastUsed()).toBeUndefined();
    const first = sys.clock.now().toISOString();
    expect((await sys.call('GET', '/api/v1/boards', t.as)).status).toBe(200);
    await expect.poll(lastUsed).toBe(first);
    // a use within the minute writes nothing new; one after it does
    sys.clock.advance(30_000);
    expect((await sys.call('GET', '/api/v1/boards', t.as)).status).toBe(200);
    expect(await lastUsed()).toBe(first);
    sys.clock.advance(31_000);
    const later = sys.clock.now().toISOString();
    expect((await sys.call('GET', '/api/v1/boards', t.as)).status).toBe(200);
    await expect.poll(lastUsed).toBe(later);
  });

  it('stops working when it expires', async () => {
    await using sys = await system();
    const alice = await sys.user('alice');
    const t = await token(sys, alice, { scopes: ['read'], expires_at: new Date(sys.clock.now().getTime() + 60_000).toISOString() });
    expect((await sys.call('GET', '/api/v1/boards', t.as)).status).toBe(200);
    sys.clock.advance(61_000);
    expectError(await sys.call('GET', '/api/v1/boards', t.as), 401, 'UNAUTHORIZED');
  });

  it('answers an unknown bts_ token with 401', async () => {
    await using sys = await system();
    const alice = await sys.user('alice');
    expectError(await sys.call('GET', '/api/v1/boards', withToken(alice, 'bts_not-a-real-token')), 401, 'UNAUTHORIZED');
  });

  it.each([
    ['no scopes', { scopes: [] }, '/scopes'],
    ['an unknown scope', { scopes: ['root'] }, '/scopes/0'],
    ['a repeated scope', { scopes: ['read', 'read'] }, '/scopes'],
    ['an expiry in the past', { scopes: ['read'], expires_at: '2020-01-01T00:00:00Z' }, '/expires_at'],
    ['an expiry that is no date', { scopes: ['read'], expires_at: 'soon' }, '/expires_at'],
    ['a board the user cannot read', { scopes: ['read'], board_ids: ['no-such-board'] }, '/board_ids/0'],
    ['an empty name', { name: '', scopes: ['read'] }, '/name'],
  ])('refuses %s with a 400 naming the field', async (_name, body, field) => {
    await using sys = await system();
    const alice = await sys.user('alice');
    const res = await sys.call('POST', '/api/v1/tokens', alice, { name: 'agent', ...body });
    const err = expectError(res, 400, 'VALIDATION_FAILED');
    expect(err.validationErrors.map((e: { field: string }) => e.field)).toContain(field);
  });

  it("answers 404 for revoking another user's token, which keeps working", async () => {
    await using sys = await system();
    const [alice, bob] = [await sys.user('alice'), await sys.user('bob')];
    const t = await token(sys, alice, { scopes: ['read'] });
    expectError(await sys.call('DELETE', `/api/v1/tokens/${t.id}`, bob), 404, 'TOKEN_NOT_FOUND');
    expect((await sys.call('GET', '/api/v1/boards', t.as)).status).toBe(200);
  });
});

describe('scopes', () => {
  it('lets a read token read and refuses its writes with 403 INSUFFICIENT_SCOPE, writing nothing', async () => {
    await using sys = await system();
    const alice = await sys.user('alice');
    const t = await token(sys, alice, { scopes: ['read'] });
    expect((await sys.call('POST', '/api/v1/tasks/query', t.as, { query: '' })).status).toBe(200);
    const err = expectError(await sys.call('POST', '/api/v1/tasks', t.as, { title: 'no' }), 403, 'INSUFFICIENT_SCOPE');
    expect(err.details).toMatchObject({ required: 'write' });
    expect((await sys.call('POST', '/api/v1/tasks/query', alice, { query: '' })).body.total).toBe(0);
  });

  it('refuses a read token\'s write with 403 INSUFFICIENT_SCOPE before looking at its body (scope before schema)', async () => {
    await using sys = await system();
    const alice = await sys.user('alice');
    const t = await token(sys, alice, { scopes: ['read'] });
    for (const body of [{ title: 5, nonsense: true }, {}, []]) {
      const err = expectError(await sys.call('POST', '/api/v1/tasks', t.as, body), 403, 'INSUFFICIENT_SCOPE');
      expect(err.details).toMatchObject({ required: 'write' });
    }
    expectError(await sys.call('POST', '/api/v1/boards', t.as, { columns: 'x' }), 403, 'INSUFFICIENT_SCOPE');
    // the user itself still learns what is wrong with the body
    expectError(await sys.call('POST', '/api/v1/tasks', alice, { title: 5 }), 400, 'VALIDATION_FAILED');
  });

  it('needs admin for boards and tokens; write alone covers tasks and cards', async () => {
    await using sys = await system();
    const alice = await sys.user('alice');
    const board = await sys.call('POST', '/api/v1/boards', alice, { name: 'B', board_type: 'private' });
    const t = await token(sys, alice, { scopes: ['write'] });
    expect((await sys.call('POST', `/api/v1/boards/${board.body.id}/tasks`, t.as, { title: 'card', status: 'todo' })).status).toBe(201);
    expectError(await sys.call('POST', '/api/v1/boards', t.as, { name: 'C', board_type: 'private' }), 403, 'INSUFFICIENT_SCOPE');
    expectError(await sys.call('GET', '/api/v1/tokens', t.as), 403, 'INSUFFICIENT_SCOPE');
    const admin = await token(sys, alice, { scopes: ['admin'] });
    expect((await sys.call('POST', '/api/v1/boards', admin.as, { name: 'C', board_type: 'private' })).status).toBe(201);
  });

  it('never lets a token create a token with more than it has', async () => {
    await using sys = await system();
    const alice = await sys.user('alice');
    const board = await sys.call('POST', '/api/v1/boards', alice, { name: 'B', board_type: 'private' });
    const admin = await token(sys, alice, { scopes: ['admin'], board_ids: [board.body.id] });
    expectError(await sys.call('POST', '/api/v1/tokens', admin.as, { name: 'x', scopes: ['write'], board_ids: [board.body.id] }), 403, 'INSUFFICIENT_SCOPE');
    expectError(await sys.call('POST', '/api/v1/tokens', admin.as, { name: 'x', scopes: ['read'] }), 403, 'INSUFFICIENT_SCOPE');
    expect((await sys.call('POST', '/api/v1/tokens', admin.as, { name: 'x', scopes: ['read'], board_ids: [board.body.id] })).status).toBe(201);
  });

  it("does at most what its user can: an admin token of a reader cannot change another's board", async () => {
    await using sys = await system();
    const [alice, bob] = [await sys.user('alice'), await sys.user('bob')];
    const board = await sys.call('POST', '/api/v1/boards', alice, { name: 'B', board_type: 'private' });
    const t = await token(sys, bob, { scopes: ['read', 'write', 'admin'] });
    expectError(await sys.call('PUT', `/api/v1/boards/${board.body.id}`, t.as, { name: 'mine now' }), 404, 'BOARD_NOT_FOUND');
  });

  it('names the token beside the user in the events of its writes', async () => {
    await using sys = await system();
    const alice = await sys.user('alice');
    const t = await token(sys, alice, { scopes: ['write'] });
    const byToken = await sys.call('POST', '/api/v1/tasks', t.as, { title: 'by the agent' });
    const byHand = await sys.call('POST', '/api/v1/tasks', alice, { title: 'by hand' });
    const feed = await sys.call('GET', '/api/v1/events', alice);
    const created = (id: string) => feed.body.data.find((e: { task_id?: string }) => e.task_id === id);
    expect(created(byToken.body.id)).toMatchObject({ type: 'task.created', actor: alice.id, actor_token: t.id });
    expect(created(byHand.body.id)).toMatchObject({ type: 'task.created', actor: alice.id });
    expect(created(byHand.body.id).actor_token).toBeUndefined();
  });

  it('limits requests per token (RATE_LIMIT_TOKEN_MAX a minute), not per user', async () => {
    await using sys = await system({ env: { RATE_LIMIT_TOKEN_MAX: '3' } });
    const alice = await sys.user('alice');
    const t = await token(sys, alice, { scopes: ['read'] });
    for (let i = 0; i < 3; i++) expect((await sys.call('GET', '/api/v1/boards', t.as)).status).toBe(200);
    expectError(await sys.call('GET', '/api/v1/boards', t.as), 429, 'RATE_LIMITED');
    expect((await sys.call('GET', '/api/v1/boards', alice)).status).toBe(200);
    const other = await token(sys, alice, { scopes: ['read'] });
    expect((await sys.call('GET', '/api/v1/boards', other.as)).status).toBe(200);
  });
});

describe('a token narrowed to boards', () => {
  /** alice: a private board, and a board shared with bob's group; one card on each, one loose task. */
  async function world() {
    const sys = await system();
    const [alice, bob] = [await sys.user('alice'), await sys.user('bob')];
    const group = await sys.call('POST', '/api/v1/groups', alice, { name: 'crew' });
    await sys.call('POST', `/api/v1/groups/${group.body.id}/members`, alice, { user_id: bob.id });
    const mine = await sys.call('POST', '/api/v1/boards', alice, { name: 'Mine', board_type: 'private' });
    const team = await sys.call('POST', '/api/v1/boards', alice, { name: 'Team', board_type: 'private' });
    expect((await sys.call('POST', `/api/v1/boards/${team.body.id}/share`, alice, { group_id: group.body.id, permission: 'rw' })).status).toBe(200);
    const teamCard = await sys.call('POST', `/api/v1/boards/${team.body.id}/tasks`, alice, { title: 'team card', status: 'todo' });
    const loose = await sys.call('POST', '/api/v1/tasks', alice, { title: 'private task' });
    return { sys, alice, bob, mine: mine.body.id as string, team: team.body.id as string, teamCard: teamCard.body.id as string, loose: loose.body.id as string };
  }

  it('reaches only its boards and their cards', async () => {
    const w = await world();
    await using _ = w.sys;
    const t = await token(w.sys, w.alice, { scopes: ['read', 'write'], board_ids: [w.team] });
    const boards = await w.sys.call('GET', '/api/v1/boards', t.as);
    expect([...boards.body.owned_boards, ...boards.body.shared_boards].map((b: { id: string }) => b.id)).toEqual([w.team]);
    expectError(await w.sys.call('GET', `/api/v1/boards/${w.mine}`, t.as), 404, 'BOARD_NOT_FOUND');
    expect((await w.sys.call('GET', `/api/v1/tasks/${w.teamCard}`, t.as)).status).toBe(200);
    expectError(await w.sys.call('GET', `/api/v1/tasks/${w.loose}`, t.as), 404, 'TASK_NOT_FOUND');
    expectError(await w.sys.call('PATCH', `/api/v1/tasks/${w.loose}`, t.as, { title: 'x' }), 404, 'TASK_NOT_FOUND');
    const found = await w.sys.call('POST', '/api/v1/tasks/query', t.as, { query: '' });
    expect(found.body.data.map((x: { id: string }) => x.id)).toEqual([w.teamCard]);
    const events = await w.sys.call('GET', '/api/v1/events', t.as);
    expect(events.body.data.length).toBeGreaterThan(0);
    expect(events.body.data.every((e: { task_id?: string; board_id?: string }) => e.task_id === w.teamCard || (e.task_id === undefined && e.board_id === w.team))).toBe(true);
  });

  it('creates no task outside its boards: POST /tasks with a token of a group board is a 403, writing nothing; on the board it creates the card', async () => {
    const w = await world();
    await using _ = w.sys;
    const t = await token(w.sys, w.alice, { scopes: ['read', 'write'], board_ids: [w.team] });
    const before = (await w.sys.call('POST', '/api/v1/tasks/query', w.alice, { query: '' })).body.total;
    const refused = await w.sys.call('POST', '/api/v1/tasks', t.as, { title: 'off the board' });
    expectError(refused, 403, 'FORBIDDEN');
    expect(refused.body.details).toEqual({ board_ids: [w.team] });
    const batch = await w.sys.call('POST', '/api/v1/tasks/batch', t.as, { tasks: [{ title: 'off the board too' }] });
    expect(batch.body.results[0].error.code).toBe('FORBIDDEN');
    expect((await w.sys.call('POST', '/api/v1/tasks/query', w.alice, { query: '' })).body.total).toBe(before);
    const card = await w.sys.call('POST', `/api/v1/boards/${w.team}/tasks`, t.as, { title: 'on the board', status: 'todo' });
    expect(card.status).toBe(201);
    expect((await w.sys.call('GET', `/api/v1/tasks/${card.body.id}`, t.as)).status).toBe(200);
    // a token of a private board reaches its user's tasks: a task it creates stays within reach
    const own = await token(w.sys, w.alice, { scopes: ['read', 'write'], board_ids: [w.mine] });
    const created = await w.sys.call('POST', '/api/v1/tasks', own.as, { title: 'mine' });
    expect(created.status).toBe(201);
    expect((await w.sys.call('GET', `/api/v1/tasks/${created.body.id}`, own.as)).status).toBe(200);
  });

  it('on a private board reaches every task its user can', async () => {
    const w = await world();
    await using _ = w.sys;
    const t = await token(w.sys, w.alice, { scopes: ['read'], board_ids: [w.mine] });
    expect((await w.sys.call('GET', `/api/v1/tasks/${w.loose}`, t.as)).status).toBe(200);
    expectError(await w.sys.call('GET', `/api/v1/boards/${w.team}`, t.as), 404, 'BOARD_NOT_FOUND');
  });
});
