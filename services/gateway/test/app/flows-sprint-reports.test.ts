import { describe, expect, it } from 'vitest';
import { expectError, NOW, system } from './system.js';
import { catchUpOutbox } from '@app/shared/events';

/**
 * Sprint lifecycle and reports through HTTP: create and start a sprint on a board, work
 * on its cards, close it, then read the frozen report, the board's sprints, the velocity history
 * and the burndown.
 */

const COLUMNS = [
  { name: 'To Do', query: "status = 'todo'" },
  { name: 'Done', query: "status = 'done'" },
];

describe('sprint reports through HTTP', () => {
  it('create + start, cards join the active sprint, close, then report, list, velocity and burndown', async () => {
    await using sys = await system();
    const alice = await sys.user('alice');
    const board = await sys.call('POST', '/api/v1/boards', alice, { name: 'Team', board_type: 'private', columns: COLUMNS });
    const boardId: string = board.body.id;

    const s1 = await sys.call('POST', `/api/v1/boards/${boardId}/sprints`, alice, { title: 'Sprint 1', goal: 'Search', deadline: '2026-03-06', start: true });
    expect(s1.status, JSON.stringify(s1.body)).toBe(201);
    expect(s1.body).toMatchObject({ title: 'Sprint 1', metadata: { 'app.type': 'sprint', 'app.goal': 'Search' } });
    expect((await sys.call('GET', `/api/v1/boards/${boardId}`, alice)).body.activeSprintId).toBe(s1.body.id);
    sys.clock.advance(1_000);
    const s2 = await sys.call('POST', `/api/v1/boards/${boardId}/sprints`, alice, { title: 'Sprint 2' });
    expect(s2.status).toBe(201);

    // Cards created into a column join the active sprint; points and status through PATCH.
    const card = async (title: string, points: number) => {
      sys.clock.advance(1_000);
      const res = await sys.call('POST', `/api/v1/boards/${boardId}/tasks`, alice, { title, column_id: 'col-to-do', metadata: { 'app.points': points } });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      expect(res.body.metadata['app.sprint']).toBe(s1.body.id);
      return res.body.id as string;
    };
    const a = await card('A', 3);
    const b = await card('B', 5);
    sys.clock.advance(86_400_000);
    expect((await sys.call('PATCH', `/api/v1/tasks/${a}`, alice, { status: 'done' })).status).toBe(200);

    const live = await sys.call('GET', `/api/v1/tasks/${s1.body.id}/report`, alice);
    expect(live.status).toBe(200);
    expect(live.body).toMatchObject({ state: 'open', live: true, committed: [], added: [{ id: a }, { id: b }], velocity: 3 });

    const closed = await sys.call('POST', `/api/v1/tasks/${s1.body.id}/close-sprint`, alice, { rollover: s2.body.id });
    expect(closed.status, JSON.stringify(closed.body)).toBe(200);
    const b2 = await sys.call('GET', `/api/v1/tasks/${b}`, alice);
    expect(b2.body.metadata).toMatchObject({ 'app.sprint': s2.body.id, 'app.carried': 1 });

    const report = await sys.call('GET', `/api/v1/tasks/${s1.body.id}/report`, alice);
    expect(report.body).toMatchObject({
      state: 'closed', live: false, start: { taken_at: NOW, member_count: 0 },
      completed: [{ id: a, title: 'A', points: 3 }],
      rolled_over: [{ id: b, title: 'B', points: 5, status: 'todo', target: s2.body.id }],
      velocity: 3,
    });
    expect(report.body).not.toHaveProperty('completion_ratio');

    // Finishing the carried-over card in Sprint 2 leaves Sprint 1's report as it was.
    expect((await sys.call('POST', `/api/v1/tasks/${s2.body.id}/start-sprint`, alice)).body).toMatchObject({ pointedBoardIds: [boardId], member_count: 1, total_points: 5 });
    expect((await sys.call('PATCH', `/api/v1/tasks/${b}`, alice, { status: 'done' })).status).toBe(200);
    sys.clock.advance(86_400_000);
    expect((await sys.call('POST', `/api/v1/tasks/${s2.body.id}/close-sprint`, alice, {})).status).toBe(200);
    expect((await sys.call('GET', `/api/v1/tasks/${s1.body.id}/report`, alice)).body).toEqual(report.body);

    const list = await sys.call('GET', `/api/v1/boards/${boardId}/sprints?state=closed`, alice);
    expect(list.status).toBe(200);
    expect(list.body.map((s: { title: string; points_done: number }) => [s.title, s.points_done])).toEqual([['Sprint 1', 3], ['Sprint 2', 5]]);
    await expectError(await sys.call('GET', `/api/v1/boards/${boardId}/sprints?state=later`, alice), 400, 'VALIDATION_FAILED');

    const velocity = await sys.call('GET', `/api/v1/boards/${boardId}/velocity?last=2`, alice);
    expect(velocity.body).toMatchObject({ last: 2, mean: 4, median: 4, sprints: [{ title: 'Sprint 1', velocity: 3 }, { title: 'Sprint 2', velocity: 5, committed_points: 5, completed_points: 5 }] });
    for (const last of ['0', '51', 'x']) {
      const bad = await sys.call('GET', `/api/v1/boards/${boardId}/velocity?last=${last}`, alice);
      await expectError(bad, 400, 'VALIDATION_FAILED');
      expect(JSON.stringify(bad.body.validationErrors)).toContain('last');
    }

    const burndown = await sys.call('GET', `/api/v1/tasks/${s1.body.id}/burndown`, alice);
    expect(burndown.status).toBe(200);
    expect(burndown.body).toMatchObject({ started_at: NOW, closed: true, days: [{ date: '2026-03-02' }, { date: '2026-03-03', remaining: 5, scope: 8 }] });

    const bob = await sys.user('bob');
    await expectError(await sys.call('GET', `/api/v1/tasks/${s1.body.id}/report`, bob), 404, 'TASK_NOT_FOUND');
    await expectError(await sys.call('GET', `/api/v1/boards/${boardId}/velocity`, bob), 404, 'BOARD_NOT_FOUND');
    await expectError(await sys.call('POST', `/api/v1/tasks/${a}/start-sprint`, alice, {}), 400, 'NOT_A_SPRINT');
    await expectError(await sys.call('POST', `/api/v1/tasks/${s1.body.id}/start-sprint`, alice, {}), 400, 'SPRINT_ALREADY_CLOSED');
  });

  it('burndown from the real writes: day by day from the events outbox, with the ideal line to the deadline', async () => {
    await using sys = await system();
    const alice = await sys.user('alice');
    const board = await sys.call('POST', '/api/v1/boards', alice, { name: 'Team', board_type: 'private', columns: COLUMNS });
    const boardId: string = board.body.id;
    const sprint = await sys.call('POST', `/api/v1/boards/${boardId}/sprints`, alice, { title: 'Sprint 9', deadline: '2026-03-05' });
    const sprintId: string = sprint.body.id;
    const card = async (title: string, points: number) => {
      sys.clock.advance(1_000);
      const res = await sys.call('POST', `/api/v1/boards/${boardId}/tasks`, alice, { title, column_id: 'col-to-do', metadata: { 'app.sprint': sprintId, 'app.points': points } });
      expect(res.status, JSON.stringify(res.body)).toBe(201);
      return res.body.id as string;
    };
    const ok = async (p: Promise<{ status: number; body: unknown }>) => {
      const res = await p;
      expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
    };
    const a = await card('A', 3);
    const b = await card('B', 5);
    const c = await card('C', 2);
    await ok(sys.call('POST', `/api/v1/tasks/${sprintId}/start-sprint`, alice, {}));
    // Day 2 (2026-03-03): A is finished; D joins with 4 points.
    sys.clock.set('2026-03-03T10:00:00.000Z');
    await ok(sys.call('PATCH', `/api/v1/tasks/${a}`, alice, { status: 'done' }));
    const d = await card('D', 4);
    // Day 3: B leaves the sprint; C is re-estimated to 3 points.
    sys.clock.set('2026-03-04T10:00:00.000Z');
    await ok(sys.call('DELETE', `/api/v1/tasks/${b}/metadata/app.sprint`, alice));
    await ok(sys.call('PATCH', `/api/v1/tasks/${c}/metadata`, alice, { key: 'app.points', value: 3 }));
    // Day 4: C is moved to Done on the board (a card.moved event).
    sys.clock.set('2026-03-05T10:00:00.000Z');
    await ok(sys.call('POST', `/api/v1/boards/${boardId}/tasks/${c}/move`, alice, { from_column_id: 'col-to-do', to_column_id: 'col-done' }));

    sys.clock.set('2026-03-05T12:00:00.000Z');
    const open = await sys.call('GET', `/api/v1/tasks/${sprintId}/burndown`, alice);
    expect(open.status, JSON.stringify(open.body)).toBe(200);
    expect(open.body).toEqual({
      sprint_id: sprintId,
      started_at: '2026-03-02T09:00:03.000Z',
      end: '2026-03-05T12:00:00.000Z',
      closed: false,
      days: [
        { date: '2026-03-02', remaining: 10, scope: 10, ideal: 10 },
        { date: '2026-03-03', remaining: 11, scope: 14, ideal: 6.666667 },
        { date: '2026-03-04', remaining: 7, scope: 10, ideal: 3.333333 },
        { date: '2026-03-05', remaining: 4, scope: 10, ideal: 0 },
      ],
    });

    // Closed: the series ends at the close; finishing D later changes nothing.
    await ok(sys.call('POST', `/api/v1/tasks/${sprintId}/close-sprint`, alice, { rollover: 'backlog' }));
    const closed = await sys.call('GET', `/api/v1/tasks/${sprintId}/burndown`, alice);
    expect(closed.body).toEqual({ ...open.body, closed: true });
    sys.clock.set('2026-03-07T12:00:00.000Z');
    await ok(sys.call('PATCH', `/api/v1/tasks/${d}`, alice, { status: 'done' }));
    expect((await sys.call('GET', `/api/v1/tasks/${sprintId}/burndown`, alice)).body).toEqual(closed.body);
    const report = await sys.call('GET', `/api/v1/tasks/${sprintId}/report`, alice);
    expect(report.body).toMatchObject({
      committed_points: 10, added: [{ id: d, points: 4 }], removed: [{ id: b, points: 5 }],
      completed: [{ id: a }, { id: c, points: 3 }], rolled_over: [{ id: d, target: 'backlog' }], velocity: 6, completion_ratio: 0.6,
    });
  });

  it('creates and starts a sprint once per Idempotency-Key, with the board version and outbox events of one write', async () => {
    await using sys = await system();
    const alice = await sys.user('alice');
    const board = await sys.call('POST', '/api/v1/boards', alice, { name: 'Team', board_type: 'private', columns: COLUMNS });
    const boardId: string = board.body.id;
    const send = () => sys.call('POST', `/api/v1/boards/${boardId}/sprints`, alice, { title: 'Sprint 1', start: true }, { 'idempotency-key': 'sprint-1' });
    const first = await send();
    const again = await send();
    expect(first.status, JSON.stringify(first.body)).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(again.headers['idempotency-replayed']).toBe('true');
    const after = await sys.call('GET', `/api/v1/boards/${boardId}`, alice);
    expect(after.body).toMatchObject({ activeSprintId: first.body.id, version: board.body.version + 1 });
    const list = await sys.call('GET', `/api/v1/boards/${boardId}/sprints`, alice);
    expect(list.body).toHaveLength(1);
    await catchUpOutbox(sys.store);
    const events = await sys.store.collection('events').find({ request_id: { $exists: true } }, { sort: { seq: 1 } });
    expect(events.slice(-3).map((e) => [e.type, e.task_id ?? e.board_id])).toEqual([
      ['task.created', first.body.id], ['board.updated', boardId], ['sprint.started', first.body.id],
    ]);
  });

  it('publishes the sprint routes in Swagger', async () => {
    await using sys = await system();
    const doc = await sys.call('GET', '/api/v1/swagger.json');
    for (const path of ['/api/v1/boards/{boardId}/sprints', '/api/v1/tasks/{sprintId}/start-sprint', '/api/v1/tasks/{sprintId}/report', '/api/v1/boards/{boardId}/velocity', '/api/v1/tasks/{sprintId}/burndown']) {
      expect(Object.keys(doc.body.paths), path).toContain(path);
    }
    expect(doc.body.paths['/api/v1/boards/{boardId}/velocity'].get.parameters).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: 'last', in: 'query', minimum: 1, maximum: 50 })]),
    );
  });
});
