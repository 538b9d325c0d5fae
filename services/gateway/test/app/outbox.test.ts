import { describe, expect, it } from 'vitest';
import type { EventDoc } from '@app/shared/domain';
import { catchUpOutbox } from '@app/shared/events';
import { Collections } from '@app/shared/store';
import { NOW, system, type System } from './system.js';

/**
 * The events outbox, its emitting half: every write route appends its events to the outbox in the write's
 * transaction, with the envelope and `data` shapes of the brief's agreement. Numbered by the relay
 * and read straight from the store, by `seq`, as the feed, stream and webhooks do.
 */

const COLUMNS = [
  { name: 'To Do', query: "status = 'todo'" },
  { name: 'Doing', query: "status = 'doing'", actions: [{ trigger: 'enter', field: 'tags', operation: 'add', value: ['wip'] }] },
];

/** The events after `seq`, oldest first (the committed writes numbered first, as a reader does). */
async function eventsAfter(sys: System, seq: number): Promise<EventDoc[]> {
  await catchUpOutbox(sys.store);
  return sys.store.collection<EventDoc>(Collections.events).find({ seq: { $gt: seq } }, { sort: { seq: 1 } });
}

/** Runs `write` and returns the events it appended. */
async function emitted(sys: System, write: () => Promise<unknown>): Promise<EventDoc[]> {
  await catchUpOutbox(sys.store);
  const last = (await sys.store.collection<EventDoc>(Collections.events).find({}, { sort: { seq: -1 }, limit: 1 }))[0]?.seq ?? 0;
  await write();
  return eventsAfter(sys, last);
}

