import { describe, expect, it } from 'vitest';
import { Collections } from '@app/shared/store';
import { testStore } from '@app/shared/testing';
import { authIndexes } from '../../src/auth/users.js';
import { ensureAdmin } from '../../src/index.js';
import { bearer, login, post, register, testApp, type Tokens } from './helpers.js';

const refresh = (t: { app: Parameters<typeof post>[0] }, refreshToken: string) => post(t.app, '/auth/refresh-token', { refreshToken });
const whoami = (t: { app: Parameters<typeof post>[0] }, tokens: Tokens) =>
  t.app.inject({ method: 'GET', url: '/api/v1/widgets/me', headers: bearer(tokens.accessToken) });

describe('register', () => {
  it('creates a user (201 {userId, username}) whose password is stored only as an argon2id hash', async () => {
    await using t = await testApp();
    const res = await post(t.app, '/auth/v2/register', { username: 'alice', password: 'correct horse battery', email: 'a@example.com' });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body).toEqual({ userId: expect.stringMatching(/^[0-9a-f-]{36}$/), username: 'alice' });
    const stored = await t.store.collection(Collections.users).findOne({ _id: body.userId });
    expect(stored).toMatchObject({ username: 'alice', email: 'a@example.com', created_at: '2026-01-05T10:00:00.000Z' });
    expect(String(stored?.passwordHash)).toMatch(/^\$argon2id\$/);
    expect(JSON.stringify(stored)).not.toContain('correct horse battery');
  });

  it('refuses a taken username with 409 USERNAME_TAKEN', async () => {
    await using t = await testApp();
    expect((await register(t.app, 'alice')).statusCode).toBe(201);
    const again = await register(t.app, 'alice', 'another password');
    expect(again.statusCode).toBe(409);
    expect(again.json().code).toBe('USERNAME_TAKEN');
  });

  it('names each invalid field', async () => {
    await using t = await testApp();
    const res = await post(t.app, '/auth/v2/register', { username: 'a', password: 'short', email: 'not-an-email' });
    expect(res.statusCode).toBe(400);
    expect(res.json().validationErrors.map((e: { field: string }) => e.field).sort()).toEqual(['/email', '/password', '/username']);
  });

  it('answers 403 REGISTRATION_DISABLED when registration is off', async () => {
    await using t = await testApp({ env: { REGISTRATION_ENABLED: 'false' } });
    const res = await register(t.app, 'alice');
    expect(res.statusCode).toBe(403);
    expect(res.json().code).toBe('REGISTRATION_DISABLED');
  });

  it('requires the invite code when one is configured', async () => {
    await using t = await testApp({ env: { INVITE_CODE: 'open-sesame' } });
    const body = { username: 'alice', password: 'correct horse battery' };
    expect((await post(t.app, '/auth/v2/register', body)).statusCode).toBe(403);
    expect((await post(t.app, '/auth/v2/register', { ...body, inviteCode: 'wrong' })).json().code).toBe('REGISTRATION_DISABLED');
    expect((await post(t.app, '/auth/v2/register', { ...body, inviteCode: 'open-sesame' })).statusCode).toBe(201);
  });

  it('in production is closed without INVITE_CODE, unless REGISTRATION_ENABLED=true says otherwise', async () => {
    const body = { username: 'alice', password: 'correct horse battery' };
    const prod = { NODE_ENV: 'production' };
    {
      await using t = await testApp({ env: prod });
      const res = await post(t.app, '/auth/v2/register', body);
      expect(res.statusCode).toBe(403);
      expect(res.json().code).toBe('REGISTRATION_DISABLED');
      expect((await post(t.app, '/auth/register', { ...body, inviteCode: 'x' })).statusCode).toBe(403);
    }
    {
      await using t = await testApp({ env: { ...prod, INVITE_CODE: 'open-sesame' } });
      expect((await post(t.app, '/auth/v2/register', body)).statusCode).toBe(403);
      expect((await post(t.app, '/auth/v2/register', { ...body, inviteCode: 'open-sesame' })).statusCode).toBe(201);
    }
    {
      await using t = await testApp({ env: { ...prod, REGISTRATION_ENABLED: 'true' } });
      expect((await post(t.app, '/auth/v2/register', body)).statusCode).toBe(201);
    }
  });
});

