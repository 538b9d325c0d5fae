import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { claims, craftToken, testApp, type TestApp } from './helpers.js';

const URL = '/api/v1/widgets/w1';
let t: TestApp;
beforeAll(async () => {
  t = await testApp();
});
afterAll(async () => {
  await t[Symbol.asyncDispose]();
});

const get = (authorization?: string) =>
  t.app.inject({ method: 'GET', url: URL, headers: authorization === undefined ? {} : { authorization } });

describe('bearer token verification', () => {
  it('accepts a well-formed HS256 token signed with the secret (control case)', async () => {
    const res = await get(`Bearer ${craftToken(claims())}`);
    expect(res.statusCode).toBe(200);
    expect(res.json().userId).toBe('user-1');
  });

  const now = () => Math.floor(Date.now() / 1000);
  const [h, p] = craftToken(claims()).split('.');
  const cases: Array<[string, () => string | undefined]> = [
    ['no Authorization header', () => undefined],
    ['an empty bearer', () => 'Bearer '],
    ['the bare word Bearer', () => 'Bearer'],
    ['another scheme', () => 'Basic dXNlcjpwYXNzd29yZA=='],
    ['a malformed token with two parts', () => 'Bearer abc.def'],
    ['a malformed token with three junk parts', () => 'Bearer a.b.c'],
    ['a token that is not a JWT', () => 'Bearer not-a-jwt'],
    ['two tokens', () => `Bearer ${craftToken(claims())} ${craftToken(claims())}`],
    ['an expired token', () => `Bearer ${craftToken(claims({ iat: now() - 7200, exp: now() - 60 }))}`],
    ['a token signed with another secret', () => `Bearer ${craftToken(claims(), 'HS256', 'some-other-secret-0123456789')}`],
    ['a tampered payload', () => `Bearer ${h}.${Buffer.from(JSON.stringify(claims({ sub: 'admin' }))).toString('base64url')}.${craftToken(claims()).split('.')[2]}`],
    ['alg none with an empty signature', () => `Bearer ${craftToken(claims(), 'none')}`],
    ['alg none with the signature dropped', () => `Bearer ${h}.${p}`],
    ['HS512 signed with the same secret', () => `Bearer ${craftToken(claims(), 'HS512')}`],
    ['HS384 signed with the same secret', () => `Bearer ${craftToken(claims(), 'HS384')}`],
    ['RS256', () => `Bearer ${craftToken(claims(), 'RS256')}`],
    ['a token without sub', () => `Bearer ${craftToken(claims({ sub: undefined }))}`],
    ['a token without exp', () => `Bearer ${craftToken(claims({ exp: undefined }))}`],
    ['a token whose sub is an operator object {"$ne": null}', () => `Bearer ${craftToken(claims({ sub: { $ne: null } }))}`],
    ['a token whose sub is a number', () => `Bearer ${craftToken(claims({ sub: 42 }))}`],
    ['a token without iat', () => `Bearer ${craftToken(claims({ iat: undefined }))}`],
    ['a token issued an hour in the future', () => `Bearer ${craftToken(claims({ iat: now() + 3600, exp: now() + 4200 }))}`],
    ['a token with exp 1e20', () => `Bearer ${craftToken(claims({ exp: 1e20 }))}`],
    ['a token living longer than JWT_EXPIRATION_MINUTES', () => `Bearer ${craftToken(claims({ exp: now() + 2 * 24 * 3600 }))}`],
    ['a correctly signed token whose sub is no user', () => `Bearer ${craftToken(claims({ sub: 'no-such-user' }))}`],
  ];

  it.each(cases)('answers %s with 401 UNAUTHORIZED', async (_name, header) => {
    const res = await get(header());
    expect(res.statusCode).toBe(401);
    expect(res.json()).toMatchObject({ code: 'UNAUTHORIZED', traceId: expect.any(String) });
  });

  it('says a correctly signed token for no user names no user of this service', async () => {
    const res = await get(`Bearer ${craftToken(claims({ sub: 'deleted-user' }))}`);
    expect(res.statusCode).toBe(401);
    expect(res.json().message).toBe('The access token names no user of this service');
  });

  it('says when the token has expired, so the client knows to refresh', async () => {
    const res = await get(`Bearer ${craftToken(claims({ iat: now() - 7200, exp: now() - 60 }))}`);
    expect(res.json().message).toBe('The access token has expired');
  });
});

describe('remembered tokens', () => {
  it('refuses a token accepted before once it has expired', async () => {
    const soon = Math.floor(Date.now() / 1000) + 5;
    const header = `Bearer ${craftToken(claims({ exp: soon }))}`;
    expect((await get(header)).statusCode).toBe(200);
    expect((await get(header)).statusCode).toBe(200);
    vi.useFakeTimers({ toFake: ['Date'] });
    try {
      vi.setSystemTime((soon + 1) * 1000);
      const res = await get(header);
      expect(res.statusCode).toBe(401);
      expect(res.json().message).toBe('The access token has expired');
    } finally {
      vi.useRealTimers();
    }
  });

  it('does not carry a token verified by one gateway to a gateway with another secret', async () => {
    const header = `Bearer ${craftToken(claims())}`;
    expect((await get(header)).statusCode).toBe(200);
    await using other = await testApp({ env: { JWT_SECRET: 'another-secret-for-this-test-0123456789' } });
    const res = await other.app.inject({ method: 'GET', url: URL, headers: { authorization: header } });
    expect(res.statusCode).toBe(401);
  });
});
