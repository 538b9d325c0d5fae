import { rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import openapiTS, { astToString } from 'openapi-typescript';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';
import { system } from './system.js';

/*
 * The README's typed-client script (examples/typed-client/walkthrough.ts) on a client generated
 * from the served document: openapi-typescript makes its types from GET /api/v1/openapi.json, the
 * script type-checks against them (strict), then runs through openapi-fetch against a listening
 * gateway: login, create task, create board, card and move, query, close-sprint.
 */

const DIR = fileURLToPath(new URL('../../../../examples/typed-client/', import.meta.url));
const GENERATED = `${DIR}openapi.gen.ts`;
afterAll(() => rmSync(GENERATED, { force: true }));

/** tsc's errors for `files` (strict, as a project with the generated types would compile them). */
function typeErrors(files: string[]): string[] {
  const program = ts.createProgram(files, {
    strict: true, noEmit: true, target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext, moduleResolution: ts.ModuleResolutionKind.Bundler,
    types: [], lib: ['lib.es2023.d.ts', 'lib.dom.d.ts'], skipLibCheck: true, noUncheckedIndexedAccess: true,
  });
  return ts.getPreEmitDiagnostics(program).map((d) => `${d.file?.fileName ?? ''}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
}

describe('a client generated from openapi.json', () => {
  it('type-checks the README script and runs login, create task, create board, move, query and close-sprint through it', async () => {
    await using sys = await system();
    await sys.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = sys.app.server.address() as AddressInfo;
    const base = `http://127.0.0.1:${port}`;
    const doc = (await (await fetch(`${base}/api/v1/openapi.json`)).json()) as Record<string, unknown>;
    writeFileSync(GENERATED, astToString(await openapiTS(doc as never)));
    expect(typeErrors([`${DIR}walkthrough.ts`])).toEqual([]);

    await sys.user('ada');
    // imported by a computed URL: the script's generated types exist only once this test wrote them
    const script = new URL('../../../../examples/typed-client/walkthrough.ts', import.meta.url).href;
    const { walkthrough } = (await import(/* @vite-ignore */ script)) as { walkthrough(base: string, user: string, password: string): Promise<any> };
    const result = await walkthrough(base, 'ada', 'correct horse battery');
    expect(result.task).toMatchObject({ title: 'Write the release notes', tags: ['docs'] });
    expect(result.moved).toEqual({ status: 'done', applied: 1 });
    expect(result.found).toBe(1);
    expect(result.closed).toMatchObject({ sprintId: expect.any(String), target: 'none', completed: 0, rotatedBoardIds: [result.boardId] });
  });

  it('fails the type check when the script sends a body the document does not take', async () => {
    await using sys = await system();
    const doc = (await sys.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json<Record<string, unknown>>();
    writeFileSync(GENERATED, astToString(await openapiTS(doc as never)));
    const bad = `${DIR}bad.gen.ts`;
    writeFileSync(bad, `import createClient from 'openapi-fetch';\nimport type { paths } from './openapi.gen.js';\n` +
      `export const go = () => createClient<paths>({ baseUrl: '' }).POST('/api/v1/boards/{boardId}/tasks/{taskId}/move', { params: { path: { boardId: 'b', taskId: 't' } }, body: { to_column: 'x' } });\n`);
    try {
      expect(typeErrors([bad]).join('\n')).toMatch(/to_column/);
    } finally {
      rmSync(bad, { force: true });
    }
  });
});
