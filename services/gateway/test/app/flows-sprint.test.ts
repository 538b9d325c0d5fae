import { describe, expect, it } from 'vitest';
import { expectDeprecated, expectError, system } from './system.js';

/**
 * The sprint rhythm through HTTP (docs/sprints.md; docs/architecture.md §7, §8): sprints
 * are tasks, a board points at its running sprint, cards created into columns join it, column
 * reads filter by it, and close-sprint rolls over, settles velocity, writes the retro note and
 * repoints the board.
 */

const COLUMNS = [
  { name: 'To Do', query: "status = 'todo'" },
  { name: 'Doing', query: "status = 'doing' AND 'wip' IN tags" },
  { name: 'Done', query: "status = 'done'" },
];

/** alice, a board, two open sprints (the first active on the board). */
async function sprintFixture() {
  const sys = await system();
  const alice = await sys.user('alice');
  const sprint = async (title: string) => {
    const res = await sys.call('POST', '/api/v1/tasks', alice, { title, status: 'doing', metadata: { 'app.type': 'sprint' } });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body.id as string;
  };
  const s1 = await sprint('Sprint 1');
  const s2 = await sprint('Sprint 2');
  const board = await sys.call('POST', '/api/v1/boards', alice, { name: 'Sprint board', board_type: 'private', columns: COLUMNS });
  expect(board.status).toBe(201);
  const boardId: string = board.body.id;
  const pointed = await sys.call('PUT', `/api/v1/boards/${boardId}`, alice, { activeSprintId: s1 });
  expect(pointed.status, JSON.stringify(pointed.body)).toBe(200);
  expect(pointed.body.activeSprintId).toBe(s1);
  const card = async (body: Record<string, unknown>) => {
    const res = await sys.call('POST', `/api/v1/boards/${boardId}/tasks`, alice, body);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body as { id: string; title: string; status: string; metadata: Record<string, unknown> };
  };
  const members = async (sprintId: string) => {
    const res = await sys.call('POST', '/api/v1/tasks/query', alice, { query: `app.sprint = '${sprintId}' ORDER BY title ASC`, pageSize: 50 });
    expect(res.status).toBe(200);
    return (res.body.data as Array<{ title: string }>).map((t) => t.title);
  };
  const close = (sprintId: string, body?: unknown) => sys.call('POST', `/api/v1/tasks/${sprintId}/close-sprint`, alice, body);
  return { sys, alice, s1, s2, boardId, card, members, close, [Symbol.asyncDispose]: () => sys[Symbol.asyncDispose]() };
}

