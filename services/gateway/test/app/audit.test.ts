import { afterEach, describe, expect, it } from 'vitest';
import { Collections } from '@app/shared/store';
import { expectError, system, type Answer, type System, type User } from './system.js';

/*
 * The audit log end to end: each security-relevant action, done over HTTP on the whole system,
 * writes exactly one entry that an administrator reads at GET /api/v1/audit; nothing secret is
 * recorded; other users are refused.
 */

let sys: System | undefined;
afterEach(async () => {
  await sys?.[Symbol.asyncDispose]();
  sys = undefined;
});

const PASSWORD = 'correct horse battery';

async function start(): Promise<{ s: System; root: User; alice: User; bob: User }> {
  sys = await system({ env: { ADMIN_USERNAME: 'root', WEBHOOK_ALLOW_PRIVATE: 'true' } });
  return { s: sys, root: await sys.user('root'), alice: await sys.user('alice'), bob: await sys.user('bob') };
}

/** Every entry of `action` (all pages), as the administrator reads them. */
async function entries(s: System, root: User, action: string): Promise<any[]> {
  const out: any[] = [];
  let after: string | undefined;
  for (;;) {
    const res = await s.call('GET', `/api/v1/audit?action=${action}&limit=2${after ? `&after=${encodeURIComponent(after)}` : ''}`, root);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    out.push(...res.body.data);
    if (res.body.data.length === 0) return out;
    after = res.body.next_after;
  }
}

/** The one entry of `action` on `target` (fails on none or more). */
async function one(s: System, root: User, action: string, target: string): Promise<any> {
  const found = (await entries(s, root, action)).filter((e) => e.target === target);
  expect(found, `${action} on ${target}`).toHaveLength(1);
  return found[0];
}

function ok(res: Answer, status = 200): any {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  return res.body;
}

