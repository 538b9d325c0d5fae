import { describe, expect, it } from 'vitest';
import { system } from './system.js';

/**
 * Closing a sprint into a planned one (docs/sprints.md "Close-sprint"): the board's running sprint
 * is always a started one, so the close starts the target in its own transaction, with the
 * rolled-over cards as its start members.
 */
describe('rollover into a planned sprint', () => {
  it('starts the target in the close: startedSprintId, a start snapshot with the rolled-over cards, sprint.started after sprint.closed', async () => {
    await using sys = await system();
    const alice = await sys.user('alice');
    const board = (await sys.call('POST', '/api/v1/boards', alice, { name: 'Team', board_type: 'private' })).body;
    const s1 = (await sys.call('POST', `/api/v1/boards/${board.id}/sprints`, alice, { title: 'Sprint 1', start: true })).body.id as string;
    const s2 = (await sys.call('POST', `/api/v1/boards/${board.id}/sprints`, alice, { title: 'Sprint 2', deadline: '2026-03-20' })).body.id as string;
    const card = async (title: string, status: string, points: number) => {
      const res = await sys.call('POST', `/api/v1/boards/${board.id}/tasks`, alice, { title, column_id: 'col-to-do', status, metadata: { 'app.points': points } });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return res.body.id as string;
    };
    const open = await card('Open', 'doing', 3);
    await card('Finished', 'done', 2);

    const closed = await sys.call('POST', `/api/v1/tasks/${s1}/close-sprint`, alice, { rollover: s2 });
    expect(closed.status, JSON.stringify(closed.body)).toBe(200);
    expect(closed.body).toMatchObject({ target: s2, rolledOver: 1, rotatedBoardIds: [board.id], startedSprintId: s2 });

    const list = (await sys.call('GET', `/api/v1/boards/${board.id}/sprints?state=open`, alice)).body;
    expect(list).toEqual([expect.objectContaining({ id: s2, active: true, started_at: expect.any(String) })]);
    const report = await sys.call('GET', `/api/v1/tasks/${s2}/report`, alice);
    expect(report.body.start).toMatchObject({ member_count: 1, total_points: 3 });
    expect(report.body.committed).toEqual([{ id: open, title: 'Open', points: 3 }]);
    const burndown = await sys.call('GET', `/api/v1/tasks/${s2}/burndown`, alice);
    expect(burndown.status, JSON.stringify(burndown.body)).toBe(200);
    expect(burndown.body.days[0]).toMatchObject({ remaining: 3, scope: 3, ideal: 3 });

    // starting it again replays the close's start
    const again = await sys.call('POST', `/api/v1/tasks/${s2}/start-sprint`, alice, {});
    expect(again.body).toMatchObject({ replayed: true, member_count: 1, pointedBoardIds: [board.id] });

    const feed = await sys.call('GET', '/api/v1/events?types=sprint.closed,sprint.started', alice);
    expect(feed.status, JSON.stringify(feed.body)).toBe(200);
    expect(feed.body.data.map((e: { type: string; task_id: string; board_id?: string }) => [e.type, e.task_id, e.board_id])).toEqual([
      ['sprint.started', s1, board.id],
      ['sprint.closed', s1, board.id],
      ['sprint.started', s2, board.id],
    ]);
  });

  it('leaves a target that is already running as it is, and starts nothing for the backlog', async () => {
    await using sys = await system();
    const alice = await sys.user('alice');
    const board = (await sys.call('POST', '/api/v1/boards', alice, { name: 'Team', board_type: 'private' })).body;
    const s1 = (await sys.call('POST', `/api/v1/boards/${board.id}/sprints`, alice, { title: 'Sprint 1', start: true })).body.id as string;
    const other = (await sys.call('POST', '/api/v1/boards', alice, { name: 'Other', board_type: 'private' })).body;
    const s2 = (await sys.call('POST', `/api/v1/boards/${other.id}/sprints`, alice, { title: 'Sprint 2', start: true })).body.id as string;
    const startedBefore = (await sys.call('GET', `/api/v1/tasks/${s2}/report`, alice)).body.start;
    await sys.call('POST', `/api/v1/boards/${board.id}/tasks`, alice, { title: 'Open', column_id: 'col-to-do' });
    const closed = await sys.call('POST', `/api/v1/tasks/${s1}/close-sprint`, alice, { rollover: s2 });
    expect(closed.status).toBe(200);
    expect(closed.body.startedSprintId).toBeUndefined();
    expect((await sys.call('GET', `/api/v1/tasks/${s2}/report`, alice)).body.start).toEqual(startedBefore);

    const s3 = (await sys.call('POST', `/api/v1/boards/${board.id}/sprints`, alice, { title: 'Sprint 3' })).body.id as string;
    await sys.call('PUT', `/api/v1/boards/${board.id}`, alice, { activeSprintId: s3 });
    const toBacklog = await sys.call('POST', `/api/v1/tasks/${s3}/close-sprint`, alice, { rollover: 'backlog' });
    expect(toBacklog.status).toBe(200);
    expect(toBacklog.body.startedSprintId).toBeUndefined();
  });
});