describe('sprints through HTTP', () => {
  it('stamps cards created into a column with the active sprint (opt-out with null) and filters column reads by it', async () => {
    await using f = await sprintFixture();
    const stamped = await f.card({ title: 'In sprint', column_id: 'col-to-do' });
    expect(stamped.metadata).toEqual({ 'app.sprint': f.s1 });
    const optedOut = await f.card({ title: 'Opted out', column_id: 'col-to-do', metadata: { 'app.sprint': null, 'cf.team': 'x' } });
    expect(optedOut.metadata).toEqual({ 'cf.team': 'x' });
    const explicit = await f.card({ title: 'Next sprint', column_id: 'col-to-do', metadata: { 'app.sprint': f.s2 } });
    expect(explicit.metadata).toEqual({ 'app.sprint': f.s2 });
    const noColumn = await f.card({ title: 'No column', status: 'todo' });
    expect(noColumn.metadata ?? {}).toEqual({});

    const active = await f.sys.call('POST', `/api/v1/boards/${f.boardId}/columns/col-to-do/query`, f.alice, {});
    expect(active.status).toBe(200);
    expect(active.body.data.map((c: { title: string }) => c.title)).toEqual(['In sprint']);
    expect(active.body.total).toBe(1);
    expect(active.body.effective_query).toBe(`status = 'todo' AND app.sprint = '${f.s1}' AND app.type != 'sprint' ORDER BY metadata.order ASC`);
    const other = await f.sys.call('POST', `/api/v1/boards/${f.boardId}/columns/col-to-do/query`, f.alice, { sprint: f.s2 });
    expect(other.body.data.map((c: { title: string }) => c.title)).toEqual(['Next sprint']);
    const all = await f.sys.call('POST', `/api/v1/boards/${f.boardId}/columns/col-to-do/query`, f.alice, { sprint: 'none' });
    expect(all.body.total).toBe(4);
    expect(all.body.effective_query).toBe("status = 'todo' AND app.type != 'sprint' ORDER BY metadata.order ASC");

    const summary = await f.sys.call('GET', `/api/v1/boards/${f.boardId}/summary`, f.alice);
    expect(summary.body).toMatchObject({ board_id: f.boardId, active_sprint_id: f.s1 });
    expect(summary.body.columns[0]).toEqual({ column_id: 'col-to-do', name: 'To Do', total: 1, preview: ['In sprint'] });
    const none = await f.sys.call('GET', `/api/v1/boards/${f.boardId}/summary?sprint=none`, f.alice);
    expect(none.body.columns[0].total).toBe(4);

    expect(await f.members(f.s1)).toEqual(['In sprint']);
    const page = await f.sys.call('POST', '/api/v1/todolist/query', f.alice, { query: `app.sprint = '${f.s1}'`, pageSize: 1, view: 'lite' });
    expect(page.status).toBe(200);
    expect(page.body).toMatchObject({ total: 1, page: 1, pageSize: 1, totalPages: 1, data: [{ id: stamped.id, title: 'In sprint' }] });
    expect(page.body.data[0]).not.toHaveProperty('description');
    expectDeprecated(page, '/api/v1/tasks/query');

    // a card joins the sprint through the metadata PATCH and leaves it through the DELETE route
    const joined = await f.sys.call('PATCH', `/api/v1/tasks/${noColumn.id}/metadata`, f.alice, { key: 'app.sprint', value: f.s1 });
    expect(joined.status).toBe(200);
    expect(joined.body.metadata).toEqual({ 'app.sprint': f.s1 });
    expect(await f.members(f.s1)).toEqual(['In sprint', 'No column']);
    const left = await f.sys.call('DELETE', `/api/v1/tasks/${noColumn.id}/metadata/app.sprint`, f.alice);
    expect(left.status).toBe(200);
    expect(await f.members(f.s1)).toEqual(['In sprint']);
  });

  it('closes a sprint: refuses without rollover, then rolls over, settles velocity, writes the retro note and repoints the board', async () => {
    await using f = await sprintFixture();
    const a = await f.card({ title: 'A finished', column_id: 'col-done', metadata: { 'app.points': 3 } });
    const b = await f.card({ title: 'B finished', column_id: 'col-done', metadata: { 'app.points': 2.5 } });
    await f.card({ title: 'C finished, text points', column_id: 'col-done', metadata: { 'app.points': '5' } });
    const c = await f.card({ title: 'D open', column_id: 'col-to-do', metadata: { 'app.points': 8 } });
    const d = await f.card({ title: 'E open', column_id: 'col-doing' });
    expect([a, b, c, d].every((t) => t.metadata['app.sprint'] === f.s1)).toBe(true);

    const refused = await f.close(f.s1);
    const err = expectError(refused, 400, 'SPRINT_ROLLOVER_REQUIRED');
    expect(err.details.unfinished).toEqual(expect.arrayContaining([
      { id: c.id, title: 'D open', status: 'todo' },
      { id: d.id, title: 'E open', status: 'doing' },
    ]));
    expect(err.details.unfinished).toHaveLength(2);
    const stillOpen = await f.sys.call('GET', `/api/v1/tasks/${f.s1}`, f.alice);
    expect(stillOpen.body).toMatchObject({ status: 'doing', notes: [] });

    f.sys.clock.advance(3_600_000);
    const closed = await f.close(f.s1, { rollover: f.s2 });
    expect(closed.status, JSON.stringify(closed.body)).toBe(200);
    expect(closed.body).toEqual({
      sprintId: f.s1, target: f.s2, completed: 3, rolledOver: 2, rotatedBoardIds: [f.boardId], skippedBoardIds: [], skippedTaskIds: [], velocity: 5.5,
      startedSprintId: f.s2,
    });

    expect(await f.members(f.s1)).toEqual(['A finished', 'B finished', 'C finished, text points']);
    expect(await f.members(f.s2)).toEqual(['D open', 'E open']);
    const board = await f.sys.call('GET', `/api/v1/boards/${f.boardId}`, f.alice);
    expect(board.body.activeSprintId).toBe(f.s2);
    const todo = await f.sys.call('POST', `/api/v1/boards/${f.boardId}/columns/col-to-do/query`, f.alice, {});
    expect(todo.body.data.map((t: { title: string }) => t.title)).toEqual(['D open']);

    const sprint = await f.sys.call('GET', `/api/v1/tasks/${f.s1}`, f.alice);
    expect(sprint.status).toBe(200);
    expect(sprint.body).toMatchObject({ id: f.s1, status: 'done', updated_at: '2026-03-02T10:00:00.000Z' });
    expect(sprint.body.notes).toHaveLength(1);
    const retro: string = sprint.body.notes[0].content;
    expect(sprint.body.notes[0]).toMatchObject({ task_id: f.s1, created_by: f.alice.id, created_at: '2026-03-02T10:00:00.000Z' });
    expect(retro).toContain('## Sprint retro: Sprint 1');
    expect(retro).toContain('Velocity: **5.5**');
    expect(retro).toContain('### Finished (3)');
    expect(retro).toContain('### Rolled over (2)');
    expect(retro).toContain(`Moved to sprint "Sprint 2" (\`${f.s2}\`)`);
    expect(retro).toContain(`D open (\`${c.id}\`): status \`todo\``);

    // replay: same answer, nothing new written
    f.sys.clock.advance(60_000);
    const replay = await f.close(f.s1, { rollover: f.s2 });
    expect(replay.status).toBe(200);
    expect(replay.body).toEqual(closed.body);
    expect((await f.sys.call('GET', `/api/v1/tasks/${f.s1}`, f.alice)).body).toEqual(sprint.body);
    const other = expectError(await f.close(f.s1, { rollover: 'backlog' }), 400, 'SPRINT_ALREADY_CLOSED');
    expect(other.details.closedWith).toBe(f.s2);

    // the closed sprint is no longer a valid rollover target, nor a valid board pointer
    const s3 = await f.sys.call('POST', '/api/v1/tasks', f.alice, { title: 'Sprint 3', status: 'todo', metadata: { 'app.type': 'sprint' } });
    const invalid = expectError(await f.close(s3.body.id, { rollover: f.s1 }), 400, 'SPRINT_ROLLOVER_INVALID');
    expect(invalid.details.reason).toBe('closed');
    expectError(await f.sys.call('PUT', `/api/v1/boards/${f.boardId}`, f.alice, { activeSprintId: f.s1 }), 400, 'VALIDATION_FAILED');

    // legacy path: the second sprint closes into the backlog; the board pointer is cleared
    const legacy = await f.sys.call('POST', `/api/v1/todolist/${f.s2}/close-sprint`, f.alice, { rollover: 'backlog' });
    expect(legacy.status, JSON.stringify(legacy.body)).toBe(200);
    expectDeprecated(legacy, `/api/v1/tasks/${f.s2}/close-sprint`);
    expect(legacy.body).toEqual({
      sprintId: f.s2, target: 'backlog', completed: 0, rolledOver: 2, rotatedBoardIds: [f.boardId], skippedBoardIds: [], skippedTaskIds: [], velocity: 0,
    });
    expect(await f.members(f.s2)).toEqual([]);
    const backlog = await f.sys.call('POST', '/api/v1/tasks/query', f.alice, { query: "app.sprint IS NULL AND app.type IS NULL ORDER BY title ASC" });
    expect(backlog.body.data.map((t: { title: string }) => t.title)).toEqual(['D open', 'E open']);
    expect((await f.sys.call('GET', `/api/v1/boards/${f.boardId}`, f.alice)).body).not.toHaveProperty('activeSprintId');
  });

  it('concurrent closes of one sprint all answer the one outcome and write one retro note', async () => {
    await using f = await sprintFixture();
    await f.card({ title: 'Open', column_id: 'col-to-do' });
    const answers = await Promise.all(Array.from({ length: 4 }, () => f.close(f.s1, { rollover: f.s2 })));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200, 200]);
    for (const a of answers) expect(a.body).toEqual(answers[0]!.body);
    expect(answers[0]!.body).toMatchObject({ target: f.s2, rolledOver: 1 });
    expect((await f.sys.call('GET', `/api/v1/tasks/${f.s1}`, f.alice)).body.notes).toHaveLength(1);
  });

  it('a group member closing a shared sprint repoints the boards it may write and lists the read-only ones as skipped', async () => {
    await using f = await sprintFixture();
    const bob = await f.sys.user('bob');
    const group = await f.sys.call('POST', '/api/v1/groups', f.alice, { name: 'crew' });
    await f.sys.call('POST', `/api/v1/groups/${group.body.id}/members`, f.alice, { user_id: bob.id });
    const board = async (name: string, permission: 'r' | 'rw') => {
      const b = await f.sys.call('POST', '/api/v1/boards', f.alice, { name, board_type: 'shared', columns: COLUMNS });
      expect((await f.sys.call('POST', `/api/v1/boards/${b.body.id}/share`, f.alice, { group_id: group.body.id, permission })).status).toBe(200);
      return b.body.id as string;
    };
    const writable = await board('Team (rw)', 'rw');
    const readOnly = await board('Stakeholders (r)', 'r');
    // the sprint lives on the rw board, so the group may write it
    const sprint = await f.sys.call('POST', `/api/v1/boards/${writable}/tasks`, f.alice, { title: 'Shared sprint', status: 'doing', metadata: { 'app.type': 'sprint' } });
    for (const id of [writable, readOnly]) {
      expect((await f.sys.call('PUT', `/api/v1/boards/${id}`, f.alice, { activeSprintId: sprint.body.id })).status).toBe(200);
    }
    const done = await f.sys.call('POST', `/api/v1/boards/${writable}/tasks`, bob, { title: 'Bob done', column_id: 'col-done', metadata: { 'app.points': 5 } });
    expect(done.body.metadata['app.sprint']).toBe(sprint.body.id);

    const closed = await f.sys.call('POST', `/api/v1/tasks/${sprint.body.id}/close-sprint`, bob, { rollover: 'backlog' });
    expect(closed.status, JSON.stringify(closed.body)).toBe(200);
    expect(closed.body).toEqual({
      sprintId: sprint.body.id, target: 'backlog', completed: 1, rolledOver: 0, rotatedBoardIds: [writable], skippedBoardIds: [readOnly], skippedTaskIds: [], velocity: 5,
    });
    expect((await f.sys.call('GET', `/api/v1/boards/${writable}`, f.alice)).body).not.toHaveProperty('activeSprintId');
    expect((await f.sys.call('GET', `/api/v1/boards/${readOnly}`, f.alice)).body.activeSprintId).toBe(sprint.body.id);
  });

  it('closes a sprint with nothing unfinished without a body, and refuses what is not a sprint', async () => {
    await using f = await sprintFixture();
    await f.card({ title: 'Done already', column_id: 'col-done', metadata: { 'app.points': 1 } });
    const res = await f.close(f.s1);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body).toEqual({ sprintId: f.s1, target: 'none', completed: 1, rolledOver: 0, rotatedBoardIds: [f.boardId], skippedBoardIds: [], skippedTaskIds: [], velocity: 1 });
    expect((await f.sys.call('GET', `/api/v1/boards/${f.boardId}`, f.alice)).body).not.toHaveProperty('activeSprintId');

    const plain = await f.card({ title: 'Just a card', status: 'todo' });
    expectError(await f.close(plain.id), 400, 'NOT_A_SPRINT');
    expectError(await f.close('00000000-0000-4000-8000-000000000000'), 404, 'TASK_NOT_FOUND');
    const same = expectError(await f.close(f.s2, { rollover: f.s2 }), 400, 'SPRINT_ROLLOVER_INVALID');
    expect(same.details.reason).toBe('same_sprint');
    expectError(await f.close(f.s2, { rollover: '' }), 400, 'VALIDATION_FAILED');
  });
});