describe('audit log', () => {
  it('records a sign-in with its method and source address, and a failed one with the name tried', async () => {
    const { s, root, alice } = await start();
    const signIn = await one(s, root, 'auth.login', `user:${alice.id}`);
    expect(signIn).toMatchObject({
      actor: alice.id, outcome: 'success', details: { method: 'password' }, source_address: '127.0.0.1',
      request_id: expect.any(String), at: expect.any(String), id: expect.any(String),
    });
    const bad = await s.call('POST', '/auth/v2/login', undefined, { username: 'alice', password: 'wrong password!' }, { 'x-request-id': 'req-bad-login' });
    expectError(bad, 401, 'INVALID_CREDENTIALS');
    const failures = (await entries(s, root, 'auth.login')).filter((e) => e.outcome === 'failure');
    expect(failures).toEqual([expect.objectContaining({ actor: alice.id, request_id: 'req-bad-login', details: { method: 'password', username: 'alice' } })]);
    const unknown = await s.call('POST', '/auth/v2/login', undefined, { username: 'nobody', password: 'wrong password!' });
    expectError(unknown, 401, 'INVALID_CREDENTIALS');
    const last = (await entries(s, root, 'auth.login')).at(-1);
    expect(last).toMatchObject({ actor: null, outcome: 'failure', details: { username: 'nobody' } });
  });

  it('records logout and refresh-token reuse, once each', async () => {
    const { s, root, alice } = await start();
    const login = ok(await s.call('POST', '/auth/v2/login', undefined, { username: 'alice', password: PASSWORD }));
    const rotated = ok(await s.call('POST', '/auth/refresh-token', undefined, { refreshToken: login.refreshToken }));
    expectError(await s.call('POST', '/auth/refresh-token', undefined, { refreshToken: login.refreshToken }), 401, 'REFRESH_TOKEN_INVALID');
    expect(await one(s, root, 'auth.refresh_reuse', `user:${alice.id}`)).toMatchObject({ actor: alice.id, outcome: 'success' });
    // the family is revoked: logging out with its newest token is refused, and records nothing
    expectError(await s.call('POST', '/auth/logout', undefined, { refreshToken: rotated.refreshToken }), 401, 'REFRESH_TOKEN_INVALID');
    expect(await entries(s, root, 'auth.logout')).toEqual([]);
    const again = ok(await s.call('POST', '/auth/v2/login', undefined, { username: 'alice', password: PASSWORD }));
    expect((await s.call('POST', '/auth/logout', undefined, { refreshToken: again.refreshToken })).status).toBe(204);
    expect(await one(s, root, 'auth.logout', `user:${alice.id}`)).toMatchObject({ actor: alice.id });
    expectError(await s.call('POST', '/auth/refresh-token', undefined, { refreshToken: again.refreshToken }), 401, 'REFRESH_TOKEN_INVALID');
  });

  it('records access-token create and revoke, without the secret', async () => {
    const { s, root, alice } = await start();
    const token = ok(await s.call('POST', '/api/v1/tokens', alice, { name: 'ci', scopes: ['read'] }), 201);
    expect(await one(s, root, 'token.create', `token:${token.id}`)).toMatchObject({ actor: alice.id, details: { name: 'ci', scopes: ['read'] } });
    expect((await s.call('DELETE', `/api/v1/tokens/${token.id}`, alice)).status).toBe(204);
    expect((await s.call('DELETE', `/api/v1/tokens/${token.id}`, alice)).status).toBe(204);
    expect(await one(s, root, 'token.revoke', `token:${token.id}`)).toMatchObject({ actor: alice.id });
    const all = JSON.stringify(await s.call('GET', '/api/v1/audit?limit=500', root));
    expect(all).not.toContain(token.token);
  });

  it('records group membership changes, board share, permission change, unshare and delete', async () => {
    const { s, root, alice, bob } = await start();
    const group = ok(await s.call('POST', '/api/v1/groups', alice, { name: 'team' }), 201);
    const g = `group:${group.id}`;
    expect(await one(s, root, 'group.create', g)).toMatchObject({ actor: alice.id, details: { name: 'team' } });
    ok(await s.call('POST', `/api/v1/groups/${group.id}/members`, alice, { user_id: bob.id }));
    expect(await one(s, root, 'group.member_add', g)).toMatchObject({ details: { user_id: bob.id, role: 'member' } });
    ok(await s.call('POST', `/api/v1/groups/${group.id}/members`, alice, { user_id: bob.id, role: 'admin' }));
    expect(await one(s, root, 'group.member_role', g)).toMatchObject({ details: { user_id: bob.id, role: 'admin', previous_role: 'member' } });
    ok(await s.call('DELETE', `/api/v1/groups/${group.id}/members/${bob.id}`, alice));
    // removing someone no longer a member changes nothing and records nothing
    ok(await s.call('DELETE', `/api/v1/groups/${group.id}/members/${bob.id}`, alice));
    expect(await one(s, root, 'group.member_remove', g)).toMatchObject({ actor: alice.id, details: { user_id: bob.id } });

    const board = ok(await s.call('POST', '/api/v1/boards', alice, { name: 'Plans', board_type: 'private' }), 201);
    const b = `board:${board.id}`;
    ok(await s.call('POST', `/api/v1/boards/${board.id}/share`, alice, { group_id: group.id, permission: 'r' }));
    expect(await one(s, root, 'board.share', b)).toMatchObject({ actor: alice.id, details: { group_id: group.id, permission: 'r' } });
    ok(await s.call('POST', `/api/v1/boards/${board.id}/share`, alice, { group_id: group.id, permission: 'rw' }));
    const shares = (await entries(s, root, 'board.share')).filter((e) => e.target === b);
    expect(shares.map((e) => e.details)).toEqual([
      { group_id: group.id, permission: 'r' },
      { group_id: group.id, permission: 'rw', previous_group_id: group.id, previous_permission: 'r' },
    ]);
    ok(await s.call('DELETE', `/api/v1/boards/${board.id}/share`, alice));
    expect(await one(s, root, 'board.unshare', b)).toMatchObject({ details: { group_id: group.id } });
    expect((await s.call('DELETE', `/api/v1/boards/${board.id}`, alice)).status).toBe(204);
    expect(await one(s, root, 'board.delete', b)).toMatchObject({ actor: alice.id, details: { name: 'Plans' } });
  });

  it('writes nothing for an action that fails', async () => {
    const { s, root, alice, bob } = await start();
    const board = ok(await s.call('POST', '/api/v1/boards', alice, { name: 'Mine', board_type: 'private' }), 201);
    expect((await s.call('DELETE', `/api/v1/boards/${board.id}`, bob)).status).toBe(404);
    expect(await entries(s, root, 'board.delete')).toEqual([]);
  });

  it('records webhook create, update and delete with the target host only, never its credentials, path or secret', async () => {
    const { s, root, alice } = await start();
    const url = 'http://127.0.0.1:9/services/T0SECRETPATH?token=querysecret';
    const hook = ok(await s.call('POST', '/api/v1/webhooks', alice, { url, events: ['task.created'] }), 201);
    const w = `webhook:${hook.id}`;
    expect(await one(s, root, 'webhook.create', w)).toMatchObject({ actor: alice.id, details: { host: '127.0.0.1:9', events: ['task.created'], active: true } });
    ok(await s.call('PATCH', `/api/v1/webhooks/${hook.id}`, alice, { active: false }));
    expect(await one(s, root, 'webhook.update', w)).toMatchObject({ details: { active: false, changed: ['active'] } });
    expect((await s.call('DELETE', `/api/v1/webhooks/${hook.id}`, alice)).status).toBe(204);
    expect(await one(s, root, 'webhook.delete', w)).toMatchObject({ actor: alice.id });
    const stored = JSON.stringify(await s.store.collection(Collections.audit).find({}));
    for (const secret of ['T0SECRETPATH', 'querysecret', hook.secret, PASSWORD]) expect(stored).not.toContain(secret);
  });

  it('is readable by administrators only: the ADMIN_USERNAME account or the admin role', async () => {
    const { s, root, alice, bob } = await start();
    expectError(await s.call('GET', '/api/v1/audit', alice), 403, 'ADMIN_ONLY');
    expectError(await s.call('GET', '/api/v1/audit'), 401, 'UNAUTHORIZED');
    ok(await s.call('GET', '/api/v1/audit', root));
    await s.store.collection(Collections.users).updateOne({ _id: bob.id }, { $set: { role: 'admin' } });
    ok(await s.call('GET', '/api/v1/audit', bob));
  });

  it('filters by actor, action and time, pages by cursor and refuses a bad filter', async () => {
    const { s, root, alice } = await start();
    const mine = ok(await s.call('GET', `/api/v1/audit?actor=${alice.id}`, root));
    expect(mine.data.map((e: any) => [e.actor, e.action])).toEqual([[alice.id, 'auth.login']]);
    const before = ok(await s.call('GET', '/api/v1/audit?to=2000-01-01T00:00:00Z', root));
    expect(before).toEqual({ data: [], next_after: null });
    const since = ok(await s.call('GET', `/api/v1/audit?from=${encodeURIComponent(mine.data[0].at)}&action=auth.login`, root));
    expect(since.data.length).toBeGreaterThanOrEqual(1);
    const page = ok(await s.call('GET', '/api/v1/audit?limit=1', root));
    const next = ok(await s.call('GET', `/api/v1/audit?limit=1&after=${encodeURIComponent(page.next_after)}`, root));
    expect(next.data[0].id > page.data[0].id).toBe(true);
    const end = ok(await s.call('GET', `/api/v1/audit?after=${encodeURIComponent('9999')}`, root));
    expect(end).toEqual({ data: [], next_after: '9999' });
    const bad = expectError(await s.call('GET', '/api/v1/audit?action=board.explode', root), 400, 'VALIDATION_FAILED');
    expect(JSON.stringify(bad)).toContain('action');
    expectError(await s.call('GET', '/api/v1/audit?from=yesterday', root), 400, 'VALIDATION_FAILED');
  });

  it('keeps entries for AUDIT_RETENTION_DAYS through a TTL index on expires_at', async () => {
    sys = await system({ env: { ADMIN_USERNAME: 'root', AUDIT_RETENTION_DAYS: '30' } });
    const root = await sys.user('root');
    const [entry] = await sys.store.collection(Collections.audit).find({ actor: root.id });
    expect(Date.parse(String(entry!.expires_at)) - Date.parse(String(entry!.at))).toBe(30 * 86_400_000);
  });
});
