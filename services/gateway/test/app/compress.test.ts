import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliCompressSync, brotliDecompressSync, gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Readable } from 'node:stream';
import { belowThreshold, COMPRESS_THRESHOLD_BYTES } from '../../src/plugins/compress.js';
import { allRoutes } from '../../src/index.js';
import { testApp } from './helpers.js';

/** Compression by Accept-Encoding: JSON answers on the fly, the web bundle from its pre-compressed files. */
let root: string;
const ASSET = 'assets/index-Zz9.js';
const SOURCE = `console.log(${JSON.stringify('board '.repeat(2000))});`;

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'web-compress-'));
  mkdirSync(join(root, 'assets'));
  writeFileSync(join(root, 'index.html'), '<!doctype html><title>board</title>');
  writeFileSync(join(root, ASSET), SOURCE);
  writeFileSync(join(root, `${ASSET}.br`), brotliCompressSync(SOURCE));
  writeFileSync(join(root, `${ASSET}.gz`), gzipSync(SOURCE));
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('compression', () => {
  it('sends the pre-compressed bundle as brotli or gzip by Accept-Encoding, and plain without it', async () => {
    await using t = await testApp({ routes: allRoutes, webRoot: root });
    const br = await t.app.inject({ method: 'GET', url: `/${ASSET}`, headers: { 'accept-encoding': 'gzip, deflate, br' } });
    expect(br.statusCode).toBe(200);
    expect(br.headers['content-encoding']).toBe('br');
    expect(br.headers['content-type']).toMatch(/javascript/);
    expect(brotliDecompressSync(br.rawPayload).toString()).toBe(SOURCE);
    const gz = await t.app.inject({ method: 'GET', url: `/${ASSET}`, headers: { 'accept-encoding': 'gzip' } });
    expect(gz.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gz.rawPayload).toString()).toBe(SOURCE);
    const plain = await t.app.inject({ method: 'GET', url: `/${ASSET}` });
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body).toBe(SOURCE);
    // the compressed copies are no routes of their own
    expect((await t.app.inject({ method: 'GET', url: `/${ASSET}.br` })).statusCode).toBe(404);
  });

  it('compresses a large JSON answer and leaves a small one as it is', async () => {
    await using t = await testApp({ routes: allRoutes, webRoot: false });
    const doc = await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json', headers: { 'accept-encoding': 'br, gzip' } });
    expect(doc.statusCode).toBe(200);
    expect(doc.headers['content-encoding']).toBe('br');
    expect(doc.headers.vary).toMatch(/accept-encoding/i);
    const json = JSON.parse(brotliDecompressSync(doc.rawPayload).toString()) as { openapi: string };
    expect(json.openapi).toMatch(/^3\.1/);
    expect(doc.rawPayload.length).toBeLessThan(Buffer.byteLength(JSON.stringify(json)) / 4);
    const gz = await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json', headers: { 'accept-encoding': 'gzip' } });
    expect(gz.headers['content-encoding']).toBe('gzip');

    const small = await t.app.inject({ method: 'GET', url: '/no/such/route', headers: { 'accept-encoding': 'br, gzip' } });
    expect(small.statusCode).toBe(404);
    expect(small.rawPayload.length).toBeLessThan(COMPRESS_THRESHOLD_BYTES);
    expect(small.headers['content-encoding']).toBeUndefined();
    expect(small.json()).toMatchObject({ code: 'NOT_FOUND' });
  });

  it('reads a gzip request body on a route that takes one', async () => {
    await using t = await testApp({ routes: allRoutes, webRoot: false });
    const body = gzipSync(JSON.stringify({ username: 'zipped', password: 'correct horse battery' }));
    const res = await t.app.inject({ method: 'POST', url: '/auth/v2/register', payload: body, headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' } });
    expect(res.statusCode).toBeLessThan(300);
    expect(res.json()).toMatchObject({ username: 'zipped' });
  });
});

describe('belowThreshold', () => {
  it('counts a text by its length when that decides, else by its UTF-8 bytes', () => {
    const n = COMPRESS_THRESHOLD_BYTES;
    expect(belowThreshold('a'.repeat(n - 1))).toBe(true);
    expect(belowThreshold('a'.repeat(n))).toBe(false);
    // two UTF-8 bytes per unit: 1,400 bytes
    expect(belowThreshold('é'.repeat(700))).toBe(true);
    // three UTF-8 bytes per unit: 2,100 bytes in 700 units
    expect(belowThreshold('€'.repeat(700))).toBe(false);
    expect(belowThreshold(Buffer.alloc(n - 1))).toBe(true);
    expect(belowThreshold(Buffer.alloc(n))).toBe(false);
    // a stream or another object is for the plugin to look at
    expect(belowThreshold(Readable.from(['x']))).toBe(false);
    expect(belowThreshold({})).toBe(false);
  });
});
