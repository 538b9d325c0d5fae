import { describe, expect, it } from 'vitest';
import { NOW, system, type User } from './system.js';

/**
 * Every query function inside a board's columns, through the writes that resolve column queries
 * in a transaction (card create in a column, PATCH, move), on the suite's store under MongoDB's
 * transaction rules (docs/store.md "Transactions under test"): a function that reads the store
 * (the caller's time zone for the period functions, the sprint lists, another board's active
 * sprint) must read one operation at a time inside the write's transaction, or MongoDB refuses it.
 */

/** Every function of docs/query-language.md "Functions", each in its own column query. */
function columnQueries(otherBoard: string): Array<{ name: string; query: string }> {
  return [
    { name: 'Mine', query: 'assignee = me()' },
    { name: 'Active here', query: 'app.sprint = activeSprint()' },
    { name: 'Active there', query: `app.sprint = activeSprint('${otherBoard}')` },
    { name: 'Open sprints', query: 'app.sprint IN openSprints()' },
    { name: 'From today', query: 'deadline >= startOfDay()' },
    { name: 'Until tonight', query: 'deadline <= endOfDay()' },
    { name: 'From this week', query: 'deadline >= startOfWeek()' },
    { name: 'Due this week', query: 'deadline <= endOfWeek()' },
    { name: 'From this month', query: 'deadline >= startOfMonth()' },
    { name: 'Due this month', query: 'deadline <= endOfMonth(+0m) AND deadline > startOfDay(-1d)' },
    { name: 'Closed sprints', query: 'app.sprint IN closedSprints()' },
  ];
}

describe('query functions in columns, under the transaction rules', () => {
  it('card create in every column, PATCH and moves between every pair of neighbouring columns answer as on MongoDB', async () => {
    await using sys = await system();
    const alice: User = await sys.user('alice');
    const ok = (res: { status: number; body: unknown }, status: number) => {
      expect(res.status, JSON.stringify(res.body)).toBe(status);
      return res.body as any;
    };
    const sprint = async (title: string, status: string) =>
      ok(await sys.call('POST', '/api/v1/tasks', alice, { title, status, metadata: { 'app.type': 'sprint' } }), 201).id as string;
    const open = await sprint('Open', 'todo');
    const closed = await sprint('Closed', 'done');
    const other = ok(await sys.call('POST', '/api/v1/boards', alice, { name: 'Other', board_type: 'private' }), 201);
    ok(await sys.call('PUT', `/api/v1/boards/${other.id}`, alice, { activeSprintId: open }), 200);
    const board = ok(await sys.call('POST', '/api/v1/boards', alice, { name: 'Functions', board_type: 'private', columns: columnQueries(other.id) }), 201);
    ok(await sys.call('PUT', `/api/v1/boards/${board.id}`, alice, { activeSprintId: open }), 200);
    const columns = board.columns as Array<{ id: string; name: string }>;
    const closedColumn = columns.find((c) => c.name === 'Closed sprints')!;
    const live = columns.filter((c) => c !== closedColumn);

    // today, this week, this month at the services' clock, in alice's zone (UTC)
    const deadline = new Date(Date.parse(NOW) + 3_600_000).toISOString();
    const card = async (title: string, column: string, sprintId: string) => {
      const created = ok(await sys.call('POST', `/api/v1/boards/${board.id}/tasks`, alice, { title, column_id: column, assignee: alice.id, metadata: { 'app.sprint': sprintId } }), 201);
      // the card create body carries no deadline: a PATCH sets it
      return ok(await sys.call('PATCH', `/api/v1/tasks/${created.id}`, alice, { deadline }), 200);
    };
    for (const c of live) await card(`new in ${c.name}`, c.id, open);
    const walker = await card('walker', live[0]!.id, open);
    const old = await card('old', closedColumn.id, closed);
    ok(await sys.call('PATCH', `/api/v1/tasks/${walker.id}`, alice, { title: 'walker (renamed)' }), 200);

    // moves between columns whose queries call the functions, each pair in turn and back
    const move = (taskId: string, from: string, to: string) =>
      sys.call('POST', `/api/v1/boards/${board.id}/tasks/${taskId}/move`, alice, { from_column_id: from, to_column_id: to });
    for (let i = 0; i + 1 < live.length; i++) ok(await move(walker.id, live[i]!.id, live[i + 1]!.id), 200);
    for (let i = live.length - 1; i > 0; i--) ok(await move(walker.id, live[i]!.id, live[i - 1]!.id), 200);
    const dueThisWeek = live.find((c) => c.name === 'Due this week')!;
    ok(await move(old.id, closedColumn.id, dueThisWeek.id), 200);
    ok(await move(old.id, dueThisWeek.id, closedColumn.id), 200);
    // a card of a closed sprint is not in the open-sprint column, whatever the deadline says
    const refused = await move(old.id, closedColumn.id, live.find((c) => c.name === 'Open sprints')!.id);
    expect(refused.status, JSON.stringify(refused.body)).toBe(422);

    // each column shows what its function selects; the board shows its active sprint's cards, so
    // the closed-sprint column is empty there and the global query finds the card
    for (const c of columns) {
      const read = ok(await sys.call('POST', `/api/v1/boards/${board.id}/columns/${c.id}/query`, alice, {}), 200);
      const titles = (read.data as Array<{ title: string }>).map((t) => t.title).sort();
      if (c === closedColumn) expect(titles).toEqual([]);
      else expect(titles).toEqual(expect.arrayContaining(['walker (renamed)', `new in ${c.name}`]));
    }
    const inClosed = ok(await sys.call('POST', '/api/v1/tasks/query', alice, { query: "app.type != 'sprint' AND app.sprint IN closedSprints()" }), 200);
    expect(inClosed.data.map((t: { title: string }) => t.title)).toEqual(['old']);
    expect(sys.rules.violations).toEqual([]);
  });
});
