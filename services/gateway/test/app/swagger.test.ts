import SwaggerParser from '@apidevtools/swagger-parser';
import { describe, expect, it } from 'vitest';
import { allRoutes, localRoutes } from '../../src/index.js';
import { testApp } from './helpers.js';

type Operation = { deprecated?: boolean; 'x-maturity'?: string; security?: unknown[]; tags?: string[]; summary?: string };
type SwaggerDoc = { swagger: string; paths: Record<string, Record<string, Operation>> };

/** Fastify `/a/:id` → Swagger `/a/{id}`. */
const swaggerPath = (url: string) => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

async function servedDoc(): Promise<SwaggerDoc> {
  await using t = await testApp({ routes: allRoutes });
  const res = await t.app.inject({ method: 'GET', url: '/api/v1/swagger.json' });
  expect(res.statusCode).toBe(200);
  return res.json<SwaggerDoc>();
}

describe('Swagger 2.0 document', () => {
  it('is valid Swagger 2.0 for the real route table and lists every route, target and legacy', async () => {
    const doc = await servedDoc();
    await expect(SwaggerParser.validate(structuredClone(doc) as never)).resolves.toBeTruthy();
    expect(doc.swagger).toBe('2.0');
    for (const r of allRoutes) {
      const target = doc.paths[swaggerPath(r.url)]?.[r.method.toLowerCase()];
      expect(target, `${r.method} ${r.url}`).toMatchObject({ 'x-maturity': r.maturity, security: [{ bearerAuth: [] }] });
      expect(target?.deprecated).toBeUndefined();
      for (const l of r.legacy ?? []) {
        expect(doc.paths[swaggerPath(l.url)]?.[(l.method ?? r.method).toLowerCase()], l.url).toMatchObject({ deprecated: true });
      }
    }
    for (const r of localRoutes.filter((l) => !l.undocumented)) {
      const security = r.authenticated ? [{ bearerAuth: [] }] : [];
      expect(doc.paths[swaggerPath(r.url)]?.[r.method.toLowerCase()], r.url).toMatchObject({ security });
    }
    expect(doc.paths['/api/v1/events/stream']?.get).toMatchObject({ produces: ['text/event-stream'] });
    const streamParams = (doc.paths['/api/v1/events/stream']?.get as { parameters?: Array<{ in: string; name: string }> }).parameters ?? [];
    expect(streamParams.map((p) => `${p.in} ${p.name}`).sort()).toEqual(['header last-event-id', 'query after', 'query board_id', 'query types']);
  });

  it('marks draft operations x-maturity: draft and legacy operations deprecated (stub table)', async () => {
    await using t = await testApp();
    const doc = (await t.app.inject({ method: 'GET', url: '/api/v1/swagger.json' })).json<SwaggerDoc>();
    await expect(SwaggerParser.validate(structuredClone(doc) as never)).resolves.toBeTruthy();
    expect(doc.paths['/api/v1/widgets/draft']?.post?.['x-maturity']).toBe('draft');
    expect(doc.paths['/api/v1/widgets/{id}']?.get).toMatchObject({ 'x-maturity': 'live' });
    expect(doc.paths['/api/v1/old-widgets/{id}']?.get).toMatchObject({ deprecated: true, 'x-maturity': 'live' });
    expect(doc.paths['/api/v1/old-widgets/{id}']?.post).toMatchObject({ deprecated: true });
    expect(doc.paths['/api/v1/old-widgets/{id}']?.patch).toBeUndefined();
    expect(doc.paths['/api/v1/swagger.json']).toBeUndefined();
  });

  it('serves the UI at /docs without a token', async () => {
    await using t = await testApp();
    const res = await t.app.inject({ method: 'GET', url: '/docs/' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/text\/html/);
  });
});
