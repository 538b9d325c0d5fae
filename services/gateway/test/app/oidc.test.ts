import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError } from '@app/shared/config';
import { systemClock } from '@app/shared/domain';
import { silentLogger } from '@app/shared/log';
import { MemoryBus } from '@app/shared/bus';
import { testStore } from '@app/shared/testing';
import { buildApp } from '../../src/index.js';
import { OIDC_TIMEOUT_SECONDS } from '../../src/auth/oidc.js';
import { testConfig } from './helpers.js';
import { CLIENT_ID, CLIENT_SECRET, REDIRECT, TestProvider } from './oidc-provider.js';
import { expectError, system, type Answer, type System } from './system.js';

/*
 * OpenID Connect sign-in end to end: a real OpenID provider (`oidc-provider`) on a loopback
 * port, the whole system behind the gateway, and the browser's part played by following the
 * HTTP redirects (login and consent forms of the provider included).
 */

let sys: System | undefined;
let idp: TestProvider | undefined;
afterEach(async () => {
  await sys?.[Symbol.asyncDispose]();
  await idp?.close();
  sys = undefined;
  idp = undefined;
});

async function start(env: Record<string, string> = {}, latencyMs = 0): Promise<{ s: System; p: TestProvider }> {
  idp = await TestProvider.start();
  idp.accounts.set('acc-alice', { preferred_username: 'alice', email: 'alice@example.com', email_verified: true });
  // the services' clock is the real time: the ID token's expiry is checked against it
  sys = await system({
    clockAt: new Date().toISOString(),
    oidcFetch: idp.fetchFor,
    // on the snapshot leg, a round trip per store call (the windows in which sign-ins overlap)
    ...(latencyMs ? { store: () => testStore({ latencyMs }) } : {}),
    env: {
      OIDC_ISSUER: idp.issuer, OIDC_CLIENT_ID: CLIENT_ID, OIDC_CLIENT_SECRET: CLIENT_SECRET, OIDC_REDIRECT_URL: REDIRECT,
      OIDC_ALLOW_HTTP: 'true', OIDC_PROVIDER_NAME: 'Example SSO', ADMIN_USERNAME: 'root', ...env,
    },
  });
  return { s: sys, p: idp };
}

/** `GET /auth/oidc/login`: the provider's URL and the sign-in cookie (name=value). */
async function begin(s: System): Promise<{ location: string; cookie: string; setCookie: string }> {
  const res = await s.app.inject({ method: 'GET', url: '/auth/oidc/login' });
  expect(res.statusCode, res.body).toBe(302);
  const setCookie = String(res.headers['set-cookie']);
  return { location: String(res.headers.location), cookie: setCookie.split(';')[0]!, setCookie };
}

/** The browser's return to the gateway's callback (`url` as the provider sent it), with `cookie`. */
async function callback(s: System, url: URL, cookie: string, json = true): Promise<Answer> {
  const res = await s.app.inject({ method: 'GET', url: `${url.pathname}${url.search}`, headers: { cookie, ...(json ? { accept: 'application/json' } : {}) } });
  return { status: res.statusCode, headers: res.headers, body: res.body === '' ? undefined : res.json() };
}

/** A whole sign-in of `account`, answered as JSON. */
async function signIn(s: System, p: TestProvider, account: string): Promise<Answer> {
  const { location, cookie } = await begin(s);
  return callback(s, await p.signIn(location, account), cookie);
}