describe('login', () => {
  it('returns a bearer access token that opens protected routes, and a refresh token', async () => {
    await using t = await testApp();
    const userId = (await register(t.app, 'alice')).json().userId;
    const tokens = await login(t.app, 'alice');
    expect(tokens).toEqual({
      accessToken: expect.any(String),
      refreshToken: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
      tokenType: 'Bearer',
      expiresIn: 3600,
      userId,
      userName: 'alice',
      userRole: 'user',
      userEmail: '',
      userTimezone: 'UTC',
      userAvatarUrl: '',
    });
    const [, payload] = tokens.accessToken.split('.');
    const jwtClaims = JSON.parse(Buffer.from(payload!, 'base64url').toString());
    expect(jwtClaims).toMatchObject({ sub: userId, name: 'alice' });
    expect(jwtClaims.exp - jwtClaims.iat).toBe(3600);
    const me = await whoami(t, tokens);
    expect(me.statusCode).toBe(200);
    expect(me.json().userId).toBe(userId);
  });

  it('honours JWT_EXPIRATION_MINUTES', async () => {
    await using t = await testApp({ env: { JWT_EXPIRATION_MINUTES: '5' } });
    await register(t.app, 'alice');
    expect((await login(t.app, 'alice')).expiresIn).toBe(300);
  });

  it('answers a wrong password and an unknown user alike: 401 INVALID_CREDENTIALS', async () => {
    await using t = await testApp();
    await register(t.app, 'alice');
    const wrong = await post(t.app, '/auth/v2/login', { username: 'alice', password: 'not the password' });
    const unknown = await post(t.app, '/auth/v2/login', { username: 'bob', password: 'correct horse battery' });
    for (const res of [wrong, unknown]) {
      expect(res.statusCode).toBe(401);
      expect(res.json()).toMatchObject({ code: 'INVALID_CREDENTIALS', message: 'Wrong username or password' });
    }
  });

  it('is rate limited per client IP: 429 RATE_LIMITED with Retry-After', async () => {
    await using t = await testApp({ env: { RATE_LIMIT_AUTH_MAX: '2' } });
    const attempt = () => post(t.app, '/auth/v2/login', { username: 'nobody', password: 'whatever' });
    expect((await attempt()).statusCode).toBe(401);
    expect((await attempt()).statusCode).toBe(401);
    const limited = await attempt();
    expect(limited.statusCode).toBe(429);
    expect(limited.json()).toMatchObject({ code: 'RATE_LIMITED', traceId: expect.any(String) });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    const fromElsewhere = await t.app.inject({
      method: 'POST', url: '/auth/v2/login', remoteAddress: '10.0.0.7', payload: { username: 'nobody', password: 'whatever' },
    });
    expect(fromElsewhere.statusCode).toBe(401);
  });

  it('answers under /api/v1 as well (the one base URL of a ud client), with the same answer', async () => {
    await using t = await testApp();
    await post(t.app, '/api/v1/auth/v2/register', { username: 'alice', password: 'correct horse battery', email: 'a@example.com' });
    const res = await post(t.app, '/api/v1/auth/v2/login', { username: 'alice', password: 'correct horse battery' });
    expect(res.statusCode).toBe(200);
    const tokens = res.json<Tokens>();
    expect(tokens).toMatchObject({ userName: 'alice', userEmail: 'a@example.com', userRole: 'user', userTimezone: 'UTC' });
    expect((await whoami(t, tokens)).statusCode).toBe(200);
    const refreshed = await post(t.app, '/api/v1/auth/refresh-token', { refreshToken: tokens.refreshToken });
    expect(refreshed.statusCode).toBe(200);
    expect(refreshed.json()).toMatchObject({ userId: tokens.userId, accessToken: expect.any(String), refreshToken: expect.any(String) });
  });

  it('counts the root and /api/v1 paths of login against one budget per client', async () => {
    await using t = await testApp({ env: { RATE_LIMIT_AUTH_MAX: '2' } });
    const body = { username: 'nobody', password: 'whatever' };
    expect((await post(t.app, '/auth/v2/login', body)).statusCode).toBe(401);
    expect((await post(t.app, '/api/v1/auth/v2/login', body)).statusCode).toBe(401);
    expect((await post(t.app, '/api/v1/auth/v2/login', body)).statusCode).toBe(429);
    expect((await post(t.app, '/auth/v2/login', body)).statusCode).toBe(429);
  });

  it('rate limits register as well', async () => {
    await using t = await testApp({ env: { RATE_LIMIT_AUTH_MAX: '1' } });
    expect((await register(t.app, 'alice')).statusCode).toBe(201);
    expect((await register(t.app, 'bobby')).statusCode).toBe(429);
  });
});

