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