describe('OpenID Connect sign-in', () => {
  it('signs a browser in: 302 to the provider with PKCE, back with a one-time code the board exchanges once for the token pair', async () => {
    const { s, p } = await start();
    const { location, cookie, setCookie } = await begin(s);
    expect(setCookie).toMatch(/HttpOnly/);
    expect(setCookie).toMatch(/SameSite=Lax/);
    expect(setCookie).toMatch(/Max-Age=600/);
    const auth = new URL(location);
    expect(auth.origin).toBe(p.issuer);
    expect(auth.searchParams.get('code_challenge_method')).toBe('S256');
    for (const k of ['state', 'nonce', 'code_challenge']) expect(auth.searchParams.get(k)).toMatch(/\S{20,}/);
    const back = await callback(s, await p.signIn(location, 'acc-alice'), cookie, false);
    expect(back.status).toBe(302);
    expect(String(back.headers['set-cookie'])).toMatch(/Max-Age=0/);
    const code = /^\/#oidc_code=(.+)$/.exec(String(back.headers.location))?.[1];
    expect(code).toBeDefined();
    const pair = await s.call('POST', '/auth/oidc/exchange', undefined, { code });
    expect(pair.status).toBe(200);
    expect(pair.body).toMatchObject({ tokenType: 'Bearer', userName: 'alice', accessToken: expect.any(String), refreshToken: expect.any(String) });
    const boards = await s.call('GET', '/api/v1/boards', undefined, undefined, { authorization: `Bearer ${pair.body.accessToken}` });
    expect(boards.status).toBe(200);
    expectError(await s.call('POST', '/auth/oidc/exchange', undefined, { code }), 401, 'OIDC_CODE_INVALID');
  });

  it('answers the token pair as JSON, and finds the same user by the provider\'s sub at the next sign-in even when its username claim changed', async () => {
    const { s, p } = await start();
    const first = await signIn(s, p, 'acc-alice');
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    p.accounts.set('acc-alice', { preferred_username: 'alice.renamed', email: 'alice@example.com', email_verified: true });
    const second = await signIn(s, p, 'acc-alice');
    expect(second.body.userId).toBe(first.body.userId);
    expect(second.body.userName).toBe('alice');
    // a provider account has no password to sign in with
    expectError(await s.call('POST', '/auth/v2/login', undefined, { username: 'alice', password: 'anything at all' }), 401, 'INVALID_CREDENTIALS');
  });

  it('two concurrent first sign-ins of one provider account both sign in, as one user', async () => {
    const { s, p } = await start({}, 2);
    // several accounts, each signed in twice at once, the second a little later each time: one of
    // the pairs overlaps whatever the timing of this machine
    for (let i = 0; i < 6; i++) p.accounts.set(`acc-${i}`, { preferred_username: `twin${i}`, email: `twin${i}@example.com`, email_verified: true });
    const pairs = await Promise.all(Array.from({ length: 6 }, async (_, i) => {
      const [a, b] = [await begin(s), await begin(s)];
      const [backA, backB] = [await p.signIn(a.location, `acc-${i}`), await p.signIn(b.location, `acc-${i}`)];
      return Promise.all([
        callback(s, backA, a.cookie),
        new Promise((r) => setTimeout(r, i * 2)).then(() => callback(s, backB, b.cookie)),
      ]);
    }));
    for (const [i, [x, y]] of pairs.entries()) {
      expect([x.status, y.status], JSON.stringify([x.body, y.body])).toEqual([200, 200]);
      expect(x.body.userName).toBe(`twin${i}`);
      expect(y.body.userId ?? y.body.userName).toBe(x.body.userId ?? x.body.userName);
      expect(await s.store.collection('users').countDocuments({ username: `twin${i}` })).toBe(1);
    }
  });

  it('refuses a callback whose state is not the one this browser started with', async () => {
    const { s, p } = await start();
    const { location, cookie } = await begin(s);
    const back = await p.signIn(location, 'acc-alice');
    back.searchParams.set('state', 'not-the-state-we-sent');
    const res = await callback(s, back, cookie);
    expect(expectError(res, 401, 'OIDC_SIGN_IN_FAILED').details.reason).toMatch(/state/);
  });

  it('refuses a callback without the sign-in cookie', async () => {
    const { s, p } = await start();
    const { location } = await begin(s);
    expectError(await callback(s, await p.signIn(location, 'acc-alice'), 'other=1'), 401, 'OIDC_SIGN_IN_FAILED');
  });

  it('refuses a replayed authorization code', async () => {
    const { s, p } = await start();
    const { location, cookie } = await begin(s);
    const back = await p.signIn(location, 'acc-alice');
    expect((await callback(s, back, cookie)).status).toBe(200);
    const again = await callback(s, back, cookie);
    expect(expectError(again, 401, 'OIDC_SIGN_IN_FAILED').details.reason).toMatch(/invalid_grant/);
  });

  const tampered: Array<[string, (c: Record<string, unknown>) => Record<string, unknown>, RegExp]> = [
    ['a nonce that is not the one sent', (c) => ({ ...c, nonce: 'another-nonce' }), /nonce/],
    ['an expired ID token', (c) => ({ ...c, iat: Math.floor(Date.now() / 1000) - 7200, exp: Math.floor(Date.now() / 1000) - 3600 }), /exp/],
    ['another audience', (c) => ({ ...c, aud: 'some-other-client' }), /aud/],
  ];
  it.each(tampered)('refuses an ID token with %s (validly signed by the provider key)', async (_name, change, reason) => {
    const { s, p } = await start();
    const { location, cookie } = await begin(s);
    const back = await p.signIn(location, 'acc-alice');
    p.change = change;
    const res = await callback(s, back, cookie);
    expect(expectError(res, 401, 'OIDC_SIGN_IN_FAILED').details.reason).toMatch(reason);
    expect((await s.store.collection('users').find({ username: 'alice' })).length).toBe(0);
  });

  it('refuses an account whose e-mail domain is not allowed', async () => {
    const { s, p } = await start({ OIDC_ALLOWED_DOMAINS: 'example.org, corp.example' });
    p.accounts.set('acc-bob', { preferred_username: 'bob', email: 'bob@corp.example', email_verified: true });
    expectError(await signIn(s, p, 'acc-alice'), 403, 'OIDC_DOMAIN_NOT_ALLOWED');
    expect((await signIn(s, p, 'acc-bob')).status).toBe(200);
  });

  it('never joins a provider account to a local account of the same username', async () => {
    const { s, p } = await start();
    const local = await s.user('alice');
    const res = expectError(await signIn(s, p, 'acc-alice'), 409, 'OIDC_USERNAME_TAKEN');
    expect(res.details).toEqual({ username: 'alice' });
    const users = await s.store.collection('users').find({ username: 'alice' });
    expect(users.map((u) => u._id)).toEqual([local.id]);
    expect(users[0]!.oidc).toBeUndefined();
  });

  it('records sign-ins with the provider in the audit log, failures included', async () => {
    const { s, p } = await start();
    const root = await s.user('root');
    const ok = await signIn(s, p, 'acc-alice');
    const { location, cookie } = await begin(s);
    const back = await p.signIn(location, 'acc-alice');
    back.searchParams.set('state', 'wrong');
    await callback(s, back, cookie);
    const log = await s.call('GET', '/api/v1/audit?action=auth.login', root);
    const oidc = log.body.data.filter((e: any) => e.details.method === 'oidc');
    expect(oidc).toEqual([
      expect.objectContaining({ actor: ok.body.userId, outcome: 'success', target: `user:${ok.body.userId}` }),
      expect.objectContaining({ actor: null, outcome: 'failure', details: expect.objectContaining({ code: 'OIDC_SIGN_IN_FAILED' }) }),
    ]);
  });

  it('says how one may sign in, and turns password sign-in and registration off with LOCAL_LOGIN=false', async () => {
    const { s } = await start({ LOCAL_LOGIN: 'false' });
    expect((await s.call('GET', '/auth/methods')).body).toEqual({ password: false, oidc: { name: 'Example SSO' } });
    expectError(await s.call('POST', '/auth/v2/login', undefined, { username: 'x', password: 'whatever1' }), 403, 'LOCAL_LOGIN_DISABLED');
    expectError(await s.call('POST', '/auth/v2/register', undefined, { username: 'newbie', password: 'whatever1' }), 403, 'LOCAL_LOGIN_DISABLED');
  });
});

