import { describe, expect, it } from 'vitest';
import Fastify from 'fastify';
import { MemoryBus } from '@app/shared/bus';
import { registerBusRoutes } from '../../src/routes/register.js';
import { route } from '../../src/routes/route.js';
import { bearer, claims, craftToken, echoOp, SNAPSHOT, testApp } from './helpers.js';

const auth = bearer(craftToken(claims({ sub: 'user-42' })));

describe('bus routes', () => {
  it('forwards the mapped input with the caller and request id, and passes the reply through', async () => {
    await using t = await testApp();
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/widgets/w1?q=blue', headers: { ...auth, 'x-request-id': 'trace-abc' } });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['x-request-id']).toBe('trace-abc');
    expect(res.headers.deprecation).toBeUndefined();
    expect(res.json()).toEqual({ input: { id: 'w1', q: 'blue' }, userId: 'user-42', requestId: 'trace-abc' });
  });

  it('answers a legacy path with the same op, Deprecation and a Link to the filled target path', async () => {
    await using t = await testApp();
    const target = await t.app.inject({ method: 'GET', url: '/api/v1/widgets/w%2F1?q=x', headers: { ...auth, 'x-request-id': 'r1' } });
    const legacy = await t.app.inject({ method: 'GET', url: '/api/v1/old-widgets/w%2F1?q=x', headers: { ...auth, 'x-request-id': 'r1' } });
    expect(legacy.statusCode).toBe(200);
    expect(legacy.json()).toEqual(target.json());
    expect(legacy.headers.deprecation).toBe('true');
    expect(legacy.headers.link).toBe('</api/v1/widgets/w%2F1?q=x>; rel="successor-version"');
  });

  it('serves a legacy verb (POST) for a PATCH target', async () => {
    await using t = await testApp();
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/old-widgets/w1', headers: auth, payload: { name: 'n' } });
    expect(res.statusCode).toBe(200);
    expect(res.json().input).toEqual({ name: 'n', id: 'w1' });
    expect(res.headers.link).toBe('</api/v1/widgets/w1>; rel="successor-version"');
    const wrongVerb = await t.app.inject({ method: 'PATCH', url: '/api/v1/old-widgets/w1', headers: auth, payload: { name: 'n' } });
    expect(wrongVerb.statusCode).toBe(404);
  });

  it('keeps the deprecation headers on a legacy error answer', async () => {
    await using t = await testApp();
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/old-widgets/w1' });
    expect(res.statusCode).toBe(401);
    expect(res.headers.deprecation).toBe('true');
  });

  it('refuses a body field the schema does not accept with a 400 naming it, before the bus sees anything', async () => {
    await using t = await testApp();
    const res = await t.app.inject({ method: 'PATCH', url: '/api/v1/widgets/w1', headers: auth, payload: { name: 'n', admin: true, 'a/b': 1 } });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'VALIDATION_FAILED' });
    expect(res.json().validationErrors.map((e: { field: string; code: string }) => [e.field, e.code])).toEqual([
      ['/admin', 'additionalProperties'], ['/a~1b', 'additionalProperties'],
    ]);
  });

  it('sends 204 with an empty body', async () => {
    await using t = await testApp();
    const res = await t.app.inject({ method: 'DELETE', url: '/api/v1/widgets/w1', headers: auth });
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
  });

  it('uses the success status of the row and accepts an empty JSON body for an all-optional body', async () => {
    await using t = await testApp();
    const res = await t.app.inject({
      method: 'POST', url: '/api/v1/widgets/draft', headers: { ...auth, 'content-type': 'application/json' }, payload: '',
    });
    expect(res.statusCode).toBe(201);
    expect(res.json().input).toEqual({ body: {} });
  });

  it('refuses to register a draft route with legacy paths', () => {
    const app = Fastify();
    const bad = route({
      method: 'GET', url: '/api/v1/x', legacy: [{ url: '/api/v1/old-x' }], op: echoOp, input: () => ({}),
      summary: 'x', tag: 'x', maturity: 'draft',
    });
    expect(() => registerBusRoutes(app, new MemoryBus(), [bad])).toThrow(/Draft route GET \/api\/v1\/x/);
  });
});

