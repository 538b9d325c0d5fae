import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MemoryBus, type CallMeta } from '@app/shared/bus';
import { TasksOps } from '@app/shared/contracts';
import { fixedClock, type IdempotencyDoc } from '@app/shared/domain';
import { silentLogger } from '@app/shared/log';
import { Collections, EmbeddedStore, type DocumentStore } from '@app/shared/store';
import { FaultyStore, testStore } from '@app/shared/testing';
import { tasksService } from '../../src/index.js';
import { ALICE, T0 } from './fixture.js';
import { startupIndexes } from '@app/shared/runtime';

/** Idempotency-Key records live in the store: across a restart, after a 5xx, and under the TTL sweep. */

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const meta = (key: string): CallMeta => ({ userId: ALICE, idempotencyKey: key, idempotencyScope: 'POST /api/v1/tasks' });

/** The tasks service over `store` on a fresh MemoryBus (one "process"). */
async function serve(store: DocumentStore, inner: DocumentStore = store) {
  const bus = new MemoryBus();
  const log = silentLogger();
  await inner.ensureIndexes(startupIndexes(tasksService));
  await bus.serve(tasksService.bindings({ store, clock: fixedClock(T0), log }), { queue: 'tasks', log });
  return bus;
}

describe('Idempotency-Key records in the store', () => {
  it('replays across a restart of the embedded store (the record is on disk)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'idem-'));
    dirs.push(dir);
    let store = await EmbeddedStore.open({ dir });
    let bus = await serve(store);
    const first = await bus.requestReply(TasksOps.create, { title: 'durable' }, meta('restart-1'));
    expect(first.ok).toBe(true);
    await bus.close();
    await store.close();

    store = await EmbeddedStore.open({ dir });
    bus = await serve(store);
    const again = await bus.requestReply(TasksOps.create, { title: 'durable' }, meta('restart-1'));
    expect(again).toMatchObject({ ok: true, meta: { replayed: true, version: 1 } });
    expect(again.ok && first.ok && again.text === first.text).toBe(true);
    expect(await store.collection(Collections.tasks).countDocuments({})).toBe(1);
    await bus.close();
    await store.close();
  });

  it('a 5xx answer is not stored: the retry with the same key runs again', async () => {
    const inner = await testStore();
    const store = new FaultyStore(inner).failOn((c) => c.collection === Collections.tasks && c.op === 'insertOne');
    const bus = await serve(store, inner);
    const failed = await bus.requestReply(TasksOps.create, { title: 'retry me' }, meta('five'));
    expect(failed).toMatchObject({ ok: false, error: { code: 'STORE_UNAVAILABLE' } });
    expect(await inner.collection(Collections.idempotency).countDocuments({})).toBe(0);
    const retried = await bus.requestReply(TasksOps.create, { title: 'retry me' }, meta('five'));
    expect(retried).toMatchObject({ ok: true });
    expect(retried.meta.replayed).toBeUndefined();
    expect(await inner.collection(Collections.tasks).countDocuments({})).toBe(1);
    await bus.close();
    await inner.close();
  });

  it('stores the finished answer with a 24 h expiry; the embedded expiry sweep removes it after that', async () => {
    const store = EmbeddedStore.memory();
    const bus = await serve(store);
    await bus.requestReply(TasksOps.create, { title: 'swept' }, meta('sweep'));
    const records = store.collection<IdempotencyDoc>(Collections.idempotency);
    const [rec] = await records.find({});
    expect(rec).toMatchObject({ user_id: ALICE, scope: 'POST /api/v1/tasks', state: 'done', expires_at: '2026-11-23T10:00:00.000Z' });
    expect(rec).not.toHaveProperty('key'); // the key itself is only hashed into the _id
    expect(await store.sweepExpired(new Date('2026-11-23T09:59:59.000Z'))).toBe(0);
    expect(await store.sweepExpired(new Date('2026-11-23T10:00:01.000Z'))).toBe(1);
    expect(await records.countDocuments({})).toBe(0);
    await bus.close();
    await store.close();
  });
});