describe('events outbox: one write, its events, in its transaction', () => {
  it('task create, PATCH, metadata set and delete, folder move, note, delete: types, envelope and data', async () => {
    await using sys = await system();
    const alice = await sys.user('alice');
    let taskId = '';
    const [created] = await emitted(sys, async () => {
      const res = await sys.call('POST', '/api/v1/tasks', alice, { title: 'T', status: 'todo', metadata: { 'app.points': 3 } }, { 'x-request-id': 'req-create-1' });
      taskId = res.body.id;
    });
    expect(created).toMatchObject({
      _id: expect.stringMatching(/^[0-9a-f-]{36}$/), seq: expect.any(Number), type: 'task.created',
      occurred_at: NOW, actor: alice.id, request_id: 'req-create-1', task_id: taskId,
    });
    const { notes: _notes, linkedTo: _linked, ...apiTask } = (await sys.call('GET', `/api/v1/tasks/${taskId}`, alice)).body;
    expect(created!.data).toEqual({ task: apiTask });
    expect(apiTask).toMatchObject({ id: taskId, title: 'T', version: 1, metadata: { 'app.points': 3 } });

    const s1 = (await sys.call('POST', '/api/v1/tasks', alice, { title: 'Sprint', metadata: { 'app.type': 'sprint' } })).body.id as string;
    const patched = await emitted(sys, () => sys.call('PATCH', `/api/v1/tasks/${taskId}`, alice, { title: 'T2', assignee: alice.id, metadata: { 'app.sprint': s1 } }));
    expect(patched.map((e) => e.type)).toEqual(['task.updated']);
    expect(patched[0]!.data.task).toMatchObject({ id: taskId, title: 'T2', version: 2 });
    expect(patched[0]!.data.changes).toEqual([
      { field: 'title', from: 'T', to: 'T2' },
      { field: 'assignee', to: alice.id },
      { field: 'metadata.app.sprint', to: s1 },
    ]);

    const set = await emitted(sys, () => sys.call('PATCH', `/api/v1/tasks/${taskId}/metadata`, alice, { key: 'app.points', value: 5 }));
    expect(set.map((e) => [e.type, e.data.changes])).toEqual([['task.updated', [{ field: 'metadata.app.points', from: 3, to: 5 }]]]);
    const unset = await emitted(sys, () => sys.call('DELETE', `/api/v1/tasks/${taskId}/metadata/app.sprint`, alice));
    expect(unset.map((e) => [e.type, e.data.changes])).toEqual([['task.updated', [{ field: 'metadata.app.sprint', from: s1 }]]]);
    const moved = await emitted(sys, () => sys.call('PATCH', `/api/v1/tasks/${taskId}/move`, alice, { path: '/a' }));
    expect(moved.map((e) => [e.type, e.data.changes])).toEqual([['task.updated', [{ field: 'path', from: '', to: '/a' }]]]);
    // a PATCH that changes no API field still bumps the version, and tells no one
    expect(await emitted(sys, () => sys.call('PATCH', `/api/v1/tasks/${taskId}`, alice, { title: 'T2' }))).toEqual([]);

    const note = await emitted(sys, () => sys.call('POST', `/api/v1/tasks/${taskId}/notes`, alice, { content: 'hello' }));
    expect(note).toMatchObject([{ type: 'note.created', task_id: taskId, data: { note: { task_id: taskId, content: 'hello', created_by: alice.id } } }]);

    const deleted = await emitted(sys, () => sys.call('DELETE', `/api/v1/tasks/${taskId}`, alice));
    expect(deleted).toMatchObject([{ type: 'task.deleted', task_id: taskId, data: { task_id: taskId, task: { id: taskId, title: 'T2' } } }]);

    // seq strictly increasing with no gaps, ids unique
    const all = await eventsAfter(sys, 0);
    expect(all.map((e) => e.seq)).toEqual(all.map((_, i) => i + 1));
    expect(new Set(all.map((e) => e._id)).size).toBe(all.length);
  });

  it('board create, PUT, share, unshare, delete, card create and exactly one card.moved per move', async () => {
    await using sys = await system();
    const alice = await sys.user('alice');
    let boardId = '';
    const created = await emitted(sys, async () => {
      boardId = (await sys.call('POST', '/api/v1/boards', alice, { name: 'B', board_type: 'shared', columns: COLUMNS })).body.id;
    });
    expect(created).toMatchObject([{ type: 'board.created', board_id: boardId, actor: alice.id, data: { board: { id: boardId, name: 'B', version: 1 } } }]);
    expect(created[0]).not.toHaveProperty('task_id');
    expect(await emitted(sys, () => sys.call('PUT', `/api/v1/boards/${boardId}`, alice, { name: 'B2' })))
      .toMatchObject([{ type: 'board.updated', board_id: boardId, data: { board: { name: 'B2', version: 2 } } }]);

    let cardId = '';
    const card = await emitted(sys, async () => {
      cardId = (await sys.call('POST', `/api/v1/boards/${boardId}/tasks`, alice, { title: 'card', status: 'todo' })).body.id;
    });
    expect(card).toMatchObject([{ type: 'task.created', task_id: cardId, board_id: boardId, data: { task: { id: cardId, title: 'card' } } }]);

    const move = await emitted(sys, () =>
      sys.call('POST', `/api/v1/boards/${boardId}/tasks/${cardId}/move`, alice, { from_column_id: 'col-to-do', to_column_id: 'col-doing' }));
    expect(move).toHaveLength(1);
    expect(move[0]).toMatchObject({
      type: 'card.moved', task_id: cardId, board_id: boardId,
      data: {
        board_id: boardId, from_column_id: 'col-to-do', to_column_id: 'col-doing',
        applied_actions: [{ op: 'set', field: 'status', from: 'todo', to: 'doing' }, { op: 'add_tags', value: ['wip'] }],
        task: { id: cardId, status: 'doing', tags: ['wip'], version: 2 },
      },
    });
    // a dry run and a refused move emit nothing
    expect(await emitted(sys, () => sys.call('POST', `/api/v1/boards/${boardId}/tasks/${cardId}/move`, alice, { from_column_id: 'col-doing', to_column_id: 'col-to-do', dry_run: true }))).toEqual([]);
    expect(await emitted(sys, () => sys.call('POST', `/api/v1/boards/${boardId}/tasks/${cardId}/move`, alice, { from_column_id: 'col-to-do', to_column_id: 'col-doing' }))).toEqual([]);

    const group = (await sys.call('POST', '/api/v1/groups', alice, { name: 'g' })).body.id as string;
    expect(await emitted(sys, () => sys.call('POST', `/api/v1/boards/${boardId}/share`, alice, { group_id: group, permission: 'r' })))
      .toMatchObject([{ type: 'board.shared', board_id: boardId, data: { board: { group_id: group, permission: 'r' } } }]);
    expect(await emitted(sys, () => sys.call('DELETE', `/api/v1/boards/${boardId}/share`, alice)))
      .toMatchObject([{ type: 'board.unshared', board_id: boardId }]);
    expect(await emitted(sys, () => sys.call('DELETE', `/api/v1/boards/${boardId}`, alice)))
      .toMatchObject([{ type: 'board.deleted', board_id: boardId, data: { board: { id: boardId, name: 'B2' } } }]);
  });

  it('close-sprint: one sprint.closed with the response body plus one task.updated per rolled-over member', async () => {
    await using sys = await system();
    const alice = await sys.user('alice');
    const mk = async (body: Record<string, unknown>) => (await sys.call('POST', '/api/v1/tasks', alice, body)).body.id as string;
    const sprint = await mk({ title: 'S1', metadata: { 'app.type': 'sprint' } });
    const next = await mk({ title: 'S2', metadata: { 'app.type': 'sprint' } });
    const done = await mk({ title: 'done', status: 'done', metadata: { 'app.sprint': sprint, 'app.points': 2 } });
    const open1 = await mk({ title: 'open1', status: 'todo', metadata: { 'app.sprint': sprint } });
    const open2 = await mk({ title: 'open2', status: 'doing', metadata: { 'app.sprint': sprint } });
    let result: unknown;
    const events = await emitted(sys, async () => {
      const res = await sys.call('POST', `/api/v1/tasks/${sprint}/close-sprint`, alice, { rollover: next });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      result = res.body;
    });
    expect(events.map((e) => e.type).sort()).toEqual(['sprint.closed', 'task.updated', 'task.updated']);
    const closed = events.find((e) => e.type === 'sprint.closed')!;
    expect(closed).toMatchObject({ task_id: sprint, data: { result } });
    const updates = events.filter((e) => e.type === 'task.updated');
    expect(updates.map((e) => e.task_id).sort()).toEqual([open1, open2].sort());
    for (const u of updates) {
      expect(u.data.changes).toEqual([{ field: 'metadata.app.sprint', from: sprint, to: next }]);
      expect(u.data.task).toMatchObject({ version: 2, metadata: { 'app.sprint': next } });
      expect((await sys.call('GET', `/api/v1/tasks/${u.task_id}`, alice)).body.version).toBe(2);
    }
    expect(updates.map((e) => e.task_id)).not.toContain(done);
    // no board pointed at the sprint: one sprint.closed without a board
    expect(closed.board_id).toBeUndefined();
    // the replayed close (same rollover) writes nothing and emits nothing
    expect(await emitted(sys, () => sys.call('POST', `/api/v1/tasks/${sprint}/close-sprint`, alice, { rollover: next }))).toEqual([]);
  });

  it('a refused write emits nothing', async () => {
    await using sys = await system();
    const alice = await sys.user('alice');
    const bob = await sys.user('bob');
    const id = (await sys.call('POST', '/api/v1/tasks', alice, { title: 'T' })).body.id as string;
    expect(await emitted(sys, async () => {
      expect((await sys.call('PATCH', `/api/v1/tasks/${id}`, alice, { title: '' })).status).toBe(400);
      expect((await sys.call('PATCH', `/api/v1/tasks/${id}`, bob, { title: 'x' })).status).toBe(404);
      expect((await sys.call('PATCH', `/api/v1/tasks/${id}`, alice, { title: 'x' }, { 'if-match': '"5"' })).status).toBe(412);
      expect((await sys.call('POST', '/api/v1/tasks', alice, { title: 'x', assignee: 'nobody' })).status).toBe(400);
    })).toEqual([]);
  });

  it("close-sprint emits sprint.closed for each board it rotated, with its board_id: a board-filtered feed sees the board's sprint close", async () => {
    await using sys = await system();
    const alice = await sys.user('alice');
    const mk = async (body: Record<string, unknown>) => (await sys.call('POST', '/api/v1/tasks', alice, body)).body.id as string;
    const sprint = await mk({ title: 'S1', metadata: { 'app.type': 'sprint' } });
    const next = await mk({ title: 'S2', metadata: { 'app.type': 'sprint' } });
    const boards: string[] = [];
    for (const name of ['A', 'B']) {
      const id = (await sys.call('POST', '/api/v1/boards', alice, { name, board_type: 'private' })).body.id as string;
      expect((await sys.call('PUT', `/api/v1/boards/${id}`, alice, { activeSprintId: sprint })).status).toBe(200);
      boards.push(id);
    }
    const other = (await sys.call('POST', '/api/v1/boards', alice, { name: 'C', board_type: 'private' })).body.id as string;
    const events = await emitted(sys, async () => {
      const res = await sys.call('POST', `/api/v1/tasks/${sprint}/close-sprint`, alice, { rollover: next });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
    });
    const closed = events.filter((e) => e.type === 'sprint.closed');
    expect(closed.map((e) => e.board_id).sort()).toEqual([...boards].sort());
    for (const id of boards) {
      const feed = await sys.call('GET', `/api/v1/events?board_id=${id}&types=sprint.closed`, alice);
      expect(feed.body.data.map((e: any) => [e.type, e.task_id, e.board_id])).toEqual([['sprint.closed', sprint, id]]);
      expect(feed.body.data[0].data.result.rotatedBoardIds.sort()).toEqual([...boards].sort());
    }
    expect((await sys.call('GET', `/api/v1/events?board_id=${other}&types=sprint.closed`, alice)).body.data).toEqual([]);
  });
});
