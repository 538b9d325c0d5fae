import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCodes } from '@app/shared/errors';
import { Api, ApiError, errorText, retryDelay, SESSION_KEY, type Connectivity, type SessionStore } from '../src/api/client.js';
import { CODE_SENTENCES } from '../src/api/humane.js';
import { leaseHolder, staleMoveText, timeLeft } from '../src/board/state.js';

/**
 * The client's daily-use rules without a browser: plain wording for every error code, outages
 * (no answer → `NETWORK`, offline with a backoff, online again with the next answer), the session
 * that ends only when the server refuses the refresh (not when it cannot be reached), and the
 * wording of leases and stale moves.
 */

let server: Server;
let base: string;
/** How the test server answers: `refuse` the refresh, or a status for everything else. */
let mode: { refresh: 'ok' | 'refuse'; status: number } = { refresh: 'ok', status: 200 };

beforeAll(async () => {
  server = createServer((req, res) => {
    if (req.url === '/auth/refresh-token') {
      if (mode.refresh === 'refuse') {
        res.writeHead(401, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ code: 'REFRESH_TOKEN_INVALID', message: 'The refresh token is invalid' }));
      } else {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ accessToken: 'a2', refreshToken: 'r2', tokenType: 'Bearer', expiresIn: 900, userId: 'u1', userName: 'ada' }));
      }
      return;
    }
    res.writeHead(mode.status, { 'content-type': 'application/json' });
    res.end(mode.status === 200 ? '{"owned_boards":[],"shared_boards":[]}' : JSON.stringify({ code: 'UNAUTHORIZED', message: 'Authentication is required' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

function memoryStore(expiresInMs = 600_000): SessionStore {
  const m = new Map<string, string>([[SESSION_KEY, JSON.stringify({ accessToken: 'a1', refreshToken: 'r1', expiresAt: Date.now() + expiresInMs, userId: 'u1', userName: 'ada' })]]);
  return { getItem: (k) => m.get(k) ?? null, setItem: (k, v) => void m.set(k, v), removeItem: (k) => void m.delete(k) };
}

describe('plain wording', () => {
  it('has a sentence without an id for every code of the catalogue', () => {
    for (const code of Object.keys(ErrorCodes)) {
      const sentence = CODE_SENTENCES[code];
      expect(sentence, code).toBeDefined();
      expect(sentence, code).toMatch(/^[A-Za-z“(].*[.?!]$/);
    }
  });

  it('says a request that got no answer, and a bug of the page, in words (never TypeError)', () => {
    expect(errorText(new TypeError('Failed to fetch'))).toBe('The server cannot be reached; nothing was saved. Try again once it is back.');
    expect(errorText(new Error('x is undefined'))).toBe('Something went wrong in the page; reload it and try again.');
    expect(errorText(new TypeError("can't access property 'id' of undefined"))).toBe('Something went wrong in the page; reload it and try again.');
    const stale = new ApiError(409, { code: 'KANBAN_TASK_NOT_IN_SOURCE_COLUMN', message: 'The card is no longer in column col-to-do; refresh the board and retry' });
    expect(errorText(stale)).toBe('The card changed elsewhere and is no longer in that column.');
    expect(errorText(new ApiError(502, { code: 'HTTP_502', message: 'Bad Gateway' }))).toBe(CODE_SENTENCES.NETWORK);
    expect(errorText(new ApiError(404, { code: 'USER_NOT_FOUND', message: 'No user is called “nobody”' }))).toBe('No user is called “nobody”');
  });

  it('says a stale move in one sentence with the lane by name', () => {
    expect(staleMoveText('Onboarding checklist', 'To Do', 'review')).toBe(
      '“Onboarding checklist” was not moved: it changed elsewhere (status is now “review”) and is no longer in To Do. The board now shows where it is.',
    );
  });

  it('names the holder token and its user, and the time left, of a lease', () => {
    const lease = { id: 'l', holder: 'u1', board_id: 'b', column_id: 'c', claimed_at: '2026-03-02T09:00:00.000Z', expires_at: '2026-03-02T10:05:00.000Z' };
    const people = new Map([['u1', 'ada']]);
    expect(leaseHolder(lease, people)).toBe('ada');
    expect(leaseHolder({ ...lease, holder_token: 't1', holder_token_name: 'triage agent' }, people)).toBe('“triage agent”, a token of ada');
    expect(leaseHolder({ ...lease, holder_token: 't1' }, people)).toBe('an access token of ada');
    expect(leaseHolder({ ...lease, holder: 'u9' }, people)).toBe('someone not on this board');
    expect(timeLeft(lease.expires_at, new Date('2026-03-02T10:04:20.000Z'))).toBe('40 s left');
    expect(timeLeft(lease.expires_at, new Date('2026-03-02T09:53:00.000Z'))).toBe('12 min left');
    expect(timeLeft(lease.expires_at, new Date('2026-03-02T08:00:00.000Z'))).toBe('2 h 5 min left');
  });
});

describe('outages and sessions', () => {
  it('backs off 1, 2, 4, 8, 16 then 30 s between checks', () => {
    expect([0, 1, 2, 3, 4, 5, 6, 9].map(retryDelay)).toEqual([1000, 2000, 4000, 8000, 16000, 30000, 30000, 30000]);
  });

  it('goes offline when a request gets no answer, with a NETWORK error, and online with the next answer', async () => {
    const api = new Api('http://127.0.0.1:1', memoryStore());
    const seen: Connectivity['state'][] = [];
    api.onConnectivity((c) => seen.push(c.state));
    const err = await api.listBoards().catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 0, code: 'NETWORK' });
    expect(api.connectivity).toMatchObject({ state: 'offline', attempts: 0 });
    expect(api.session?.accessToken).toBe('a1'); // an outage ends no session
    // the same client pointed at a server that answers: online again
    (api as unknown as { base: string }).base = base;
    mode = { refresh: 'ok', status: 200 };
    expect(await api.retryNow()).toBe(true);
    expect(seen).toEqual(['offline', 'online']);
  });

  it('ends the session as expired only when the server refuses the refresh, and keeps it when the server cannot be reached', async () => {
    const reasons: string[] = [];
    const unreachable = new Api('http://127.0.0.1:1', memoryStore(1_000)); // about to expire: refreshes first
    unreachable.onSessionEnd = (r) => reasons.push(r);
    expect(await unreachable.refresh()).toBe(false);
    expect(unreachable.session).not.toBeNull();
    expect(reasons).toEqual([]);

    mode = { refresh: 'refuse', status: 401 };
    const refused = new Api(base, memoryStore());
    refused.onSessionEnd = (r) => reasons.push(r);
    const err = await refused.listBoards().catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 401 });
    expect(refused.session).toBeNull();
    expect(reasons).toEqual(['expired']);
    refused.logout();
    expect(reasons).toEqual(['expired', 'logout']);
  });
});
