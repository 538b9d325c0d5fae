import { describe, expect, it } from 'vitest';
import { system, type User } from './system.js';

/**
 * A token narrowed to boards reaches exactly those boards' scope (docs/auth.md "Access tokens";
 * docs/architecture.md §5): a private board's scope is its owner's readable tasks narrowed by the
 * board's default tags, so a token for board A does not reach board B's cards.
 */
async function token(sys: Awaited<ReturnType<typeof system>>, as: User, body: Record<string, unknown>): Promise<User> {
  const res = await sys.call('POST', '/api/v1/tokens', as, { name: 'agent', ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return { ...as, headers: { authorization: `Bearer ${res.body.token}` } };
}

describe('token reach is the board scope', () => {
  it("a token for a private board with default tags reads, queries, writes and follows only that board's cards", async () => {
    await using sys = await system();
    const alice = await sys.user('alice');
    const boardA = (await sys.call('POST', '/api/v1/boards', alice, { name: 'A', board_type: 'private', default_tags: ['a'] })).body;
    const boardB = (await sys.call('POST', '/api/v1/boards', alice, { name: 'B', board_type: 'private', default_tags: ['b'] })).body;
    const cardA = (await sys.call('POST', `/api/v1/boards/${boardA.id}/tasks`, alice, { title: 'card of A', status: 'todo' })).body.id as string;
    const cardB = (await sys.call('POST', `/api/v1/boards/${boardB.id}/tasks`, alice, { title: 'card of B', status: 'todo' })).body.id as string;
    const agent = await token(sys, alice, { scopes: ['write'], board_ids: [boardA.id] });

    expect((await sys.call('GET', `/api/v1/tasks/${cardA}`, agent)).status).toBe(200);
    expect((await sys.call('GET', `/api/v1/tasks/${cardB}`, agent)).status).toBe(404);
    const query = await sys.call('POST', '/api/v1/tasks/query', agent, { query: "status = 'todo'" });
    expect(query.status, JSON.stringify(query.body)).toBe(200);
    expect(query.body.data.map((t: { id: string }) => t.id)).toEqual([cardA]);
    expect((await sys.call('PATCH', `/api/v1/tasks/${cardB}`, agent, { status: 'doing' })).status).toBe(404);
    expect((await sys.call('PATCH', `/api/v1/tasks/${cardA}`, agent, { status: 'doing' })).status).toBe(200);
    const feed = await sys.call('GET', '/api/v1/events?types=task.created,task.updated', agent);
    expect(feed.status).toBe(200);
    expect(new Set(feed.body.data.map((e: { task_id: string }) => e.task_id))).toEqual(new Set([cardA]));
    // a task it would create outside the board's tags would be out of its own reach
    const outside = await sys.call('POST', '/api/v1/tasks', agent, { title: 'loose' });
    expect(outside.status).toBe(403);
    expect((await sys.call('POST', '/api/v1/tasks', agent, { title: 'tagged', tags: ['a'] })).status).toBe(201);
    // the user itself still reads both
    expect((await sys.call('GET', `/api/v1/tasks/${cardB}`, alice)).status).toBe(200);
  });
});
