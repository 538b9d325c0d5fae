import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import SwaggerParser from '@apidevtools/swagger-parser';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { allRoutes, localRoutes } from '../../src/index.js';
import { testApp } from './helpers.js';

type Doc = { openapi?: string; swagger?: string; paths: Record<string, Record<string, { security?: unknown[]; deprecated?: boolean }>> };

/** Fastify `/a/:id` → `/a/{id}`. */
const docPath = (url: string) => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');

let openapi: Doc;
let swagger: Doc;
beforeAll(async () => {
  await using t = await testApp({ routes: allRoutes });
  openapi = (await t.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json<Doc>();
  swagger = (await t.app.inject({ method: 'GET', url: '/api/v1/swagger.json' })).json<Doc>();
});

/** The `paths × methods` a document lists, sorted. */
const operations = (d: Doc) => Object.entries(d.paths).flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`)).sort();

describe('OpenAPI 3.1 document', () => {
  it('is valid OpenAPI 3.1 and lists the same operations as the Swagger 2.0 document, from the same route table', async () => {
    expect(openapi.openapi).toBe('3.1.0');
    await expect(SwaggerParser.validate(structuredClone(openapi) as never)).resolves.toBeTruthy();
    expect(operations(openapi)).toEqual(operations(swagger));
    for (const r of allRoutes) expect(openapi.paths[docPath(r.url)]?.[r.method.toLowerCase()]?.security, r.url).toEqual([{ bearerAuth: [] }]);
    for (const r of localRoutes) {
      const listed = openapi.paths[docPath(r.url)]?.[r.method.toLowerCase()];
      if (r.undocumented) expect(listed, `${r.method} ${r.url}`).toBeUndefined();
      else expect(listed, `${r.method} ${r.url}`).toBeDefined();
    }
    expect(openapi.paths['/api/v1/todolist/{taskId}']?.get?.deprecated).toBe(true);
  });

  it('gives every operation a unique verbNoun operationId, legacy paths their own deprecated one, in both documents', () => {
    const ids = (d: Doc) => Object.values(d.paths).flatMap((ops) => Object.values(ops).map((o) => (o as { operationId?: string }).operationId));
    const all = ids(openapi);
    expect(all.every((id) => typeof id === 'string' && /^[a-z]+[A-Za-z0-9]*$/.test(id))).toBe(true);
    expect(new Set(all).size).toBe(all.length);
    expect(ids(swagger).sort()).toEqual([...all].sort());
    const op = (path: string, method: string) => openapi.paths[path]?.[method] as { operationId?: string; deprecated?: boolean; tags?: string[]; description?: string };
    expect(op('/api/v1/tasks/{taskId}', 'get')).toMatchObject({ operationId: 'getTask', tags: ['tasks'] });
    expect(op('/api/v1/todolist/{taskId}', 'get')).toMatchObject({ operationId: 'getTaskLegacy', deprecated: true });
    expect(op('/api/v1/boards/{boardId}/tasks/{taskId}/move', 'post')).toMatchObject({ operationId: 'moveCard' });
    expect(op('/api/v1/tasks/{sprintId}/close-sprint', 'post')).toMatchObject({ operationId: 'closeSprint' });
    expect(op('/auth/v2/login', 'post')).toMatchObject({ operationId: 'loginUser' });
    for (const d of [openapi, swagger]) {
      const used = new Set(Object.values(d.paths).flatMap((ops) => Object.values(ops).flatMap((o) => (o as { tags: string[] }).tags)));
      expect(((d as unknown as { tags: Array<{ name: string }> }).tags).map((t) => t.name).sort()).toEqual([...used].sort());
    }
  });

  it('names the resources as components, referenced by $ref from the operations', () => {
    const schemas = (openapi as unknown as { components: { schemas: Record<string, unknown> } }).components.schemas;
    const definitions = (swagger as unknown as { definitions: Record<string, unknown> }).definitions;
    for (const name of ['Task', 'TaskDetail', 'Board', 'Column', 'Sprint', 'SprintReport', 'Event', 'Webhook', 'AccessToken', 'Lease', 'Error']) {
      expect(schemas[name], name).toBeDefined();
      expect(definitions[name], name).toBeDefined();
    }
    const get = openapi.paths['/api/v1/tasks/{taskId}']?.get as unknown as { responses: Record<string, { content: Record<string, { schema: unknown }> }> };
    expect(get.responses['200']!.content['application/json']!.schema).toEqual({ $ref: '#/components/schemas/TaskDetail' });
    expect(get.responses.default!.content['application/json']!.schema).toEqual({ $ref: '#/components/schemas/Error' });
    const legacy = swagger.paths['/api/v1/todolist/{taskId}']?.get as unknown as { responses: Record<string, { schema: unknown }> };
    expect(legacy.responses['200']!.schema).toEqual({ $ref: '#/definitions/TaskDetail' });
    expect(legacy.responses.default!.schema).toEqual({ $ref: '#/definitions/Error' });
    expect(JSON.stringify((schemas.Board as { properties: { columns: unknown } }).properties.columns)).toContain('#/components/schemas/Column');
  });

  it('marks a request body required where the route needs one, and optional where {} is a valid body', () => {
    const body = (path: string, method: string) => (openapi.paths[path]?.[method] as { requestBody?: { required: boolean } }).requestBody?.required;
    expect(body('/api/v1/tasks', 'post')).toBe(true);
    expect(body('/api/v1/boards', 'post')).toBe(true);
    expect(body('/api/v1/boards/{boardId}/tasks/{taskId}/move', 'post')).toBe(true);
    expect(body('/api/v1/tasks/{sprintId}/close-sprint', 'post')).toBe(false);
    const param = (swagger.paths['/api/v1/tasks']?.post as unknown as { parameters: Array<{ in: string; required: boolean }> }).parameters.find((p) => p.in === 'body');
    expect(param?.required).toBe(true);
  });

  describe('generated types', () => {
    let dir: string;
    beforeAll(async () => {
      dir = mkdtempSync(join(tmpdir(), 'openapi-client-'));
      writeFileSync(join(dir, 'api.ts'), astToString(await openapiTS(structuredClone(openapi) as never)));
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    /** Type-checks `client` (strict) against the generated `api.ts`; returns the error messages. */
    function typeErrors(client: string): string[] {
      writeFileSync(join(dir, 'client.ts'), client);
      const program = ts.createProgram([join(dir, 'client.ts')], {
        strict: true, noEmit: true, target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext, moduleResolution: ts.ModuleResolutionKind.Bundler, types: [], skipLibCheck: true,
      });
      return ts.getPreEmitDiagnostics(program).map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    }

    const client = (createCall: string) => `
import type { paths } from './api';
type Json<R> = R extends { content: { 'application/json': infer B } } ? B : never;
export type TaskCreate = Json<NonNullable<paths['/api/v1/tasks']['post']['requestBody']>>;
export type Task = Json<paths['/api/v1/tasks/{taskId}']['get']['responses'][200]>;
export type Move = Json<NonNullable<paths['/api/v1/boards/{boardId}/tasks/{taskId}/move']['post']['requestBody']>>;
// the generated types are real ones: none of them collapsed to never
export const generated: [[TaskCreate] extends [never] ? 0 : 1, [Task] extends [never] ? 0 : 1, [Move] extends [never] ? 0 : 1] = [1, 1, 1];
/** A small typed client over any transport. */
export function tasks(send: (method: string, url: string, body?: unknown) => Promise<unknown>) {
  return {
    create: (body: TaskCreate) => send('POST', '/api/v1/tasks', body) as Promise<Task>,
    get: (id: string) => send('GET', '/api/v1/tasks/' + encodeURIComponent(id)) as Promise<Task>,
    move: (boardId: string, taskId: string, body: Move) => send('POST', '/api/v1/boards/' + boardId + '/tasks/' + taskId + '/move', body),
  };
}
export async function demo(api: ReturnType<typeof tasks>): Promise<string> {
  const t: Task = await ${createCall};
  const version: number = t.version;
  await api.move('b1', t.id, { from_column_id: 'col-todo', to_column_id: 'col-done' });
  return t.title + version;
}
`;

    it('type-checks a small client against the types generated from it', () => {
      expect(typeErrors(client("api.create({ title: 'Write the docs', tags: ['docs'], status: 'todo' })"))).toEqual([]);
    });

    it('rejects a client that sends a field of the wrong type', () => {
      expect(typeErrors(client('api.create({ title: 42 })')).join('\n')).toMatch(/number.*string/s);
    });
  });
});
