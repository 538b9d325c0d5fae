import { describe, expect, it } from 'vitest';
import { system } from './system.js';

/**
 * A sprint is a task (docs/sprints.md), but not a card (docs/boards.md "Sprints are not cards"):
 * column reads, the board summary and board read, WIP counts, claims and the flow reports leave
 * out tasks with `app.type = sprint`, unless the column query names `app.type` itself.
 */
describe('sprints are not cards', () => {
  it('column reads, summary, board read, WIP counts, claims and flow leave sprints out; a column naming app.type gets them', async () => {
    await using sys = await system();
    const alice = await sys.user('alice');
    const columns = [
      { id: 'todo', name: 'To Do', query: "status = 'todo'", wip_limit: 1, wip_policy: 'block' },
      { id: 'done', name: 'Done', query: "status = 'done'" },
      { id: 'sprints', name: 'Sprints', query: "app.type = 'sprint'" },
    ];
    const board = (await sys.call('POST', '/api/v1/boards', alice, { name: 'Team', board_type: 'private', default_tags: ['team'], columns })).body;
    const base = `/api/v1/boards/${board.id}`;
    const sprint = (await sys.call('POST', `${base}/sprints`, alice, { title: 'Sprint 1' })).body.id as string;

    const todo = await sys.call('POST', `${base}/columns/todo/query`, alice, { sprint: 'none' });
    expect(todo.status, JSON.stringify(todo.body)).toBe(200);
    expect(todo.body).toMatchObject({ data: [], total: 0 });
    expect(todo.body.effective_query).toBe("status = 'todo' AND 'team' IN tags AND app.type != 'sprint' ORDER BY metadata.order ASC");
    const named = await sys.call('POST', `${base}/columns/sprints/query`, alice, { sprint: 'none' });
    expect(named.body.data.map((c: { id: string }) => c.id)).toEqual([sprint]);
    expect(named.body.effective_query).toBe("app.type = 'sprint' AND 'team' IN tags ORDER BY metadata.order ASC");

    const summary = await sys.call('GET', `${base}/summary?sprint=none`, alice);
    expect(summary.body.columns.map((c: { total: number }) => c.total)).toEqual([0, 0, 1]);
    const read = await sys.call('GET', `${base}/tasks?sprint=none`, alice);
    expect(read.body.column_counts).toEqual({ todo: 0, done: 0, sprints: 1 });

    // the sprint does not fill To Do's one place, and is not claimed from it
    const claim = await sys.call('POST', `${base}/columns/todo/claim`, alice, { lease_seconds: 60 });
    expect(claim.status, JSON.stringify(claim.body)).toBe(204);
    const card = await sys.call('POST', `${base}/tasks`, alice, { title: 'Card', column_id: 'todo' });
    expect(card.status, JSON.stringify(card.body)).toBe(201);
    const claimed = await sys.call('POST', `${base}/columns/todo/claim`, alice, { lease_seconds: 60 });
    expect(claimed.status).toBe(200);
    expect(claimed.body.task.id).toBe(card.body.id);

    // closed, the sprint is done, and still no card of Done
    expect((await sys.call('POST', `/api/v1/tasks/${sprint}/close-sprint`, alice, { rollover: 'backlog' })).status).toBe(200);
    const done = await sys.call('POST', `${base}/columns/done/query`, alice, { sprint: 'none' });
    expect(done.body.total).toBe(0);
    const flow = await sys.call('GET', `${base}/flow`, alice);
    expect(flow.status, JSON.stringify(flow.body)).toBe(200);
    expect(flow.body.days.at(-1).columns.map((c: { count: number }) => c.count)).toEqual([1, 0, 1]);
  });
});
