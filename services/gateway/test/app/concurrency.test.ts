import { describe, expect, it } from 'vitest';
import { testStore } from '@app/shared/testing';
import { expectError, system, type Answer } from './system.js';

/*
 * Concurrent requests through HTTP, on every store leg. On the embedded store transactions run one
 * at a time; on MongoDB, and on the snapshot-isolation leg that models it (docs/store.md
 * "Snapshot isolation"), they run at once, each reads the snapshot of its start, and only a write
 * to the same document conflicts. These tests hold the invariants a user sees under that
 * concurrency: a blocking WIP limit is never exceeded, every card is claimed once, a sprint closes
 * once, a group keeps every member added, and an Idempotency-Key creates once.
 */

/** The system on this leg's store; on the snapshot leg every store call takes a 2 ms round trip, as a network would. */
const concurrentSystem = () => system({ store: () => testStore({ latencyMs: 2 }) });

const statuses = (answers: Answer[]) => answers.map((a) => a.status).sort((a, b) => a - b);

describe('concurrent writes through HTTP', () => {
  it('two moves into the last free place of a blocking WIP column: exactly one moves, the other is 409 WIP_LIMIT_REACHED', async () => {
    await using sys = await concurrentSystem();
    const alice = await sys.user('alice');
    const board = await sys.call('POST', '/api/v1/boards', alice, {
      name: 'Flow', board_type: 'private', columns: [
        { id: 'todo', name: 'To Do', query: "status = 'todo'" },
        { id: 'doing', name: 'Doing', query: "status = 'doing'", wip_limit: 2, wip_policy: 'block' },
      ],
    });
    const boardId: string = board.body.id;
    const card = async (title: string, status = 'todo') => (await sys.call('POST', `/api/v1/boards/${boardId}/tasks`, alice, { title, status })).body.id as string;
    await card('already doing', 'doing');
    const [a, b] = [await card('a'), await card('b')];
    const move = (id: string) => sys.call('POST', `/api/v1/boards/${boardId}/tasks/${id}/move`, alice, { from_column_id: 'todo', to_column_id: 'doing' });
    const answers = await Promise.all([move(a), move(b)]);
    expect(statuses(answers), JSON.stringify(answers.map((x) => x.body))).toEqual([200, 409]);
    expectError(answers.find((x) => x.status === 409)!, 409, 'WIP_LIMIT_REACHED');
    const summary = await sys.call('GET', `/api/v1/boards/${boardId}/summary`, alice);
    expect(summary.body.columns[1]).toMatchObject({ total: 2, wip_limit: 2 });
  });

  it('two card creates into the last free place of a blocking WIP column: exactly one is created', async () => {
    await using sys = await concurrentSystem();
    const alice = await sys.user('alice');
    const board = await sys.call('POST', '/api/v1/boards', alice, {
      name: 'Flow', board_type: 'private', columns: [{ id: 'doing', name: 'Doing', query: "status = 'doing'", wip_limit: 1, wip_policy: 'block' }],
    });
    const boardId: string = board.body.id;
    const create = (title: string) => sys.call('POST', `/api/v1/boards/${boardId}/tasks`, alice, { title, column_id: 'doing' });
    const answers = await Promise.all([create('a'), create('b')]);
    expect(statuses(answers), JSON.stringify(answers.map((x) => x.body))).toEqual([201, 409]);
    const summary = await sys.call('GET', `/api/v1/boards/${boardId}/summary`, alice);
    expect(summary.body.columns[0]).toMatchObject({ total: 1 });
  });

  it('20 concurrent claimers on 100 cards: every card is claimed exactly once and no claimer is answered 409', async () => {
    await using sys = await concurrentSystem();
    const alice = await sys.user('alice');
    const board = await sys.call('POST', '/api/v1/boards', alice, {
      name: 'Agents', board_type: 'private', columns: [{ id: 'todo', name: 'To Do', query: "status = 'todo'" }],
    });
    const boardId: string = board.body.id;
    const created = await sys.call('POST', '/api/v1/tasks/batch', alice, {
      tasks: Array.from({ length: 100 }, (_, i) => ({ title: `card ${String(i).padStart(3, '0')}`, status: 'todo' })), atomic: true,
    });
    expect(created.status, JSON.stringify(created.body).slice(0, 300)).toBeLessThan(300);
    const claimed: string[] = [];
    const refused: Answer[] = [];
    const claimer = async () => {
      for (;;) {
        const res = await sys.call('POST', `/api/v1/boards/${boardId}/columns/todo/claim`, alice, { lease_seconds: 600 });
        if (res.status === 204) return;
        if (res.status !== 200) {
          refused.push(res);
          return;
        }
        claimed.push(res.body.task.id as string);
      }
    };
    await Promise.all(Array.from({ length: 20 }, claimer));
    expect(refused.map((r) => `${r.status} ${r.body?.code}`)).toEqual([]);
    expect(claimed).toHaveLength(100);
    expect(new Set(claimed).size).toBe(100);
  }, 60_000);

  it('two concurrent close-sprints of one sprint: one closes it, the other is refused, and the cards roll over once', async () => {
    await using sys = await concurrentSystem();
    const alice = await sys.user('alice');
    const sprint = async (title: string) => (await sys.call('POST', '/api/v1/tasks', alice, { title, status: 'doing', metadata: { 'app.type': 'sprint' } })).body.id as string;
    const [s1, s2] = [await sprint('Sprint 1'), await sprint('Sprint 2')];
    const board = await sys.call('POST', '/api/v1/boards', alice, {
      name: 'Sprint board', board_type: 'private', columns: [
        { id: 'col-to-do', name: 'To Do', query: "status = 'todo'" },
        { id: 'col-done', name: 'Done', query: "status = 'done'" },
      ],
    });
    const boardId: string = board.body.id;
    await sys.call('PUT', `/api/v1/boards/${boardId}`, alice, { activeSprintId: s1 });
    for (const title of ['open 1', 'open 2']) await sys.call('POST', `/api/v1/boards/${boardId}/tasks`, alice, { title, column_id: 'col-to-do' });
    const close = (rollover: string) => sys.call('POST', `/api/v1/tasks/${s1}/close-sprint`, alice, { rollover });
    const answers = await Promise.all([close(s2), close('backlog')]);
    expect(answers.filter((a) => a.status === 200), JSON.stringify(answers.map((x) => x.body))).toHaveLength(1);
    const winner = answers.find((a) => a.status === 200)!;
    const loser = answers.find((a) => a.status !== 200)!;
    expect(loser.status, JSON.stringify(loser.body)).toBeGreaterThanOrEqual(400);
    expect(loser.status).toBeLessThan(500);
    expect(winner.body).toMatchObject({ sprintId: s1, rolledOver: 2 });
    // the cards went where the one close that happened sent them, and nowhere else
    const inS2 = await sys.call('POST', '/api/v1/tasks/query', alice, { query: `app.sprint = '${s2}'`, pageSize: 50 });
    const inS1 = await sys.call('POST', '/api/v1/tasks/query', alice, { query: `app.sprint = '${s1}' AND status != 'done'`, pageSize: 50 });
    expect(inS2.body.data).toHaveLength(winner.body.target === s2 ? 2 : 0);
    expect(inS1.body.data).toHaveLength(0);
    expect((await sys.call('GET', `/api/v1/tasks/${s1}`, alice)).body.status).toBe('done');
  });

  it('concurrent membership changes of one group: every member added stays', async () => {
    await using sys = await concurrentSystem();
    const alice = await sys.user('alice');
    const others = [];
    for (const name of ['bob', 'carol', 'dave', 'erin']) others.push(await sys.user(name));
    const group = await sys.call('POST', '/api/v1/groups', alice, { name: 'crew' });
    const groupId: string = group.body.id;
    const answers = await Promise.all(others.map((u) => sys.call('POST', `/api/v1/groups/${groupId}/members`, alice, { user_id: u.id })));
    expect(statuses(answers), JSON.stringify(answers.map((a) => a.body))).toEqual([200, 200, 200, 200]);
    const read = await sys.call('GET', `/api/v1/groups/${groupId}`, alice);
    const ids = (read.body.members as Array<{ user_id: string }>).map((m) => m.user_id).sort();
    expect(ids).toEqual([alice.id, ...others.map((u) => u.id)].sort());
  });

  it('concurrent repeats of one Idempotency-Key create one task; every repeat is answered with it or told the first is still running', async () => {
    await using sys = await concurrentSystem();
    const alice = await sys.user('alice');
    const answers = await Promise.all(Array.from({ length: 5 }, () => sys.call('POST', '/api/v1/tasks', alice, { title: 'once' }, { 'idempotency-key': 'same-key' })));
    for (const a of answers) expect([201, 409], JSON.stringify(a.body)).toContain(a.status);
    const created = answers.filter((a) => a.status === 201);
    expect(created.length).toBeGreaterThanOrEqual(1);
    expect(new Set(created.map((a) => a.body.id)).size).toBe(1);
    const found = await sys.call('POST', '/api/v1/tasks/query', alice, { query: "title = 'once'", pageSize: 50 });
    expect(found.body.data).toHaveLength(1);
  });
});