describe('error answers', () => {
  it('names every invalid field (400 VALIDATION_FAILED) and sends nothing to the bus', async () => {
    await using t = await testApp();
    const res = await t.app.inject({ method: 'PATCH', url: '/api/v1/widgets/w1', headers: { ...auth, 'x-request-id': 'v1' }, payload: { count: -1 } });
    expect(res.statusCode).toBe(400);
    const body = res.json();
    expect(body).toMatchObject({ code: 'VALIDATION_FAILED', traceId: 'v1', details: { in: 'body' } });
    expect(body.validationErrors.map((e: { field: string }) => e.field).sort()).toEqual(['/count', '/name']);
  });

  it('names an invalid path parameter', async () => {
    await using t = await testApp();
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/widgets/w', headers: auth });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'VALIDATION_FAILED', details: { in: 'params' }, validationErrors: [{ field: '/id', code: 'minLength' }] });
  });

  it('answers malformed JSON with 400 BAD_REQUEST', async () => {
    await using t = await testApp();
    const res = await t.app.inject({
      method: 'PATCH', url: '/api/v1/widgets/w1', headers: { ...auth, 'content-type': 'application/json' }, payload: '{"name": ',
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'BAD_REQUEST' });
  });

  it('accepts JSON bodies only: another Content-Type is 400 BAD_REQUEST', async () => {
    await using t = await testApp();
    const res = await t.app.inject({
      method: 'PATCH', url: '/api/v1/widgets/w1', headers: { ...auth, 'content-type': 'text/plain' }, payload: 'name=n',
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'BAD_REQUEST', message: 'Unsupported Content-Type; send application/json' });
  });

  it('answers a body over 1 MiB with 413 PAYLOAD_TOO_LARGE', async () => {
    await using t = await testApp();
    const res = await t.app.inject({
      method: 'PATCH', url: '/api/v1/widgets/w1', headers: { ...auth, 'content-type': 'application/json' },
      payload: JSON.stringify({ name: 'x'.repeat(1024 * 1024) }),
    });
    expect(res.statusCode).toBe(413);
    expect(res.json()).toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
  });

  it('answers an unknown route with 404 NOT_FOUND carrying the traceId', async () => {
    await using t = await testApp();
    const res = await t.app.inject({ method: 'GET', url: '/api/v1/nothing/here', headers: { 'x-request-id': 'nf' } });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({ code: 'NOT_FOUND', message: 'No route GET /api/v1/nothing/here', traceId: 'nf' });
  });

  it('passes a service error through with its extra fields at the top level (409 move body)', async () => {
    await using t = await testApp();
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/widgets/w1/fail', headers: auth, payload: { kind: 'conflict' } });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ code: 'KANBAN_TASK_NOT_IN_SOURCE_COLUMN', task: SNAPSHOT });
    const missing = await t.app.inject({ method: 'POST', url: '/api/v1/widgets/w1/fail', headers: auth, payload: { kind: 'missing' } });
    expect(missing.statusCode).toBe(404);
    expect(missing.json().code).toBe('TASK_NOT_FOUND');
  });

  it('hides an unexpected service fault behind 500 INTERNAL', async () => {
    await using t = await testApp();
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/widgets/w1/fail', headers: { ...auth, 'x-request-id': 'boom' }, payload: { kind: 'crash' } });
    expect(res.statusCode).toBe(500);
    expect(res.json()).toEqual({ code: 'INTERNAL', message: 'Internal error', traceId: 'boom' });
    expect(res.body).not.toContain('hunter2');
  });

  it('answers a bus timeout with 504 UPSTREAM_TIMEOUT', async () => {
    await using t = await testApp();
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/widgets/slow', headers: auth });
    expect(res.statusCode).toBe(504);
    expect(res.json().code).toBe('UPSTREAM_TIMEOUT');
  });

  it('answers "no responders" with 503 SERVICE_UNAVAILABLE', async () => {
    await using t = await testApp();
    const res = await t.app.inject({ method: 'POST', url: '/api/v1/widgets/unserved', headers: auth });
    expect(res.statusCode).toBe(503);
    expect(res.json().code).toBe('SERVICE_UNAVAILABLE');
  });
});
