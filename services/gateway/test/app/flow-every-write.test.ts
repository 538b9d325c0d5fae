import { describe, expect, it } from 'vitest';
import { system } from './system.js';

/**
 * Columns are queries, so a card changes column whenever a write changes what it matches
 * (docs/flow.md "How the history is kept"): the card history records each entry and exit, whatever
 * the write, and a flow read right after a write already sees it (the recorder is caught up first).
 * The background recorder is left slow here (an hour), so only the catch-up can make these pass.
 */
const COLUMNS = [
  { id: 'todo', name: 'To Do', query: "status = 'todo'" },
  { id: 'doing', name: 'Doing', query: "status = 'doing'" },
  { id: 'done', name: 'Done', query: "status = 'done'" },
];
const HOUR = 3_600_000;

describe('flow history from every write', () => {
  it('a PATCH, a batch update and a lease complete finish cards in cycle time, read right after the writes', async () => {
    await using sys = await system({ webhooks: { flow: { recordMs: HOUR, snapshotMs: HOUR } } });
    const alice = await sys.user('alice');
    const board = (await sys.call('POST', '/api/v1/boards', alice, { name: 'Flow', board_type: 'private', default_tags: ['flow'], columns: COLUMNS })).body;
    const base = `/api/v1/boards/${board.id}`;
    const card = async (title: string) => (await sys.call('POST', `${base}/tasks`, alice, { title, column_id: 'todo' })).body.id as string;
    const [patched, batched, leased, waiting] = [await card('patched'), await card('batched'), await card('leased'), await card('waiting')];

    sys.clock.advance(HOUR);
    expect((await sys.call('PATCH', `/api/v1/tasks/${patched}`, alice, { status: 'doing' })).status).toBe(200);
    expect((await sys.call('PATCH', '/api/v1/tasks/batch', alice, { updates: [{ id: batched, changes: { status: 'doing' } }] })).status).toBe(200);
    sys.clock.advance(2 * HOUR);
    const claim = await sys.call('POST', `${base}/columns/todo/claim`, alice, { lease_seconds: 600 });
    expect(claim.status, JSON.stringify(claim.body)).toBe(200);
    expect((await sys.call('PATCH', `/api/v1/tasks/${patched}`, alice, { status: 'done' })).status).toBe(200);
    expect((await sys.call('PATCH', '/api/v1/tasks/batch', alice, { updates: [{ id: batched, changes: { status: 'done' } }] })).status).toBe(200);
    const done = await sys.call('POST', `/api/v1/tasks/${claim.body.task.id}/lease/complete`, alice, { lease_id: claim.body.lease_id, to_column_id: 'done' });
    expect(done.status, JSON.stringify(done.body)).toBe(200);

    const cycle = await sys.call('GET', `${base}/cycle-time`, alice);
    expect(cycle.status, JSON.stringify(cycle.body)).toBe(200);
    const byTitle = Object.fromEntries(cycle.body.cards.map((c: { title: string; cycle_time_hours: number; lead_time_hours: number }) => [c.title, [c.lead_time_hours, c.cycle_time_hours]]));
    // the claimed card left To Do only when its lease completed into Done: no cycle time
    expect(byTitle).toEqual({ patched: [3, 2], batched: [3, 2], [claim.body.task.title]: [3, 0] });
    expect([leased, waiting]).toContain(claim.body.task.id);
  });

  it('the cumulative flow counts finished cards across sprints; ?sprint=active narrows to the running one', async () => {
    await using sys = await system({ webhooks: { flow: { recordMs: HOUR, snapshotMs: HOUR } } });
    const alice = await sys.user('alice');
    const board = (await sys.call('POST', '/api/v1/boards', alice, { name: 'Flow', board_type: 'private', default_tags: ['flow'], columns: COLUMNS })).body;
    const base = `/api/v1/boards/${board.id}`;
    const s1 = (await sys.call('POST', `${base}/sprints`, alice, { title: 'Sprint 1', start: true })).body.id as string;
    const s2 = (await sys.call('POST', `${base}/sprints`, alice, { title: 'Sprint 2' })).body.id as string;
    for (const title of ['a', 'b']) await sys.call('POST', `${base}/tasks`, alice, { title, column_id: 'done' });
    await sys.call('POST', `${base}/tasks`, alice, { title: 'open', column_id: 'todo' });
    expect((await sys.call('POST', `/api/v1/tasks/${s1}/close-sprint`, alice, { rollover: s2 })).status).toBe(200);

    const flow = await sys.call('GET', `${base}/flow`, alice);
    expect(flow.status, JSON.stringify(flow.body)).toBe(200);
    expect(flow.body.days.at(-1).columns.map((c: { count: number }) => c.count)).toEqual([1, 0, 2]);
    const active = await sys.call('GET', `${base}/flow?sprint=active`, alice);
    expect(active.body.days.at(-1).columns.map((c: { count: number }) => c.count)).toEqual([1, 0, 0]);
    const first = await sys.call('GET', `${base}/flow?sprint=${s1}`, alice);
    expect(first.body.days.at(-1).columns.map((c: { count: number }) => c.count)).toEqual([0, 0, 2]);
  });
});
