import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { catchUpOutbox } from '@app/shared/events';
import { Collections } from '@app/shared/store';
import { expectDeprecated, expectError, system, type System, type User } from './system.js';

/**
 * The task calls ud's clients make beyond SPEC's list, through HTTP: restore, check-in and the
 * `/todolist/batch*` family (docs/tasks.md "Restore and check-in", "Batch family").
 */

const task = async (sys: System, as: User, body: Record<string, unknown> = {}) => {
  const res = await sys.call('POST', '/api/v1/tasks', as, { title: 'Task', ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as { id: string; version: number; title: string };
};
/** Events of `type` in seq order, once the committed writes are numbered (as a reader sees them). */
const eventsOf = async (sys: System, type: string) =>
  (await catchUpOutbox(sys.store), await sys.store.collection(Collections.events).find({ type }, { sort: { seq: 1 } })) as unknown as Array<{ task_id: string; data: any }>;

/** alice shares a board with a group holding bob at `permission`; a card alice makes there is readable by bob. */
async function sharedCard(sys: System, alice: User, bob: User, permission: 'r' | 'rw'): Promise<string> {
  const group = await sys.call('POST', '/api/v1/groups', alice, { name: `crew-${permission}` });
  await sys.call('POST', `/api/v1/groups/${group.body.id}/members`, alice, { user_id: bob.id });
  const board = await sys.call('POST', '/api/v1/boards', alice, { name: 'Shared', board_type: 'private' });
  await sys.call('POST', `/api/v1/boards/${board.body.id}/share`, alice, { group_id: group.body.id, permission });
  const card = await sys.call('POST', `/api/v1/boards/${board.body.id}/tasks`, alice, { title: `shared ${permission}` });
  expect(card.status).toBe(201);
  return card.body.id;
}

describe('POST /api/v1/tasks/{id}/restore', () => {
  it("restores the caller's soft-deleted task: live again everywhere, version bumped, task.restored emitted", async () => {
    await using sys = await system();
    const alice = await sys.user('alice');
    const t = await task(sys, alice, { title: 'Back soon', tags: ['x'] });
    expect((await sys.call('DELETE', `/api/v1/tasks/${t.id}`, alice)).status).toBe(204);
    expectError(await sys.call('GET', `/api/v1/tasks/${t.id}`, alice), 404, 'TASK_NOT_FOUND');

    const res = await sys.call('POST', `/api/v1/tasks/${t.id}/restore`, alice);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: t.id, title: 'Back soon', tags: ['x'], version: 3 });
    expect(res.body).not.toHaveProperty('deleted_at');
    expect(res.headers.etag).toBe('"3"');
    expect((await sys.call('GET', `/api/v1/tasks/${t.id}`, alice)).status).toBe(200);
    const found = await sys.call('POST', '/api/v1/tasks/query', alice, { query: "title = 'Back soon'" });
    expect(found.body.data.map((x: { id: string }) => x.id)).toEqual([t.id]);
    const restored = await eventsOf(sys, 'task.restored');
    expect(restored.map((e) => [e.task_id, e.data.task.version])).toEqual([[t.id, 3]]);
  });

  it("answers 404 for another user's deleted task, a live task, an unknown id, and a second restore", async () => {
    await using sys = await system();
    const alice = await sys.user('alice');
    const bob = await sys.user('bob');
    const hers = await task(sys, alice);
    await sys.call('DELETE', `/api/v1/tasks/${hers.id}`, alice);
    expectError(await sys.call('POST', `/api/v1/tasks/${hers.id}/restore`, bob), 404, 'TASK_NOT_FOUND');
    const live = await task(sys, alice);
    expectError(await sys.call('POST', `/api/v1/tasks/${live.id}/restore`, alice), 404, 'TASK_NOT_FOUND');
    expectError(await sys.call('POST', `/api/v1/tasks/${randomUUID()}/restore`, alice), 404, 'TASK_NOT_FOUND');
    expect((await sys.call('POST', `/api/v1/tasks/${hers.id}/restore`, alice)).status).toBe(200);
    expectError(await sys.call('POST', `/api/v1/tasks/${hers.id}/restore`, alice), 404, 'TASK_NOT_FOUND');
    expect(await eventsOf(sys, 'task.restored')).toHaveLength(1);
  });

  it('lets a group member with rw restore a shared task, not one with r (404); honours If-Match', async () => {
    await using sys = await system();
    const alice = await sys.user('alice');
    const bob = await sys.user('bob');
    const readOnly = await sharedCard(sys, alice, bob, 'r');
    const writable = await sharedCard(sys, alice, bob, 'rw');
    for (const id of [readOnly, writable]) await sys.call('DELETE', `/api/v1/tasks/${id}`, alice);
    expectError(await sys.call('POST', `/api/v1/tasks/${readOnly}/restore`, bob), 404, 'TASK_NOT_FOUND');
    expectError(await sys.call('POST', `/api/v1/tasks/${writable}/restore`, bob, undefined, { 'if-match': '"1"' }), 412, 'PRECONDITION_FAILED');
    const res = await sys.call('POST', `/api/v1/tasks/${writable}/restore`, bob, undefined, { 'if-match': '"2"' });
    expect(res.status).toBe(200);
    expect(res.body.updated_by).toBe(bob.id);
  });

  it('answers at the legacy path with the deprecation headers', async () => {
    await using sys = await system();
    const alice = await sys.user('alice');
    const t = await task(sys, alice);
    await sys.call('DELETE', `/api/v1/todolist/${t.id}`, alice);
    const res = await sys.call('POST', `/api/v1/todolist/${t.id}/restore`, alice);
    expect(res.status).toBe(200);
    expectDeprecated(res, `/api/v1/tasks/${t.id}/restore`);
  });
});

