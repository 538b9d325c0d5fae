import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NatsBus } from '@app/shared/bus';
import { SprintsOps } from '@app/shared/contracts';
import { silentLogger } from '@app/shared/log';
import { Collections, EmbeddedStore } from '@app/shared/store';
import { FaultyStore, startNatsServer, uniquePrefix, type NatsServer } from '@app/shared/testing';
import { aBoard, aGroup, aMember, aSprint, reads, seed, serveSprints, snapshot, users } from '../fixtures.js';

let nats: NatsServer;
let dir: string;
const log = silentLogger();

beforeAll(async () => {
  nats = await startNatsServer();
  dir = await mkdtemp(join(tmpdir(), 'sprints-close-'));
});
afterAll(async () => {
  await nats?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** One start of the sprints service: its own NATS connection and the store it was given. */
async function startService(store: EmbeddedStore | FaultyStore, prefix: string) {
  const bus = await NatsBus.connect({ servers: nats.url, prefix, name: 'sprints', log });
  const svc = await serveSprints(store, bus);
  return {
    stop: async () => {
      await svc.served.close();
      await bus.close();
      await store.close();
    },
  };
}

describe('close-sprint over NATS with a file-backed embedded store', () => {
  it('a close that fails before commit leaves nothing on disk; after a restart the retry succeeds', async () => {
    const prefix = uniquePrefix();
    await using client = await NatsBus.connect({ servers: nats.url, prefix, name: 'gateway', log });
    const u = users();
    const group = aGroup(u.carol, u.alice);
    const sprint = aSprint({ owner: u.alice, title: 'Sprint 3' });
    const next = aSprint({ owner: u.alice });
    const done = aMember(sprint._id, { owner: u.alice, status: 'done', points: 2.5 });
    const open = aMember(sprint._id, { owner: u.alice, status: 'doing' });
    const own = aBoard({ owner: u.alice, activeSprintId: sprint._id });
    const readOnly = aBoard({ owner: u.carol, activeSprintId: sprint._id, group: { id: group._id, permission: 'r' } });
    const seeded = await EmbeddedStore.open({ dir });
    await seed(seeded, { tasks: [sprint, next, done, open], boards: [own, readOnly], groups: [group] });
    const before = await snapshot(seeded);
    const close = () => client.request(SprintsOps.close, { sprintId: sprint._id, rollover: next._id }, { userId: u.alice });

    // First run: the store fails on the last write of the transaction (after the rollover write).
    const faulty = new FaultyStore(seeded).failOn((c) => c.inTransaction && c.collection === 'boards' && c.op === 'updateMany');
    const first = await startService(faulty, prefix);
    await expect(close()).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE', status: 503 });
    expect(faulty.calls.some((c) => c.inTransaction && c.collection === 'tasks' && c.op === 'updateMany')).toBe(true);
    await first.stop();

    // Restart: a new store instance on the same folder sees nothing of the failed close.
    const reopened = await EmbeddedStore.open({ dir });
    expect(await snapshot(reopened)).toEqual(before);
    const second = await startService(reopened, prefix);
    try {
      expect(await close()).toEqual({
        sprintId: sprint._id, target: next._id, completed: 1, rolledOver: 1,
        rotatedBoardIds: [own._id], skippedBoardIds: [readOnly._id], skippedTaskIds: [], velocity: 2.5, startedSprintId: next._id,
      });
      // A repeat over the bus replays the outcome.
      expect(await close()).toMatchObject({ rolledOver: 1, velocity: 2.5 });
      // The report is read from the close snapshot the transaction wrote.
      expect(await client.request(SprintsOps.report, { sprintId: sprint._id }, { userId: u.alice })).toMatchObject({
        live: false, start: { by_close: true }, completed: [{ id: done._id, points: 2.5 }], rolled_over: [{ id: open._id, target: next._id }], velocity: 2.5,
      });
    } finally {
      await second.stop();
    }

    // The outcome is durable: read it back from a third store instance.
    await using after = await EmbeddedStore.open({ dir });
    const r = reads(after);
    expect((await r.task(sprint._id))?.status).toBe('done');
    expect(await r.membersOf(next._id)).toEqual([open._id]);
    expect(await r.membersOf(sprint._id)).toEqual([done._id]);
    expect(await r.notesOf(sprint._id)).toHaveLength(1);
    expect((await r.board(own._id))?.activeSprintId).toBe(next._id);
    expect((await r.board(readOnly._id))?.activeSprintId).toBe(sprint._id);
    expect(await after.collection(Collections.sprintSnapshots).countDocuments({ sprint_id: sprint._id })).toBe(2);
  });
});
