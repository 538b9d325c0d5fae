import { describe, expect, it } from 'vitest';
import { allRoutes } from '@app/gateway';
import { testApp } from '../../services/gateway/test/app/helpers.js';
import { endpoints, type Endpoint } from '../src/api/endpoints.js';

type Param = { in: string; name: string; schema?: { properties?: Record<string, unknown> } };
type SwaggerDoc = { paths: Record<string, Record<string, { parameters?: Param[] }>> };

/**
 * What of `ep` the Swagger document does not have: the path, the method, a body field or a
 * query-string field. Empty when the document has it all.
 */
export function contractFaults(doc: SwaggerDoc, name: string, ep: Endpoint): string[] {
  const op = doc.paths[ep.path]?.[ep.method.toLowerCase()];
  if (!doc.paths[ep.path]) return [`${name}: no path ${ep.path}`];
  if (!op) return [`${name}: no ${ep.method} ${ep.path}`];
  const faults: string[] = [];
  const params = op.parameters ?? [];
  const body = params.find((p) => p.in === 'body')?.schema?.properties ?? {};
  for (const f of ep.body ?? []) if (!(f in body)) faults.push(`${name}: body field ${f} not in ${ep.method} ${ep.path}`);
  const query = new Set(params.filter((p) => p.in === 'query').map((p) => p.name));
  for (const f of ep.query ?? []) if (!query.has(f)) faults.push(`${name}: query field ${f} not in ${ep.method} ${ep.path}`);
  const pathParams = new Set(params.filter((p) => p.in === 'path').map((p) => p.name));
  for (const m of ep.path.matchAll(/\{(\w+)\}/g)) if (!pathParams.has(m[1]!)) faults.push(`${name}: path parameter ${m[1]} undeclared`);
  return faults;
}

async function swaggerDoc(): Promise<SwaggerDoc> {
  await using t = await testApp({ routes: allRoutes, webRoot: false });
  return (await t.app.inject({ method: 'GET', url: '/api/v1/swagger.json' })).json<SwaggerDoc>();
}

describe('web API client against the Swagger document', () => {
  it('calls only paths, methods and fields the gateway documents', async () => {
    const doc = await swaggerDoc();
    const faults = Object.entries(endpoints).flatMap(([name, ep]) => contractFaults(doc, name, ep));
    expect(faults).toEqual([]);
  });

  it('catches a path, a method and a field the document does not have', async () => {
    const doc = await swaggerDoc();
    expect(contractFaults(doc, 'x', { method: 'GET', path: '/api/v1/nope' })).toEqual(['x: no path /api/v1/nope']);
    expect(contractFaults(doc, 'x', { method: 'DELETE', path: '/api/v1/tasks/query' })).toEqual(['x: no DELETE /api/v1/tasks/query']);
    expect(contractFaults(doc, 'x', { method: 'POST', path: '/api/v1/boards/{boardId}/tasks/{taskId}/move', body: ['to_column', 'dry_run'] })).toEqual([
      'x: body field to_column not in POST /api/v1/boards/{boardId}/tasks/{taskId}/move',
    ]);
    expect(contractFaults(doc, 'x', { method: 'GET', path: '/api/v1/boards/{boardId}/summary', query: ['previews'] })).toEqual([
      'x: query field previews not in GET /api/v1/boards/{boardId}/summary',
    ]);
  });
});
