import { Type } from '@sinclair/typebox';
import { describe, expect, it } from 'vitest';
import { bind, currentGrant, dispatch, grantFrom, grantHeaders, type Reply } from '@app/shared/bus';
import {
  BoardsOps, EventsOps, GroupsOps, LeasesOps, OP_SCOPES, op, QueryOps, scopeOf, scopesAllow, SprintsOps, TasksOps, ViewsOps, WebhooksOps, type TokenGrant,
} from '@app/shared/contracts';
import { silentLogger } from '@app/shared/log';

/** Access token grants on the bus (docs/auth.md "Access tokens"): the op's scope is checked before its handler runs. */

const Write = op({ subject: 'tasks.update', request: Type.Object({ id: Type.String() }), response: Type.Object({ seen: Type.Unknown() }) });
let calls = 0;
const write = bind(Write, async () => {
  calls++;
  return { seen: currentGrant() ?? null };
});
const grant = (scopes: TokenGrant['scopes']): TokenGrant => ({ tokenId: 't1', userId: 'u1', scopes });

async function reply(g: TokenGrant | undefined, payload = '{"id":"x"}'): Promise<Reply> {
  return JSON.parse(await dispatch(write, payload, { userId: 'u1', ...(g ? { grant: g } : {}) }, Write.subject, silentLogger())) as Reply;
}

describe('scopes on the bus', () => {
  it('refuses an op outside the grant before validating its input or running its handler', async () => {
    calls = 0;
    expect(await reply(grant(['read']), '{}')).toMatchObject({ ok: false, error: { code: 'INSUFFICIENT_SCOPE', details: { required: 'write' } } });
    expect(calls).toBe(0);
  });

  it('runs the handler with the grant as the current one, and without one for a JWT call', async () => {
    expect(await reply(grant(['write']))).toEqual({ ok: true, data: { seen: grant(['write']) } });
    expect(await reply(undefined)).toEqual({ ok: true, data: { seen: null } });
  });

  it('lets write and admin include read, but neither includes the other', () => {
    expect(scopesAllow(['write'], 'read')).toBe(true);
    expect(scopesAllow(['admin'], 'read')).toBe(true);
    expect(scopesAllow(['admin'], 'write')).toBe(false);
    expect(scopesAllow(['write'], 'admin')).toBe(false);
    expect(scopesAllow([], 'read')).toBe(false);
  });

  it('names the scope of every op the services serve, and needs admin for an unlisted one', () => {
    const all = [BoardsOps, GroupsOps, LeasesOps, EventsOps, WebhooksOps, QueryOps, SprintsOps, TasksOps, ViewsOps].flatMap((ops) => Object.values(ops));
    expect(all.filter((o) => OP_SCOPES[o.subject] === undefined).map((o) => o.subject)).toEqual([]);
    expect(scopeOf({ subject: 'brand.new' })).toBe('admin');
  });

  it('carries a grant through wire headers, dropping unknown scope names', () => {
    const g: TokenGrant = { tokenId: 't1', userId: 'u1', scopes: ['read', 'write'], boardIds: ['b1', 'b2'] };
    const h = new Map(grantHeaders(g));
    expect(grantFrom((n) => h.get(n), 'u1')).toEqual(g);
    h.set('x-token-scopes', 'read,root');
    expect(grantFrom((n) => h.get(n), 'u1')?.scopes).toEqual(['read']);
    expect(grantFrom(() => undefined, 'u1')).toBeUndefined();
  });

  it('carries the token name through wire headers, non-ASCII included, and drops a garbled one', () => {
    const g: TokenGrant = { tokenId: 't1', tokenName: 'triage agent, “Ada” #2', userId: 'u1', scopes: ['write'] };
    const h = new Map(grantHeaders(g));
    expect(grantFrom((n) => h.get(n), 'u1')).toEqual(g);
    h.set('x-token-name', '%E0%A4%A');
    expect(grantFrom((n) => h.get(n), 'u1')).toEqual({ tokenId: 't1', userId: 'u1', scopes: ['write'] });
  });
});