describe('POST /api/v1/tasks/{id}/check-in', () => {
  it('20 concurrent check-ins all count: +20, lastCheckedInAt set, one version per check-in', async () => {
    await using sys = await system();
    const alice = await sys.user('alice');
    const t = await task(sys, alice);
    const answers = await Promise.all(Array.from({ length: 20 }, () => sys.call('POST', `/api/v1/tasks/${t.id}/check-in`, alice)));
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(200));
    expect(answers.map((a) => a.body.checkInCount).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    const after = (await sys.call('GET', `/api/v1/tasks/${t.id}`, alice)).body;
    expect(after).toMatchObject({ checkInCount: 20, lastCheckedInAt: sys.clock.now().toISOString(), version: 21 });
    const updates = await eventsOf(sys, 'task.updated');
    expect(updates).toHaveLength(20);
    expect(updates[0]!.data.changes).toEqual(expect.arrayContaining([{ field: 'checkInCount', from: 0, to: 1 }]));
  });

  it("answers 404 for another user's task or a deleted one, 403 for a read-only shared one; legacy path deprecated", async () => {
    await using sys = await system();
    const alice = await sys.user('alice');
    const bob = await sys.user('bob');
    const hers = await task(sys, alice);
    expectError(await sys.call('POST', `/api/v1/tasks/${hers.id}/check-in`, bob), 404, 'TASK_NOT_FOUND');
    const readOnly = await sharedCard(sys, alice, bob, 'r');
    expectError(await sys.call('POST', `/api/v1/tasks/${readOnly}/check-in`, bob), 403, 'FORBIDDEN');
    const legacy = await sys.call('POST', `/api/v1/todolist/${hers.id}/check-in`, alice);
    expect(legacy.body).toEqual({ checkInCount: 1 });
    expectDeprecated(legacy, `/api/v1/tasks/${hers.id}/check-in`);
    await sys.call('DELETE', `/api/v1/tasks/${hers.id}`, alice);
    expectError(await sys.call('POST', `/api/v1/tasks/${hers.id}/check-in`, alice), 404, 'TASK_NOT_FOUND');
  });
});

