import { describe, expect, it } from 'vitest';
import { expectError, system } from './system.js';

const fieldsOf = (body: { validationErrors: Array<{ field: string }> }) => body.validationErrors.map((e) => e.field);

describe('sprint fields are checked', () => {
  it('refuses a kickoff after the deadline and an over-long goal, on create and on a later PATCH; nothing is written', async () => {
    await using sys = await system();
    const alice = await sys.user('alice');
    const board = (await sys.call('POST', '/api/v1/boards', alice, { name: 'b', board_type: 'private' })).body;
    const at = `/api/v1/boards/${board.id}/sprints`;
    const window = expectError(await sys.call('POST', at, alice, { title: 'S', kickoff: '2026-04-10', deadline: '2026-04-01' }), 400, 'VALIDATION_FAILED');
    expect(fieldsOf(window)).toEqual(['/kickoff']);
    const goal = expectError(await sys.call('POST', at, alice, { title: 'S', goal: 'g'.repeat(200_000) }), 400, 'VALIDATION_FAILED');
    expect(fieldsOf(goal)).toEqual(['/goal']);
    expect((await sys.call('POST', at, alice, { title: 'S', goal: 'g'.repeat(2_001) })).status).toBe(400);
    expect((await sys.call('GET', at, alice)).body).toEqual([]);

    const sprint = await sys.call('POST', at, alice, { title: 'S', goal: 'g'.repeat(2_000), kickoff: '2026-04-01', deadline: '2026-04-01T12:00:00+02:00' });
    expect(sprint.status).toBe(201);
    const moved = expectError(await sys.call('PATCH', `/api/v1/tasks/${sprint.body.id}`, alice, { deadline: '2026-03-31' }), 400, 'VALIDATION_FAILED');
    expect(fieldsOf(moved)).toEqual(['/kickoff']);
    expect((await sys.call('PATCH', `/api/v1/tasks/${sprint.body.id}`, alice, { kickoff: '', deadline: '2026-03-31' })).status).toBe(200);
    // a plain task keeps its dates as sent
    expect((await sys.call('POST', '/api/v1/tasks', alice, { title: 't', kickoff: '2026-04-10', deadline: '2026-04-01' })).status).toBe(201);
    const viaTasks = expectError(
      await sys.call('POST', '/api/v1/tasks', alice, { title: 's', kickoff: '2026-04-10', deadline: '2026-04-01', metadata: { 'app.type': 'sprint' } }), 400, 'VALIDATION_FAILED',
    );
    expect(fieldsOf(viaTasks)).toEqual(['/kickoff']);
  });
});
