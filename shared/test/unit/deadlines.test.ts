import { describe, expect, it } from 'vitest';
import { BoardsOps, GroupsOps, SprintsOps, TasksOps, type AnyOp } from '@app/shared/contracts';
import { IDEMPOTENCY_LEASE_MS } from '@app/shared/domain';
import { TRANSACTION_DEADLINE_MS } from '@app/shared/store';

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

  // each store giving a transaction up at the deadline: the store contract suite, both legs
});