describe('refresh tokens', () => {
  it('rotates: a refresh gives a new pair and the used token stops working', async () => {
    await using t = await testApp();
    await register(t.app, 'alice');
    const first = await login(t.app, 'alice');
    const res = await refresh(t, first.refreshToken);
    expect(res.statusCode).toBe(200);
    const second = res.json<Tokens>();
    expect(second).toMatchObject({ tokenType: 'Bearer', userId: first.userId, userName: 'alice' });
    expect(second.refreshToken).not.toBe(first.refreshToken);
    expect((await whoami(t, second)).statusCode).toBe(200);
    expect((await refresh(t, second.refreshToken)).statusCode).toBe(200);
  });

  it('stores refresh tokens only as hashes', async () => {
    await using t = await testApp();
    await register(t.app, 'alice');
    const { refreshToken } = await login(t.app, 'alice');
    const docs = await t.store.collection(Collections.refreshTokens).find({});
    expect(docs).toHaveLength(1);
    expect(JSON.stringify(docs)).not.toContain(refreshToken);
  });

  it('revokes the whole family when a rotated token is reused, and only that family', async () => {
    await using t = await testApp();
    await register(t.app, 'alice');
    const stolen = await login(t.app, 'alice');
    const otherDevice = await login(t.app, 'alice');
    const rotated = (await refresh(t, stolen.refreshToken)).json<Tokens>();

    const reuse = await refresh(t, stolen.refreshToken);
    expect(reuse.statusCode).toBe(401);
    expect(reuse.json().code).toBe('REFRESH_TOKEN_INVALID');

    const descendant = await refresh(t, rotated.refreshToken);
    expect(descendant.statusCode).toBe(401);
    expect(descendant.json().code).toBe('REFRESH_TOKEN_INVALID');

    expect((await refresh(t, otherDevice.refreshToken)).statusCode).toBe(200);
  });

  it('refuses an unknown token and a token older than 30 days', async () => {
    await using t = await testApp();
    await register(t.app, 'alice');
    const tokens = await login(t.app, 'alice');
    expect((await refresh(t, 'x'.repeat(43))).json().code).toBe('REFRESH_TOKEN_INVALID');
    t.clock.advance(30 * 24 * 3600 * 1000 + 1);
    const expired = await refresh(t, tokens.refreshToken);
    expect(expired.statusCode).toBe(401);
    expect(expired.json().code).toBe('REFRESH_TOKEN_INVALID');
  });

  it('names a missing refreshToken field', async () => {
    await using t = await testApp();
    const res = await post(t.app, '/auth/refresh-token', {});
    expect(res.statusCode).toBe(400);
    expect(res.json().validationErrors).toEqual([expect.objectContaining({ field: '/refreshToken', code: 'required' })]);
  });
});

describe('ensureAdmin', () => {
  it('creates the configured admin once and never overwrites an existing password', async () => {
    await using t = await testApp({ env: { REGISTRATION_ENABLED: 'false' } });
    const config = { ADMIN_USERNAME: 'root', ADMIN_PASSWORD: 'admin-password-1' };
    expect(await ensureAdmin(t.store, config, t.clock)).toBe(true);
    expect(await ensureAdmin(t.store, { ...config, ADMIN_PASSWORD: 'changed-password' }, t.clock)).toBe(false);
    expect(await login(t.app, 'root', 'admin-password-1')).toMatchObject({ userName: 'root', userRole: 'admin' });
    expect((await post(t.app, '/auth/v2/login', { username: 'root', password: 'changed-password' })).statusCode).toBe(401);
  });

  it('two gateways starting on a fresh database create one admin, and the unique username index builds', async () => {
    await using store = await testStore();
    const config = { ADMIN_USERNAME: 'root', ADMIN_PASSWORD: 'admin-password-1' };
    const created = await Promise.all([ensureAdmin(store, config), ensureAdmin(store, config)]);
    expect(created.sort()).toEqual([false, true]);
    expect(await store.collection(Collections.users).countDocuments({ username: 'root' })).toBe(1);
    // what every later start does: the index builds on what the first start left
    await expect(store.ensureIndexes(authIndexes)).resolves.toBeUndefined();
  });

  it('does nothing without both variables', async () => {
    await using t = await testApp();
    expect(await ensureAdmin(t.store, { ADMIN_USERNAME: 'root' })).toBe(false);
    expect(await t.store.collection(Collections.users).countDocuments({ username: 'root' })).toBe(0);
  });
});
