import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Collections, EmbeddedStore, type CommitStep, type Doc } from '@app/shared/store';
import { TransactionRulesStore } from '@app/shared/testing';
import { system, type System, type User } from './system.js';

/**
 * A commit is all or nothing in memory as on disk (docs/store.md "All or nothing"): a fault is
 * injected at every step of the embedded store's commit path (hash, sort and text indexes, history
 * collections, the journal write) in turn, for a create, a PATCH, a move, a batch and a
 * close-sprint through HTTP. Each failed attempt answers 5xx and leaves the stored collections,
 * the task list and the feed exactly as before; the attempt past the last step succeeds; and the
 * store reopened from its folder holds exactly what it held before the restart.
 */

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A file-backed store whose commit steps can fail on purpose: `arm(k)` fails the k-th step from now. */
function faultyStore() {
  const dir = mkdtempSync(join(tmpdir(), 'commit-faults-'));
  dirs.push(dir);
  const state = { armedAt: 0, steps: 0, hit: undefined as CommitStep | undefined };
  const faults = (step: CommitStep) => {
    if (state.armedAt === 0) return;
    if (++state.steps === state.armedAt) {
      state.hit = step;
      throw new Error(`injected fault at ${step}`);
    }
  };
  const open = async () => new TransactionRulesStore(await EmbeddedStore.open({ dir, faults }), { failFirstAttempt: false });
  return {
    open,
    arm(k: number) {
      Object.assign(state, { armedAt: k, steps: 0, hit: undefined });
    },
    disarm() {
      const seen = { steps: state.steps, hit: state.hit };
      state.armedAt = 0;
      return seen;
    },
  };
}

/** Everything a reader could see: every stored collection, alice's task list and her feed. */
async function snapshot(sys: System, as: User): Promise<unknown> {
  // (the feed read numbers what the outbox holds first: then the stored collections are read)
  const list = await sys.call('POST', '/api/v1/tasks/query', as, { query: 'ORDER BY title ASC', pageSize: 100 });
  const feed = await sys.call('GET', '/api/v1/events?limit=100', as);
  expect([list.status, feed.status]).toEqual([200, 200]);
  const stored: Record<string, Doc[]> = {};
  for (const name of Object.values(Collections)) stored[name] = await sys.store.collection(name).find({}, { sort: { _id: 1 } });
  return { stored, list: list.body, feed: feed.body };
}

type Op = (sys: System, alice: User, setup: Record<string, string>) => Promise<{ status: number; body: unknown }>;

const COLUMNS = [
  { id: 'todo', name: 'To do', query: "status = 'todo'" },
  { id: 'doing', name: 'Doing', query: "status = 'doing'" },
];

/** A board with a card in To do, and a sprint holding it with one unfinished member. */
async function setUp(sys: System, alice: User): Promise<Record<string, string>> {
  const ok = async (method: string, url: string, body: unknown) => {
    const res = await sys.call(method, url, alice, body);
    expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
    return res.body;
  };
  const board = await ok('POST', '/api/v1/boards', { name: 'B', board_type: 'private', columns: COLUMNS });
  const sprint = await ok('POST', '/api/v1/tasks', { title: 'Sprint 1', status: 'doing', metadata: { 'app.type': 'sprint' } });
  const card = await ok('POST', `/api/v1/boards/${board.id}/tasks`, { title: 'Card one', status: 'todo', metadata: { 'app.sprint': sprint.id } });
  const task = await ok('POST', '/api/v1/tasks', { title: 'Plain task', description: 'searched text' });
  // a kept text search and a sorted read, so their indexes are maintained by every write
  await ok('POST', '/api/v1/tasks/query', { query: "title ~ 'task' ORDER BY title ASC" });
  return { boardId: board.id, sprintId: sprint.id, cardId: card.id, taskId: task.id };
}

const OPS: Array<[string, Op]> = [
  ['create', (sys, a) => sys.call('POST', '/api/v1/tasks', a, { title: 'Fresh task', tags: ['x'] })],
  ['PATCH', (sys, a, s) => sys.call('PATCH', `/api/v1/tasks/${s.taskId}`, a, { title: 'Plain task, renamed', status: 'doing' })],
  ['move', (sys, a, s) => sys.call('POST', `/api/v1/boards/${s.boardId}/tasks/${s.cardId}/move`, a, { from_column_id: 'todo', to_column_id: 'doing' })],
  ['batch', (sys, a) => sys.call('POST', '/api/v1/tasks/batch', a, { tasks: [{ title: 'Batch one' }, { title: 'Batch two', status: 'doing' }], atomic: true })],
  ['close-sprint', (sys, a, s) => sys.call('POST', `/api/v1/tasks/${s.sprintId}/close-sprint`, a, { rollover: 'backlog' })],
];

describe('a fault at any step of a commit leaves nothing behind', () => {
  it.each(OPS)('%s: every failed attempt answers 5xx with nothing visible, the next one succeeds, a restart agrees', async (_name, op) => {
    const store = faultyStore();
    let sys = await system({ store: store.open });
    const alice = await sys.user('alice');
    const setup = await setUp(sys, alice);
    const steps = new Set<CommitStep>();
    let done = false;
    for (let k = 1; k < 200 && !done; k++) {
      const before = await snapshot(sys, alice);
      store.arm(k);
      const res = await op(sys, alice, setup);
      const { steps: reached, hit } = store.disarm();
      if (hit === undefined) {
        expect(reached).toBeLessThan(k);
        expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
        done = true;
        break;
      }
      steps.add(hit);
      expect([k, hit, res.status >= 500]).toEqual([k, hit, true]);
      expect(await snapshot(sys, alice)).toEqual(before);
    }
    expect(done).toBe(true);
    expect(steps.has('index') && steps.has('text') && steps.has('journal')).toBe(true);
    // what the client was told is what is on disk
    const told = await snapshot(sys, alice);
    await sys[Symbol.asyncDispose]();
    sys = await system({ store: store.open });
    const again = await sys.user('alice2'); // (a login of its own: the snapshot reads as alice)
    expect(again.id).toBeTruthy();
    const reopened = (await snapshot(sys, alice)) as { stored: Record<string, Doc[]> };
    const before = told as { stored: Record<string, Doc[]> };
    for (const name of Object.keys(before.stored)) {
      // alice2 registered and signed in (its sign-in is in the audit log)
      if (name === Collections.users || name === Collections.refreshTokens || name === Collections.audit) continue;
      expect([name, reopened.stored[name]]).toEqual([name, before.stored[name]]);
    }
    await sys[Symbol.asyncDispose]();
  });
});
