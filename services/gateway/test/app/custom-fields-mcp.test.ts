import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { describe, expect, it } from 'vitest';
import { system } from './system.js';

/**
 * Custom fields for agents (docs/custom-fields.md "For agents"): the MCP resource listing the
 * definitions in reach, tool descriptions pointing at it, and tool errors naming the field and
 * its type.
 */
describe('custom fields over MCP', () => {
  it('lists the definitions in reach as a resource; a wrong value is a tool error naming the field and type', async () => {
    await using sys = await system();
    await sys.app.listen({ port: 0, host: '127.0.0.1' });
    const alice = await sys.user('alice');
    const bob = await sys.user('bob');
    const def = await sys.call('POST', '/api/v1/custom-fields', alice, {
      key: 'cf.priority', name: 'Priority', type: 'select', options: [{ id: 'p0', label: 'P0' }, { id: 'p1', label: 'P1' }],
    });
    expect(def.status).toBe(201);
    await sys.call('POST', '/api/v1/custom-fields', bob, { key: 'cf.mood', name: 'Mood', type: 'text' });

    const { port } = sys.app.server.address() as AddressInfo;
    const client = new Client({ name: 'test-agent', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${port}/mcp`), { requestInit: { headers: { authorization: alice.headers.authorization! } } }));
    try {
      const { resources } = await client.listResources();
      expect(resources.map((r) => r.uri)).toContain('bts://custom-fields');
      const read = await client.readResource({ uri: 'bts://custom-fields' });
      const body = JSON.parse((read.contents[0] as { text: string }).text);
      expect(body.fields).toEqual([expect.objectContaining({ key: 'cf.priority', name: 'Priority', type: 'select', operators: ['=', '!=', 'IN', 'NOT IN', 'IS NULL'] })]);
      expect(body.fields[0].options.map((o: { id: string }) => o.id)).toEqual(['p0', 'p1']);

      const { tools } = await client.listTools();
      for (const name of ['find_tasks', 'update_task']) expect(tools.find((t) => t.name === name)!.description).toContain('bts://custom-fields');

      const created = await client.callTool({ name: 'create_task', arguments: { title: 'agent task', metadata: { 'cf.priority': 'urgent' } } });
      expect(created.isError).toBe(true);
      const err = JSON.parse((created.content as Array<{ text: string }>)[0]!.text);
      expect(err).toMatchObject({ code: 'CUSTOM_FIELD_VALUE_INVALID', details: { field: 'metadata.cf.priority', type: 'select' } });
      const ok = await client.callTool({ name: 'create_task', arguments: { title: 'agent task', metadata: { 'cf.priority': 'p1' } } });
      expect(ok.isError).not.toBe(true);
      const found = await client.callTool({ name: 'find_tasks', arguments: { query: "cf.priority = 'P1'" } });
      expect(JSON.parse((found.content as Array<{ text: string }>)[0]!.text).total).toBe(1);
    } finally {
      await client.close();
    }
  });
});