describe('OpenID Connect configuration', () => {
  async function build(env: Record<string, string>) {
    const store = await testStore();
    try {
      const app = await buildApp({ bus: new MemoryBus(), store, clock: systemClock, log: silentLogger(), config: testConfig(env), webRoot: false });
      return { app, close: async () => { await app.close(); await store.close(); } };
    } catch (e) {
      await store.close();
      throw e;
    }
  }

  it('answers 404 on the sign-in routes when no provider is configured', async () => {
    const { app, close } = await build({});
    try {
      for (const [method, url] of [['GET', '/auth/oidc/login'], ['GET', '/auth/oidc/callback?code=x&state=y']] as const) {
        const res = await app.inject({ method, url });
        expect(res.statusCode, url).toBe(404);
      }
      expect((await app.inject({ method: 'POST', url: '/auth/oidc/exchange', payload: { code: 'x' } })).statusCode).toBe(404);
      expect((await app.inject({ method: 'GET', url: '/auth/methods' })).json()).toEqual({ password: true, oidc: null });
    } finally {
      await close();
    }
  });

  const full = { OIDC_ISSUER: 'http://127.0.0.1:9', OIDC_CLIENT_ID: 'c', OIDC_CLIENT_SECRET: 's', OIDC_REDIRECT_URL: REDIRECT };
  it.each([
    ['OIDC_ALLOW_HTTP=true in production', { ...full, OIDC_ALLOW_HTTP: 'true', NODE_ENV: 'production' }, /OIDC_ALLOW_HTTP/],
    ['a plain-http issuer without OIDC_ALLOW_HTTP', full, /OIDC_ISSUER/],
    ['an issuer without a client id', { OIDC_ISSUER: 'https://idp.example' }, /OIDC_CLIENT_ID/],
    ['LOCAL_LOGIN=false without a provider', { LOCAL_LOGIN: 'false' }, /LOCAL_LOGIN/],
  ])('refuses to start with %s', async (_name, env, message) => {
    const err = await build(env as Record<string, string>).then(async (b) => { await b.close(); return undefined; }, (e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect(String(err)).toMatch(message);
  });

  it('answers 503 when the provider cannot be reached', async () => {
    const { app, close } = await build({ ...full, OIDC_ALLOW_HTTP: 'true' });
    try {
      const res = await app.inject({ method: 'GET', url: '/auth/oidc/login' });
      expect(res.statusCode).toBe(503);
      expect(res.json().code).toBe('OIDC_PROVIDER_UNAVAILABLE');
    } finally {
      await close();
    }
  });

  it('answers 503 within its call time limit when the provider accepts connections and never answers', async () => {
    const silent = createServer(() => {}); // takes each request and never answers it
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as AddressInfo;
    const { app, close } = await build({ ...full, OIDC_ISSUER: `http://127.0.0.1:${port}`, OIDC_ALLOW_HTTP: 'true' });
    try {
      const started = performance.now();
      const res = await app.inject({ method: 'GET', url: '/auth/oidc/login' });
      const waited = performance.now() - started;
      expect(res.statusCode).toBe(503);
      expect(res.json().code).toBe('OIDC_PROVIDER_UNAVAILABLE');
      expect(OIDC_TIMEOUT_SECONDS).toBeLessThanOrEqual(5);
      expect(waited).toBeLessThan(OIDC_TIMEOUT_SECONDS * 1000 + 3_000);
    } finally {
      await close();
      silent.closeAllConnections();
      await new Promise((resolve) => silent.close(resolve));
    }
  }, 20_000);
});
