import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { discoverAuthorizationServerMetadata, discoverOAuthProtectedResourceMetadata, extractWWWAuthenticateParams } from '@modelcontextprotocol/sdk/client/auth.js';
import { describe, expect, it } from 'vitest';
import { newTaskDoc } from '@app/shared/domain';
import { Collections } from '@app/shared/store';
import { system, type System, type User } from './system.js';

/**
 * The MCP endpoint driven by the MCP SDK's own client over HTTP (docs/agents.md): tools listed by
 * the token's scopes, queries with `me()`, writes with If-Match and Idempotency-Key as arguments,
 * moves with their dry run, the resources, and the events the calls leave in the feed.
 */

interface Agent extends AsyncDisposable {
  client: Client;
  /** Calls a tool and parses its JSON text; `isError` says whether it failed. */
  call(name: string, args?: Record<string, unknown>): Promise<{ isError: boolean; body: any }>;
}

/** An MCP client connected to the listening system with `authorization`. */
async function agent(sys: System, authorization: string): Promise<Agent> {
  const { port } = sys.app.server.address() as AddressInfo;
  const client = new Client({ name: 'test-agent', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`), { requestInit: { headers: { authorization } } }));
  return {
    client,
    async call(name, args = {}) {
      const r = await client.callTool({ name, arguments: args });
      const text = (r.content as Array<{ type: string; text: string }>)[0]!.text;
      return { isError: r.isError === true, body: JSON.parse(text) };
    },
    [Symbol.asyncDispose]: () => client.close(),
  };
}

async function listening(env?: Record<string, string>): Promise<System> {
  const sys = await system(env ? { env } : {});
  await sys.app.listen({ port: 0, host: '127.0.0.1' });
  return sys;
}

async function tokenFor(sys: System, as: User, body: Record<string, unknown>): Promise<string> {
  const res = await sys.call('POST', '/api/v1/tokens', as, { name: 'agent', ...body });
  expect(res.status).toBe(201);
  return `Bearer ${res.body.token}`;
}

describe('MCP endpoint', () => {
  it('lists the curated tools with JSON Schema inputs, read-only ones marked, and only those a token’s scopes allow', async () => {
    await using sys = await listening();
    const alice = await sys.user('alice');
    await using full = await agent(sys, alice.headers.authorization!);
    const { tools } = await full.client.listTools();
    const names = tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining([
      'find_tasks', 'get_task', 'create_task', 'update_task', 'list_boards', 'read_column', 'move_card', 'add_note', 'sprint_report',
      'claim_card', 'renew_lease', 'complete_card', 'release_card',
    ]));
    expect(tools.length).toBeLessThanOrEqual(20);
    const find = tools.find((t) => t.name === 'find_tasks')!;
    expect(find.annotations?.readOnlyHint).toBe(true);
    expect(find.inputSchema.properties).toHaveProperty('query');
    const update = tools.find((t) => t.name === 'update_task')!;
    expect(update.annotations?.readOnlyHint).toBe(false);
    expect(update.inputSchema).toMatchObject({ required: ['task_id'], properties: { if_match: { type: 'integer' }, idempotency_key: { type: 'string' }, title: { type: 'string' } } });

    await using reader = await agent(sys, await tokenFor(sys, alice, { scopes: ['read'] }));
    const readable = (await reader.client.listTools()).tools;
    expect(readable.length).toBeGreaterThan(0);
    expect(readable.every((t) => t.annotations?.readOnlyHint === true)).toBe(true);
    expect(readable.map((t) => t.name)).not.toContain('create_task');
    const refused = await reader.call('create_task', { title: 'no' });
    expect(refused).toMatchObject({ isError: true, body: { code: 'NOT_FOUND' } });
  });

  it('finds my tasks with me(), claims a card and completes it into Done, and the feed shows the claim and the move by the token', async () => {
    await using sys = await listening();
    const [alice, bob] = [await sys.user('alice'), await sys.user('bob')];
    const board = await sys.call('POST', '/api/v1/boards', alice, { name: 'Agents', board_type: 'private' });
    const columns: Array<{ id: string; name: string }> = board.body.columns;
    const todo = columns[0]!.id;
    const done = columns[columns.length - 1]!.id;
    const mine = await sys.call('POST', `/api/v1/boards/${board.body.id}/tasks`, alice, { title: 'mine', column_id: todo, assignee: alice.id });
    await sys.call('POST', `/api/v1/boards/${board.body.id}/tasks`, alice, { title: 'bob’s', column_id: todo, assignee: bob.id });

    const token = await sys.call('POST', '/api/v1/tokens', alice, { name: 'worker', scopes: ['write'], board_ids: [board.body.id] });
    await using a = await agent(sys, `Bearer ${token.body.token}`);
    const found = await a.call('find_tasks', { query: "assignee = me() AND title = 'mine'" });
    expect(found.isError).toBe(false);
    expect(found.body.data.map((t: { id: string }) => t.id)).toEqual([mine.body.id]);

    const column = await a.call('read_column', { board_id: board.body.id, column_id: todo, filter: 'assignee = me()' });
    expect(column.body.data.map((c: { id: string }) => c.id)).toEqual([mine.body.id]);
    expect(column.body.effective_query).toContain('me()');

    const dry = await a.call('move_card', { board_id: board.body.id, task_id: mine.body.id, from_column_id: todo, to_column_id: done, dry_run: true });
    expect(dry.isError).toBe(false);
    expect((await a.call('get_task', { task_id: mine.body.id })).body.status).toBe(mine.body.status);
    const claimed = await a.call('claim_card', { board_id: board.body.id, column_id: todo, query: 'assignee = me()', lease_seconds: 60 });
    expect(claimed.isError).toBe(false);
    expect(claimed.body).toMatchObject({ lease_id: expect.any(String), task: { id: mine.body.id } });
    const nothingLeft = await a.call('claim_card', { board_id: board.body.id, column_id: todo, query: 'assignee = me()', lease_seconds: 60 });
    expect(nothingLeft).toEqual({ isError: false, body: null });
    const completed = await a.call('complete_card', { task_id: mine.body.id, lease_id: claimed.body.lease_id, to_column_id: done });
    expect(completed.isError).toBe(false);
    expect(completed.body.task.status).toBe('done');

    const events = await a.call('read_events', { types: 'card.claimed,card.moved', board_id: board.body.id });
    expect(events.body.data.map((e: { type: string }) => e.type)).toEqual(['card.claimed', 'card.moved']);
    for (const e of events.body.data) expect(e).toMatchObject({ task_id: mine.body.id, actor: alice.id, actor_token: token.body.id });
  });

  it('passes If-Match and Idempotency-Key as arguments, and answers bad arguments with the field at fault', async () => {
    await using sys = await listening();
    const alice = await sys.user('alice');
    await using a = await agent(sys, alice.headers.authorization!);
    const first = await a.call('create_task', { title: 'once', idempotency_key: 'k-1' });
    const again = await a.call('create_task', { title: 'once', idempotency_key: 'k-1' });
    expect(again.body.id).toBe(first.body.id);
    expect((await sys.call('POST', '/api/v1/tasks/query', alice, { query: "title = 'once'" })).body.total).toBe(1);

    const stale = await a.call('update_task', { task_id: first.body.id, title: 'late', if_match: first.body.version + 1 });
    expect(stale).toMatchObject({ isError: true, body: { code: 'PRECONDITION_FAILED' } });
    const fresh = await a.call('update_task', { task_id: first.body.id, title: 'renamed', if_match: first.body.version });
    expect(fresh.body).toMatchObject({ title: 'renamed', version: first.body.version + 1 });

    const bad = await a.call('create_task', { title: 5, colour: 'red' });
    expect(bad).toMatchObject({ isError: true, body: { code: 'VALIDATION_FAILED' } });
    expect(bad.body.validationErrors.map((e: { field: string }) => e.field)).toEqual(expect.arrayContaining(['/title', '/colour']));
    const query = await a.call('find_tasks', { query: 'assignee = mee()' });
    expect(query).toMatchObject({ isError: true, body: { code: 'QUERY_UNKNOWN_FUNCTION' } });
  });

  it('serves the query language reference and a board’s columns as resources', async () => {
    await using sys = await listening();
    const alice = await sys.user('alice');
    const board = await sys.call('POST', '/api/v1/boards', alice, { name: 'B', board_type: 'private' });
    await using a = await agent(sys, alice.headers.authorization!);
    const { resources } = await a.client.listResources();
    const reference = await a.client.readResource({ uri: resources[0]!.uri });
    expect((reference.contents[0] as { text: string }).text).toContain('me()');
    const { resourceTemplates } = await a.client.listResourceTemplates();
    const uri = resourceTemplates[0]!.uriTemplate.replace('{boardId}', board.body.id);
    const columns = JSON.parse(((await a.client.readResource({ uri })).contents[0] as { text: string }).text);
    expect(columns.columns.map((c: { id: string }) => c.id)).toEqual(board.body.columns.map((c: { id: string }) => c.id));
  });

  it('refuses a caller without a token, and GET on the stateless endpoint', async () => {
    await using sys = await listening();
    const alice = await sys.user('alice');
    const anonymous = await sys.app.inject({ method: 'POST', url: '/mcp', payload: { jsonrpc: '2.0', id: 1, method: 'tools/list' } });
    expect(anonymous.statusCode).toBe(401);
    const get = await sys.app.inject({ method: 'GET', url: '/mcp', headers: alice.headers });
    expect(get.statusCode).toBe(405);
  });

  it('names every argument in snake_case with a description, and declares the result schema of tools that answer a resource', async () => {
    await using sys = await listening();
    const alice = await sys.user('alice');
    await using a = await agent(sys, alice.headers.authorization!);
    const { tools } = await a.client.listTools();
    for (const t of tools) {
      for (const [name, prop] of Object.entries(t.inputSchema.properties ?? {})) {
        expect(name, `${t.name}.${name}`).toMatch(/^[a-z][a-z0-9_]*$/);
        expect((prop as { description?: string }).description, `${t.name}.${name}`).toMatch(/\S/);
      }
    }
    const byName = (n: string) => tools.find((t) => t.name === n)!;
    expect(byName('read_events').inputSchema.properties).toHaveProperty('board_id');
    expect(byName('find_tasks').inputSchema.properties).toHaveProperty('page_size');
    expect((byName('update_task').inputSchema.properties!.title as { description: string }).description).not.toMatch(/required/);
    for (const n of ['get_task', 'create_task', 'update_task', 'get_board', 'list_boards', 'move_card', 'find_tasks']) expect(byName(n).outputSchema, n).toMatchObject({ type: 'object' });
    expect(byName('claim_card').outputSchema).toBeUndefined();

    // the SDK's client checks structuredContent against the declared outputSchema
    const created = await a.client.callTool({ name: 'create_task', arguments: { title: 'structured', tags: ['x'] } });
    expect(created.structuredContent).toMatchObject({ title: 'structured', tags: ['x'] });
    expect(JSON.parse((created.content as Array<{ text: string }>)[0]!.text)).toEqual(created.structuredContent);
    const id = (created.structuredContent as { id: string }).id;
    const read = await a.client.callTool({ name: 'get_task', arguments: { task_id: id } });
    expect(read.structuredContent).toMatchObject({ id, title: 'structured' });
    const found = await a.client.callTool({ name: 'find_tasks', arguments: { query: "title = 'structured'", page_size: 5 } });
    expect(found.structuredContent).toMatchObject({ total: 1, pageSize: 5 });

    const camel = await a.call('get_task', { taskId: id });
    expect(camel).toMatchObject({ isError: true, body: { code: 'VALIDATION_FAILED' } });
    expect(camel.body.message).toMatch(/inputSchema of get_task/);
    expect(camel.body.message).not.toMatch(/Swagger/);
  });

  it('answers a 401 with the resource metadata in WWW-Authenticate, and the SDK\'s discovery finds the OpenID Connect issuer', async () => {
    await using sys = await listening({
      OIDC_ISSUER: 'https://id.example.com/', OIDC_CLIENT_ID: 'bts', OIDC_CLIENT_SECRET: 'secret-secret', OIDC_REDIRECT_URL: 'https://bts.example.com/auth/oidc/callback',
    });
    const { port } = sys.app.server.address() as AddressInfo;
    const origin = `http://127.0.0.1:${port}`;
    for (const authorization of [undefined, 'Bearer not-a-token']) {
      const res = await fetch(`${origin}/mcp`, {
        method: 'POST', body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(authorization ? { authorization } : {}) },
      });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${origin}/.well-known/oauth-protected-resource/mcp"`);
      expect(extractWWWAuthenticateParams(res).resourceMetadataUrl?.href).toBe(`${origin}/.well-known/oauth-protected-resource/mcp`);
    }
    const metadata = await discoverOAuthProtectedResourceMetadata(new URL(`${origin}/mcp`));
    expect(metadata).toMatchObject({ resource: `${origin}/mcp`, authorization_servers: ['https://id.example.com'], bearer_methods_supported: ['header'] });
    const root = await fetch(`${origin}/.well-known/oauth-protected-resource`);
    expect(await root.json()).toEqual(metadata);
  });

  it('without OpenID Connect, discovery meets JSON 404s (never the web app), and so does any unknown /.well-known or /metrics path', async () => {
    await using sys = await listening();
    const { port } = sys.app.server.address() as AddressInfo;
    const origin = `http://127.0.0.1:${port}`;
    await expect(discoverOAuthProtectedResourceMetadata(new URL(`${origin}/mcp`))).rejects.toThrow(/does not implement OAuth 2.0 Protected Resource Metadata/);
    await expect(discoverAuthorizationServerMetadata(new URL(origin))).resolves.toBeUndefined();
    for (const path of [
      '/.well-known/oauth-protected-resource', '/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-authorization-server',
      '/.well-known/openid-configuration', '/.well-known/anything', '/metrics/', '/metrics/x', '/METRICS', '/.Well-Known/openid-configuration',
    ]) {
      const res = await fetch(`${origin}${path}`);
      expect(res.status, path).toBe(404);
      expect(res.headers.get('content-type'), path).toMatch(/^application\/json/);
      expect(await res.json(), path).toMatchObject({ code: 'NOT_FOUND' });
    }
  });

  it('passes tool calls through the same admission control as REST: a principal that spent its cost budget by MCP is refused on both, another is not', async () => {
    const sys = await system({ env: { COST_BUDGET_MS: '1', COST_REFILL_MS_PER_SECOND: '1', ADMISSION_QUEUE_WAIT_MS: '0' } });
    await using _ = sys;
    await sys.app.listen({ port: 0, host: '127.0.0.1' });
    const alice = await sys.user('alice');
    const bob = await sys.user('bob');
    // 3,000 tasks to scan, so that one text query costs a whole millisecond or more of server time
    // (a cost under 1 ms is not charged) on a fast machine too; written to the store directly, so
    // seeding spends none of the budget
    const now = new Date();
    const docs = Array.from({ length: 3000 }, (_, i) => newTaskDoc({ title: `task ${i}`, description: `about item ${i} of the backlog` }, alice.id, now));
    await sys.store.collection(Collections.tasks).insertMany(docs);
    await using mcp = await agent(sys, alice.headers.authorization!);
    // each find_tasks is charged its measured server time; the 1 ms budget is soon spent
    let refused: { isError: boolean; body: any } | undefined;
    for (let i = 0; i < 500 && !refused; i++) {
      const r = await mcp.call('find_tasks', { query: "description ~ 'zzz' OR title ~ 'item' ORDER BY description DESC", page_size: 200 });
      if (r.isError) refused = r;
    }
    expect(refused?.body).toMatchObject({ code: 'RATE_LIMITED', details: { reason: 'budget' } });
    const rest = await sys.call('POST', '/api/v1/tasks/query', alice, { query: '' });
    expect(rest.status).toBe(429);
    expect(Number(rest.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect((await sys.call('POST', '/api/v1/tasks/query', bob, { query: '' })).status).toBe(200);
  });
});
