import { describe, expect, it } from 'vitest';
import { expectError, system } from './system.js';

describe('putting a task into a sprint through HTTP', () => {
  it('needs write access to the sprint on every write path; another user\'s sprint is 404 and nothing is written', async () => {
    await using sys = await system();
    const alice = await sys.user('alice');
    const bob = await sys.user('bob');
    const aBoard = (await sys.call('POST', '/api/v1/boards', alice, { name: 'A', board_type: 'private' })).body;
    const sprint = (await sys.call('POST', `/api/v1/boards/${aBoard.id}/sprints`, alice, { title: 'Sprint A' })).body;
    await sys.call('POST', '/api/v1/tasks', alice, { title: 'mine', metadata: { 'app.sprint': sprint.id, 'app.points': 3 } });
    const join = { 'app.sprint': sprint.id, 'app.points': 100 };

    const created = expectError(await sys.call('POST', '/api/v1/tasks', bob, { title: 'x', metadata: join }), 404, 'TASK_NOT_FOUND');
    expect(created.details).toMatchObject({ taskId: sprint.id, field: '/metadata/app.sprint' });
    expectError(await sys.call('POST', '/api/v1/todolist', bob, { title: 'x', metadata: join }), 404, 'TASK_NOT_FOUND');
    const bBoard = (await sys.call('POST', '/api/v1/boards', bob, { name: 'B', board_type: 'private' })).body;
    expectError(await sys.call('POST', `/api/v1/boards/${bBoard.id}/tasks`, bob, { title: 'x', metadata: join }), 404, 'TASK_NOT_FOUND');
    const own = (await sys.call('POST', '/api/v1/tasks', bob, { title: 'own' })).body;
    expectError(await sys.call('PATCH', `/api/v1/tasks/${own.id}`, bob, { metadata: join }), 404, 'TASK_NOT_FOUND');
    expectError(await sys.call('PATCH', `/api/v1/tasks/${own.id}/metadata`, bob, { key: 'app.sprint', value: sprint.id }), 404, 'TASK_NOT_FOUND');
    const batch = await sys.call('PATCH', '/api/v1/tasks/batch', bob, { updates: [{ id: own.id, changes: { metadata: join } }] });
    expect(batch.body.results.map((r: { status: number }) => r.status)).toEqual([404]);

    const report = (await sys.call('GET', `/api/v1/tasks/${sprint.id}/report`, alice)).body;
    expect(report.remaining.map((m: { title: string }) => m.title)).toEqual(['mine']);
    expect(report.remaining_points).toBe(3);
    const feed = (await sys.call('GET', '/api/v1/events?limit=500', bob)).body.data;
    expect(feed.filter((e: { actor: string }) => e.actor === alice.id)).toEqual([]);
  });
});