describe('the batch family', () => {
  it('batch-get (legacy POST /todolist/batch): readable tasks in the order of the ids, others left out', async () => {
    await using sys = await system();
    const alice = await sys.user('alice');
    const bob = await sys.user('bob');
    const [a, b] = [await task(sys, alice, { title: 'a' }), await task(sys, alice, { title: 'b' })];
    const bobs = await task(sys, bob, { title: 'bobs' });
    const gone = await task(sys, alice, { title: 'gone' });
    await sys.call('DELETE', `/api/v1/tasks/${gone.id}`, alice);
    const res = await sys.call('POST', '/api/v1/todolist/batch', alice, { ids: [b.id, bobs.id, 'not-a-uuid', gone.id, a.id, b.id] });
    expect(res.status).toBe(200);
    expect(res.body.items.map((t: { title: string }) => t.title)).toEqual(['b', 'a']);
    expectDeprecated(res, '/api/v1/tasks/batch-get');
    expect((await sys.call('POST', '/api/v1/tasks/batch-get', alice, { ids: [a.id] })).body.items[0].id).toBe(a.id);
  });

  it('every id batch takes 1..100 ids: 0 or 101 is 400 naming /ids; a missing field is named', async () => {
    await using sys = await system();
    const alice = await sys.user('alice');
    const ids = (n: number) => Array.from({ length: n }, () => randomUUID());
    const rest: Record<string, object> = { 'batch-get': {}, 'batch-update': { updates: {} }, 'batch-delete': {}, 'batch-transfer': { newOwnerId: alice.id } };
    for (const [path, more] of Object.entries(rest)) {
      for (const n of [0, 101]) {
        const res = await sys.call('POST', `/api/v1/tasks/${path}`, alice, { ids: ids(n), ...more });
        expect(expectError(res, 400, 'VALIDATION_FAILED').validationErrors[0].field, `${path} ${n}`).toBe('/ids');
      }
    }
    const noItems = await sys.call('PATCH', '/api/v1/tasks/batch-update-each', alice, { items: [] });
    expect(expectError(noItems, 400, 'VALIDATION_FAILED').validationErrors[0].field).toBe('/items');
    const noUpdates = await sys.call('POST', '/api/v1/tasks/batch-update', alice, { ids: ids(1) });
    expect(expectError(noUpdates, 400, 'VALIDATION_FAILED').validationErrors[0].field).toMatch(/updates/);
  });

  it('batch-update: the same changes to each id with its own access check; a bad change is 400 naming /updates/<field>, nothing written', async () => {
    await using sys = await system();
    const alice = await sys.user('alice');
    const bob = await sys.user('bob');
    const mine = await task(sys, alice);
    const hers = await task(sys, bob);
    const readOnly = await sharedCard(sys, bob, alice, 'r');
    const res = await sys.call('POST', '/api/v1/todolist/batch-update', alice, { ids: [mine.id, hers.id, readOnly], updates: { status: 'done', tags: ['t'] } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ totalCount: 3, successCount: 1, failCount: 2 });
    expect(res.body.results).toEqual([
      { id: mine.id, success: true },
      { id: hers.id, success: false, error: expect.stringMatching(/^TASK_NOT_FOUND: /), code: 'TASK_NOT_FOUND', status: 404 },
      { id: readOnly, success: false, error: expect.stringMatching(/^FORBIDDEN: /), code: 'FORBIDDEN', status: 403 },
    ]);
    expect((await sys.call('GET', `/api/v1/tasks/${mine.id}`, alice)).body).toMatchObject({ status: 'done', tags: ['t'] });
    expect((await sys.call('GET', `/api/v1/tasks/${hers.id}`, bob)).body.status).toBe('todo');

    const bad = await sys.call('POST', '/api/v1/tasks/batch-update', alice, { ids: [mine.id], updates: { title: '   ' } });
    expect(expectError(bad, 400, 'VALIDATION_FAILED').validationErrors[0].field).toBe('/updates/title');
    expect((await sys.call('GET', `/api/v1/tasks/${mine.id}`, alice)).body.version).toBe(2);
  });

  it('batch-update-each: description and links per item; an unreadable link fails that item naming it', async () => {
    await using sys = await system();
    const alice = await sys.user('alice');
    const bob = await sys.user('bob');
    const [a, b, c] = [await task(sys, alice), await task(sys, alice), await task(sys, alice)];
    const bobs = await task(sys, bob);
    const res = await sys.call('PATCH', '/api/v1/todolist/batch-update-each', alice, {
      items: [
        { id: a.id, description: 'links to [[b]] and [[c]]', links_to: [b.id, c.id] },
        { id: b.id, links_to: [c.id, bobs.id] },
        { id: bobs.id, description: 'not mine' },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body.results.map((r: { success: boolean }) => r.success)).toEqual([true, false, false]);
    expect(res.body.results[1].error).toMatch(/items\/1\/links_to\/1/);
    expect(res.body.results[2].code).toBe('TASK_NOT_FOUND');
    const readA = (await sys.call('GET', `/api/v1/tasks/${a.id}`, alice)).body;
    expect(readA).toMatchObject({ description: 'links to [[b]] and [[c]]', linkedToIds: [b.id, c.id] });
    expect(readA.linkedTo.map((l: { id: string }) => l.id)).toEqual([b.id, c.id]);
    expect((await sys.call('GET', `/api/v1/tasks/${b.id}`, alice)).body).not.toHaveProperty('linkedToIds');
  });

  it('batch-delete: soft-deletes the ids the caller may write, one task.deleted each; others reported', async () => {
    await using sys = await system();
    const alice = await sys.user('alice');
    const bob = await sys.user('bob');
    const [a, b] = [await task(sys, alice), await task(sys, alice)];
    const hers = await task(sys, bob);
    const res = await sys.call('POST', '/api/v1/todolist/batch-delete', alice, { ids: [a.id, hers.id, b.id] });
    expect(res.body).toMatchObject({ totalCount: 3, successCount: 2, failCount: 1 });
    expect(res.body.results[1]).toMatchObject({ id: hers.id, success: false, status: 404 });
    for (const id of [a.id, b.id]) expectError(await sys.call('GET', `/api/v1/tasks/${id}`, alice), 404, 'TASK_NOT_FOUND');
    expect((await sys.call('GET', `/api/v1/tasks/${hers.id}`, bob)).status).toBe(200);
    expect((await eventsOf(sys, 'task.deleted')).map((e) => e.task_id)).toEqual([a.id, b.id]);
  });

  it('batch-transfer: only the owner may transfer; newOwnerId must be a user (400 naming it, nothing written)', async () => {
    await using sys = await system();
    const alice = await sys.user('alice');
    const bob = await sys.user('bob');
    const mine = await task(sys, alice, { title: 'for bob' });
    const writable = await sharedCard(sys, bob, alice, 'rw'); // bob's card alice may write

    const nobody = await sys.call('POST', '/api/v1/tasks/batch-transfer', alice, { ids: [mine.id], newOwnerId: randomUUID() });
    expect(expectError(nobody, 400, 'VALIDATION_FAILED').validationErrors[0].field).toBe('/newOwnerId');
    expect((await sys.call('GET', `/api/v1/tasks/${mine.id}`, alice)).body.created_by).toBe(alice.id);

    const res = await sys.call('POST', '/api/v1/todolist/batch-transfer', alice, { ids: [mine.id, writable], newOwnerId: bob.id });
    expect(res.status).toBe(200);
    expect(res.body.results).toEqual([
      { id: mine.id, success: true },
      { id: writable, success: false, error: expect.stringMatching(/owner/), code: 'FORBIDDEN', status: 403 },
    ]);
    expect((await sys.call('GET', `/api/v1/tasks/${mine.id}`, bob)).body).toMatchObject({ title: 'for bob', created_by: bob.id });
    expectError(await sys.call('GET', `/api/v1/tasks/${mine.id}`, alice), 404, 'TASK_NOT_FOUND');
    const [event] = await eventsOf(sys, 'task.updated');
    expect(event!.data.changes).toEqual(expect.arrayContaining([{ field: 'created_by', from: alice.id, to: bob.id }]));
  });

  it('batch-upsert: matched on metadata.obsidianPath among the caller\'s tasks: created, then skipped, then updated', async () => {
    await using sys = await system();
    const alice = await sys.user('alice');
    const bob = await sys.user('bob');
    const bobs = await task(sys, bob, { title: 'bob note', metadata: { obsidianPath: 'a.md' } });
    const items = [
      { title: 'A', tags: ['n'], metadata: { obsidianPath: 'a.md', 'cf.size': 1 } },
      { title: 'B', deadline: '2026-04-01', metadata: { obsidianPath: 'b.md' } },
      { title: 'no path', metadata: {} },
    ];
    const first = await sys.call('POST', '/api/v1/todolist/batch-upsert', alice, { items });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ totalCount: 3, createdCount: 2, updatedCount: 0, skippedCount: 0, failCount: 1 });
    expect(first.body.results[2]).toMatchObject({ action: 'failed', code: 'VALIDATION_FAILED', error: expect.stringMatching(/items\/2\/metadata\/obsidianPath/) });
    const [aId, bId] = [first.body.results[0].id, first.body.results[1].id];
    expect(aId).not.toBe(bobs.id);

    const again = await sys.call('POST', '/api/v1/tasks/batch-upsert', alice, { items: items.slice(0, 2) });
    expect(again.body.results.map((r: { action: string; id: string }) => [r.action, r.id])).toEqual([['skipped', aId], ['skipped', bId]]);
    expect((await sys.call('GET', `/api/v1/tasks/${aId}`, alice)).body.version).toBe(1);

    const changed = await sys.call('POST', '/api/v1/tasks/batch-upsert', alice, {
      items: [{ ...items[0], title: 'A2' }, items[1], { title: 'C', metadata: { obsidianPath: 'c.md' } }, { title: 'C again', metadata: { obsidianPath: 'c.md' } }],
    });
    expect(changed.body.results.map((r: { action: string; obsidianPath: string }) => [r.action, r.obsidianPath])).toEqual([
      ['updated', 'a.md'], ['skipped', 'b.md'], ['created', 'c.md'], ['updated', 'c.md'],
    ]);
    expect((await sys.call('GET', `/api/v1/tasks/${aId}`, alice)).body).toMatchObject({ title: 'A2', tags: ['n'], metadata: { obsidianPath: 'a.md', 'cf.size': 1 } });
    expect((await sys.call('GET', `/api/v1/tasks/${bobs.id}`, bob)).body.title).toBe('bob note');
  });

  it('answers a store fault with 503 STORE_UNAVAILABLE, not a per-item error', async () => {
    await using sys = await system();
    const alice = await sys.user('alice');
    const t = await task(sys, alice);
    await sys.store.close();
    expectError(await sys.call('POST', '/api/v1/tasks/batch-delete', alice, { ids: [t.id] }), 503, 'STORE_UNAVAILABLE');
  });
});
