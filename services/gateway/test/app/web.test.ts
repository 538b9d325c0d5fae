import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HASHED_CACHE, NO_CACHE, RESERVED_PREFIXES } from '../../src/plugins/web.js';
import { allRoutes } from '../../src/index.js';
import { testApp } from './helpers.js';

/** The web board's static serving: a fake built board in a temp folder. */
let root: string;
const INDEX = '<!doctype html><title>board</title><div id="root"></div>';
const ASSET = 'assets/index-AbC123.js';

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'web-root-'));
  mkdirSync(join(root, 'assets'));
  writeFileSync(join(root, 'index.html'), INDEX);
  writeFileSync(join(root, ASSET), 'console.log("board")');
  writeFileSync(join(root, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('web board served by the gateway', () => {
  it('answers index.html at / and at client-side routes, never cached, with a CSP', async () => {
    await using t = await testApp({ routes: allRoutes, webRoot: root });
    for (const url of ['/', '/boards/b-1', '/login', '/boards/b-1?x=1']) {
      const res = await t.app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['content-type'], url).toMatch(/^text\/html/);
      expect(res.headers['cache-control'], url).toBe(NO_CACHE);
      expect(res.headers['content-security-policy'], url).toContain("script-src 'self'");
      expect(res.body, url).toBe(INDEX);
    }
    const head = await t.app.inject({ method: 'HEAD', url: '/boards/b-1' });
    expect(head.statusCode).toBe(200);
  });

  it('serves hashed assets for a year and other files no-cache; a missing file is the JSON 404', async () => {
    await using t = await testApp({ routes: allRoutes, webRoot: root });
    const js = await t.app.inject({ method: 'GET', url: `/${ASSET}` });
    expect(js.statusCode).toBe(200);
    expect(js.headers['content-type']).toMatch(/javascript/);
    expect(js.headers['cache-control']).toBe(HASHED_CACHE);
    const icon = await t.app.inject({ method: 'GET', url: '/favicon.svg' });
    expect(icon.statusCode).toBe(200);
    expect(icon.headers['cache-control']).toBe(NO_CACHE);
    const missing = await t.app.inject({ method: 'GET', url: '/assets/index-missing.js' });
    expect(missing.statusCode).toBe(404);
    expect(missing.json()).toMatchObject({ code: 'NOT_FOUND' });
  });

  it('never shadows /api, /auth, /health, /docs or /version: unknown paths there are the JSON 404', async () => {
    await using t = await testApp({ routes: allRoutes, webRoot: root });
    for (const prefix of RESERVED_PREFIXES) {
      for (const url of [`${prefix}/no-such-route`, `${prefix}/deeper/still-missing`]) {
        const res = await t.app.inject({ method: 'GET', url });
        expect(res.statusCode, url).toBe(404);
        expect(res.headers['content-type'], url).toMatch(/^application\/json/);
        expect(res.json(), url).toMatchObject({ code: 'NOT_FOUND', message: `No route GET ${url}` });
      }
    }
    expect((await t.app.inject({ method: 'GET', url: '/api' })).json()).toMatchObject({ code: 'NOT_FOUND' });
    // Real routes still answer as before.
    expect((await t.app.inject({ method: 'GET', url: '/health' })).json()).toEqual({ status: 'ok' });
    expect((await t.app.inject({ method: 'GET', url: '/version' })).json()).toMatchObject({ name: 'board-task-service' });
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/boards' })).json()).toMatchObject({ code: 'UNAUTHORIZED' });
    // Only GET/HEAD fall back: a POST to a client-side path is the JSON 404.
    const post = await t.app.inject({ method: 'POST', url: '/boards/b-1', payload: {} });
    expect(post.statusCode).toBe(404);
    expect(post.json()).toMatchObject({ code: 'NOT_FOUND' });
  });

  it('keeps the board out of the Swagger document', async () => {
    await using t = await testApp({ routes: allRoutes, webRoot: root });
    const doc = (await t.app.inject({ method: 'GET', url: '/api/v1/swagger.json' })).json<{ paths: Record<string, unknown> }>();
    expect(Object.keys(doc.paths).filter((p) => !/^\/(api|auth|health|mcp|metrics|version|\.well-known)/.test(p))).toEqual([]);
  });

  it('starts without built files and says how to build at /', async () => {
    await using t = await testApp({ routes: allRoutes, webRoot: join(root, 'not-built') });
    const res = await t.app.inject({ method: 'GET', url: '/' });
    expect(res.statusCode).toBe(200);
    expect(res.body).toContain('npm run build');
    expect((await t.app.inject({ method: 'GET', url: '/boards/x' })).body).toContain('npm run build');
    expect((await t.app.inject({ method: 'GET', url: '/api/v1/nope' })).json()).toMatchObject({ code: 'NOT_FOUND' });
  });

  it('serves no board at all with webRoot false', async () => {
    await using t = await testApp({ routes: allRoutes, webRoot: false });
    const res = await t.app.inject({ method: 'GET', url: '/' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ code: 'NOT_FOUND' });
  });
});
