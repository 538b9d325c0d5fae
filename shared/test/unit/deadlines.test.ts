import { describe, expect, it } from 'vitest';
import { BoardsOps, GroupsOps, SprintsOps, TasksOps, type AnyOp } from '@app/shared/contracts';
import { IDEMPOTENCY_LEASE_MS } from '@app/shared/domain';
import { AppError } from '@app/shared/errors';
import { EmbeddedStore, TRANSACTION_DEADLINE_MS } from '@app/shared/store';

/**
 * The three time limits of a write, in order (docs/concurrency.md "Deadlines"): the store gives a
 * transaction up before the bus gives up waiting for its answer, and both before an
 * Idempotency-Key claim may be taken over by a retry.
 */
describe('deadlines of a write', () => {
  const writeOps: AnyOp[] = [TasksOps, BoardsOps, GroupsOps, SprintsOps].flatMap((ops) => Object.values(ops) as AnyOp[]);

  it('transaction deadline < every write op bus timeout < Idempotency-Key lease', () => {
    for (const op of writeOps) {
      expect(op.timeoutMs, op.subject).toBeGreaterThan(TRANSACTION_DEADLINE_MS);
      expect(op.timeoutMs, op.subject).toBeLessThan(IDEMPOTENCY_LEASE_MS);
    }
  });

  it('the embedded store refuses a transaction that waited for the lock past the deadline (503, nothing written)', async () => {
    await using store = EmbeddedStore.memory();
    let release!: () => void;
    const holding = store.withTransaction(() => new Promise<void>((r) => (release = r)));
    const started = Date.now();
    const waiting = store.withTransaction(async (session) => {
      await store.collection('tasks').insertOne({ _id: 'late' }, { session });
    });
    const err = await waiting.then(() => undefined, (e: unknown) => e);
    const waited = Date.now() - started;
    release();
    await holding;
    expect(AppError.is(err) && err.code).toBe('STORE_UNAVAILABLE');
    expect(waited).toBeGreaterThanOrEqual(TRANSACTION_DEADLINE_MS);
    expect(waited).toBeLessThan(TRANSACTION_DEADLINE_MS + 2_000);
    expect(await store.collection('tasks').findOne({ _id: 'late' })).toBeNull();
  });
});
