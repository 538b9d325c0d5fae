import { describe, expect, it } from 'vitest';
import { eventually } from '@app/shared/testing';
import { expectError, system } from './system.js';

/**
 * Flow reports through HTTP (docs/flow.md) over several simulated days (the injected clock):
 * daily snapshots on demand, the cumulative flow (past days from snapshots, today live) and the
 * lead and cycle time of the cards finished, recorded from the moves as they happened.
 */
const COLUMNS = [
  { id: 'todo', name: 'To Do', query: "status = 'todo'" },
  { id: 'doing', name: 'Doing', query: "status = 'doing'" },
  { id: 'done', name: 'Done', query: "status = 'done'" },
];
const HOUR = 3_600_000;

describe('flow reports through HTTP', () => {
  it('cumulative flow and cycle time of a board over three days, checked exactly', async () => {
    await using sys = await system({ webhooks: { flow: { recordMs: 20, snapshotMs: 3_600_000 } } });
    const alice = await sys.user('alice');
    const board = (await sys.call('POST', '/api/v1/boards', alice, { name: 'Flow', board_type: 'private', columns: COLUMNS })).body;
    const base = `/api/v1/boards/${board.id}`;
    const card = async (title: string, points: number) =>
      (await sys.call('POST', `${base}/tasks`, alice, { title, status: 'todo', metadata: { 'app.points': points } })).body.id as string;
    const move = async (id: string, from: string, to: string) =>
      expect((await sys.call('POST', `${base}/tasks/${id}/move`, alice, { from_column_id: from, to_column_id: to })).status).toBe(200);

    // day 1 (2026-03-02, 09:00): three cards, the day's snapshot, then A starts
    const [a, b] = [await card('A', 3), await card('B', 5)];
    await card('C', 8);
    const snap1 = await sys.call('POST', `${base}/flow/snapshot`, alice);
    expect(snap1.status, JSON.stringify(snap1.body)).toBe(200);
    expect(snap1.body).toMatchObject({ day: '2026-03-02', columns: [{ column_id: 'todo', count: 3, points: 16 }, { column_id: 'doing', count: 0 }, { column_id: 'done', count: 0 }] });
    await move(a, 'todo', 'doing');

    // day 2: snapshot first, then A finishes two hours later and B starts
    sys.clock.advance(24 * HOUR);
    await sys.call('POST', `${base}/flow/snapshot`, alice);
    sys.clock.advance(2 * HOUR);
    await move(a, 'doing', 'done');
    await move(b, 'todo', 'doing');

    // day 3: B finishes, A is re-opened
    sys.clock.advance(24 * HOUR);
    await move(b, 'doing', 'done');
    await move(a, 'done', 'doing');

    const flow = await sys.call('GET', `${base}/flow?from=2026-03-01&to=2026-03-04`, alice);
    expect(flow.status, JSON.stringify(flow.body)).toBe(200);
    const figures = flow.body.days.map((d: { day: string; live: boolean; columns: { count: number; points: number }[] }) =>
      [d.day, d.live, d.columns.map((c) => `${c.count}/${c.points}`).join(' ')]);
    expect(figures).toEqual([
      ['2026-03-02', false, '3/16 0/0 0/0'],
      ['2026-03-03', false, '2/13 1/3 0/0'],
      ['2026-03-04', true, '1/8 1/3 1/5'],
    ]);

    // the moves are recorded by the background work, in order: wait until every move is in (B
    // finished and A re-opened; before A's re-opening is recorded, A shows as finished too)
    const cycle = await eventually('B alone finished in the cycle-time report', async () =>
      (await sys.call('GET', `${base}/cycle-time?from=2026-03-01&to=2026-03-04`, alice)).body,
      (body) => body.cards?.length === 1 && body.cards[0].task_id === b);
    expect(cycle).toMatchObject({ start_column: 'todo', end_column: 'done' });
    // B: created day 1 09:00, left To Do day 2 11:00, entered Done day 3 11:00; A was re-opened
    expect(cycle.cards).toEqual([{
      task_id: b, title: 'B', created_at: '2026-03-02T09:00:00.000Z', started_at: '2026-03-03T11:00:00.000Z', finished_at: '2026-03-04T11:00:00.000Z',
      lead_time_hours: 50, cycle_time_hours: 24,
    }]);
    expect(cycle.cycle_time).toEqual({ p50: 24, p85: 24, p95: 24 });
    expect(cycle.throughput).toEqual([{ week: '2026-02-23', finished: 0 }, { week: '2026-03-02', finished: 1 }]);

    // A finishing again counts with its whole history
    sys.clock.advance(HOUR);
    await move(a, 'doing', 'done');
    const again = await eventually('A finished again', async () =>
      (await sys.call('GET', `${base}/cycle-time?from=2026-03-01&to=2026-03-04`, alice)).body, (body) => body.cards?.length === 2);
    expect(again.cards[1]).toMatchObject({ task_id: a, started_at: '2026-03-02T09:00:00.000Z', finished_at: '2026-03-04T12:00:00.000Z', lead_time_hours: 51, cycle_time_hours: 51 });
  });

  it('a board created a minute ago already has today\'s row; others get 404; bad ranges and columns are answered', async () => {
    await using sys = await system();
    const alice = await sys.user('alice');
    const bob = await sys.user('bob');
    const board = (await sys.call('POST', '/api/v1/boards', alice, { name: 'New', board_type: 'private', columns: COLUMNS })).body;
    const base = `/api/v1/boards/${board.id}`;
    const flow = await sys.call('GET', `${base}/flow`, alice);
    expect(flow.body.days).toEqual([{ day: '2026-03-02', live: true, columns: COLUMNS.map((c) => ({ column_id: c.id, name: c.name, count: 0, points: 0 })) }]);
    expect(flow.body).toMatchObject({ from: '2026-02-01', to: '2026-03-02' });
    expectError(await sys.call('GET', `${base}/flow`, bob), 404, 'BOARD_NOT_FOUND');
    expectError(await sys.call('GET', `${base}/cycle-time`, bob), 404, 'BOARD_NOT_FOUND');
    expectError(await sys.call('POST', `${base}/flow/snapshot`, bob), 404, 'BOARD_NOT_FOUND');
    const backwards = expectError(await sys.call('GET', `${base}/flow?from=2026-03-05&to=2026-03-01`, alice), 400, 'VALIDATION_FAILED');
    expect(backwards.validationErrors[0].field).toBe('/from');
    expectError(await sys.call('GET', `${base}/flow?from=2024-01-01&to=2026-03-01`, alice), 400, 'VALIDATION_FAILED');
    expectError(await sys.call('GET', `${base}/flow?to=2026-02-30`, alice), 400, 'VALIDATION_FAILED');
    expectError(await sys.call('GET', `${base}/flow?to=yesterday`, alice), 400, 'VALIDATION_FAILED');
    expectError(await sys.call('GET', `${base}/cycle-time?end_column=nope`, alice), 404, 'COLUMN_NOT_FOUND');
  });
});
