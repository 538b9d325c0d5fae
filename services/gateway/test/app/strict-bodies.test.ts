import { describe, expect, it } from 'vitest';
import { expectError, system } from './system.js';

const fieldsOf = (body: { validationErrors: Array<{ field: string; code: string }> }) => body.validationErrors.map((e) => [e.field, e.code]);

describe('request bodies: a field the contract does not accept', () => {
  it('is a 400 naming it on the target paths, and nothing is written', async () => {
    await using sys = await system({ env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
    const alice = await sys.user('alice');
    const hook = { url: 'http://127.0.0.1:9/hook', events: ['*'] };
    const secret = expectError(await sys.call('POST', '/api/v1/webhooks', alice, { ...hook, secret: 'whsec_mine' }), 400, 'VALIDATION_FAILED');
    expect(fieldsOf(secret)).toEqual([['/secret', 'additionalProperties']]);
    expect((await sys.call('GET', '/api/v1/webhooks', alice)).body.data).toEqual([]);

    const created = await sys.call('POST', '/api/v1/webhooks', alice, hook);
    expect(created.status).toBe(201);
    const id = expectError(await sys.call('PATCH', `/api/v1/webhooks/${created.body.id}`, alice, { id: 'other' }), 400, 'VALIDATION_FAILED');
    expect(fieldsOf(id)).toEqual([['/id', 'additionalProperties']]);
    expect((await sys.call('GET', `/api/v1/webhooks/${created.body.id}`, alice)).status).toBe(200);

    const task = expectError(await sys.call('POST', '/api/v1/tasks', alice, { title: 'x', colour: 'red', priority: 1 }), 400, 'VALIDATION_FAILED');
    expect(fieldsOf(task)).toEqual([['/colour', 'additionalProperties'], ['/priority', 'additionalProperties']]);
    expect(task.message).toContain('/colour');
    const nested = expectError(
      await sys.call('POST', '/api/v1/boards', alice, { name: 'b', board_type: 'private', columns: [{ name: 'c', colour: 'red' }] }),
      400, 'VALIDATION_FAILED',
    );
    expect(fieldsOf(nested)).toEqual([['/columns/0/colour', 'additionalProperties']]);
    const batch = expectError(await sys.call('POST', '/api/v1/tasks/batch', alice, { tasks: [{ title: 'a' }, { title: 'b', owner: 'x' }] }), 400, 'VALIDATION_FAILED');
    expect(fieldsOf(batch)).toEqual([['/tasks/1/owner', 'additionalProperties']]);
    expect((await sys.call('POST', '/api/v1/tasks/query', alice, {})).body.total).toBe(0);
  });

  it('is accepted and ignored on the legacy paths, as ud did (docs/compat.md)', async () => {
    await using sys = await system();
    const alice = await sys.user('alice');
    const task = await sys.call('POST', '/api/v1/todolist', alice, { title: 'x', colour: 'red' });
    expect(task.status).toBe(201);
    expect(task.body).not.toHaveProperty('colour');
    const board = await sys.call('POST', '/api/v1/kanban/boards', alice, { name: 'b', board_type: 'private', columns: [{ name: 'c', order: 1 }] });
    expect(board.status).toBe(201);
    const put = await sys.call('PUT', `/api/v1/kanban/boards/${board.body.id}`, alice, { name: 'b2', project_id: 'p1' });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ name: 'b2' });
    expect(put.body).not.toHaveProperty('project_id');
    const strict = expectError(await sys.call('PUT', `/api/v1/boards/${board.body.id}`, alice, { project_id: 'p1' }), 400, 'VALIDATION_FAILED');
    expect(fieldsOf(strict)).toEqual([['/project_id', 'additionalProperties']]);
  });
});
