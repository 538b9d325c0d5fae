import { describe, expect, it } from 'vitest';
import { pathParams } from '../../src/routes/register.js';
import { allRoutes, localRoutes } from '../../src/routes/table.js';

/** Every (method, url) the table registers: targets, legacy aliases and local routes. */
function registrations(): string[] {
  return [
    ...allRoutes.flatMap((r) => [`${r.method} ${r.url}`, ...(r.legacy ?? []).map((l) => `${l.method ?? r.method} ${l.url}`)]),
    ...localRoutes.map((r) => `${r.method} ${r.url}`),
  ];
}

/** Fastify treats `/a/:x` and `/a/:y` as the same route: compare with parameter names erased. */
const shape = (key: string) => key.replace(/:[A-Za-z0-9_]+/g, ':');

describe('route table', () => {
  it('registers no method + url twice', () => {
    const keys = registrations().map(shape);
    const dupes = keys.filter((k, i) => keys.indexOf(k) !== i);
    expect(dupes).toEqual([]);
  });

  it('gives every legacy alias the path parameters of its target, so the one input mapper serves both', () => {
    for (const r of allRoutes) {
      for (const l of r.legacy ?? []) expect(pathParams(l.url).sort(), `${l.url} vs ${r.url}`).toEqual(pathParams(r.url).sort());
    }
  });

  it('publishes draft operations only at their target path', () => {
    expect(allRoutes.filter((r) => r.maturity === 'draft' && (r.legacy ?? []).length > 0).map((r) => r.url)).toEqual([]);
  });

  it('keeps every bus route under /api/v1 (legacy aliases too)', () => {
    const urls = allRoutes.flatMap((r) => [r.url, ...(r.legacy ?? []).map((l) => l.url)]);
    expect(urls.filter((u) => !u.startsWith('/api/v1/'))).toEqual([]);
  });

  it('declares a params schema naming exactly the path parameters', () => {
    for (const r of allRoutes.filter((x) => x.params)) {
      expect(Object.keys(r.params!.properties).sort(), r.url).toEqual(pathParams(r.url).sort());
    }
  });

  it('lists the public auth (password and OpenID Connect), health and version routes of docs/architecture.md §5, and the MCP resource metadata', () => {
    expect(localRoutes.filter((r) => !r.authenticated).map((r) => `${r.method} ${r.url}`).sort()).toEqual([
      'GET /.well-known/oauth-protected-resource/mcp',
      'GET /auth/methods',
      'GET /auth/oidc/callback',
      'GET /auth/oidc/login',
      'GET /health',
      'GET /health/ready',
      'GET /metrics',
      'GET /version',
      'POST /auth/logout',
      'POST /auth/oidc/exchange',
      'POST /auth/refresh-token',
      'POST /auth/register',
      'POST /auth/v2/login',
      'POST /auth/v2/register',
    ]);
  });

  it('serves the event stream, access tokens, the audit log, MCP, board exports and the backup itself, authenticated; the streams with their media types', () => {
    expect(localRoutes.filter((r) => r.authenticated).map((r) => `${r.method} ${r.url} ${r.produces?.join() ?? 'json'}`)).toEqual([
      'GET /api/v1/events/stream text/event-stream',
      'POST /api/v1/tokens json',
      'GET /api/v1/tokens json',
      'DELETE /api/v1/tokens/:tokenId json',
      'GET /api/v1/audit json',
      'POST /mcp json',
      'GET /mcp json',
      'DELETE /mcp json',
      'GET /api/v1/boards/:boardId/export application/json,text/csv',
      'POST /api/v1/admin/backup application/vnd.sqlite3',
    ]);
  });
});
