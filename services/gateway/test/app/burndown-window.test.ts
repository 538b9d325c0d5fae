import { describe, expect, it } from 'vitest';
import { system } from './system.js';

/**
 * The burndown runs from the sprint's kickoff (or start, when earlier) to its deadline
 * (docs/sprints.md "Burndown"): every client gets the whole chart, with the days still to come
 * listed with `remaining: null`, and an ideal line that reaches 0 on the deadline.
 */
describe('burndown window', () => {
  it('lists kickoff → deadline, days not yet lived with remaining null, the ideal line reaching 0 on the deadline', async () => {
    await using sys = await system(); // the clock stands at 2026-03-02T09:00Z
    const alice = await sys.user('alice');
    const board = (await sys.call('POST', '/api/v1/boards', alice, { name: 'Team', board_type: 'private' })).body;
    const sprint = (await sys.call('POST', `/api/v1/boards/${board.id}/sprints`, alice, { title: 'S', kickoff: '2026-03-01', deadline: '2026-03-06' })).body.id as string;
    const card = await sys.call('POST', `/api/v1/boards/${board.id}/tasks`, alice, { title: 'c', column_id: 'col-to-do', metadata: { 'app.sprint': sprint, 'app.points': 5 } });
    expect(card.status).toBe(201);
    expect((await sys.call('POST', `/api/v1/tasks/${sprint}/start-sprint`, alice, {})).status).toBe(200);

    const res = await sys.call('GET', `/api/v1/tasks/${sprint}/burndown`, alice);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.days.map((d: { date: string; remaining: number | null; ideal: number }) => [d.date, d.remaining, d.ideal])).toEqual([
      ['2026-03-01', null, 5],
      ['2026-03-02', 5, 4],
      ['2026-03-03', null, 3],
      ['2026-03-04', null, 2],
      ['2026-03-05', null, 1],
      ['2026-03-06', null, 0],
    ]);

    // past its deadline, the series runs to today
    sys.clock.advance(7 * 86_400_000);
    const late = await sys.call('GET', `/api/v1/tasks/${sprint}/burndown`, alice);
    expect(late.body.days.at(-1)).toEqual({ date: '2026-03-09', remaining: 5, scope: 5, ideal: 0 });
    expect(late.body.days.filter((d: { remaining: number | null }) => d.remaining === null).map((d: { date: string }) => d.date)).toEqual(['2026-03-01']);
  });
});
