import { inject } from 'vitest';
import { EmbeddedStore } from '../store/embedded/index.js';
import { MongoStore } from '../store/mongo/index.js';
import { createTestMongo } from './mongo.js';
import { TransactionRulesStore } from './transaction-rules.js';
import { SnapshotIsolationStore } from './isolation/index.js';

/**
 * Which store the service, app and integration suites run on (docs/store.md "Transactions under
 * test"): the embedded store, MongoDB, or the embedded store under MongoDB's concurrency
 * (`snapshot`: {@link SnapshotIsolationStore}).
 */
export type StoreLeg = 'embedded' | 'mongo' | 'snapshot';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Set to `mongo` by the vitest project of the MongoDB leg, `snapshot` by the snapshot-isolation leg's; absent on the embedded leg. */
    storeLeg: StoreLeg;
    /** The replica set the MongoDB leg's global setup started (testcontainers), when `MONGO_URL` is not set. */
    mongoUrl: string;
  }
}

/** The leg this test file runs on: `mongo` or `snapshot` in the vitest projects of those legs, else `embedded`. */
export function storeLeg(): StoreLeg {
  return (inject('storeLeg') as StoreLeg | undefined) ?? 'embedded';
}

/** Options of {@link testStore}. */
export interface TestStoreOptions {
  /**
   * Fail each transaction's first attempt with a simulated write conflict (see
   * {@link TransactionRulesStore}). Default: true on the embedded leg; false on the MongoDB and
   * snapshot legs, where concurrent transactions produce real conflicts (pass true there for a
   * test that needs a conflict on every leg; the store retries it).
   */
  failFirstAttempt?: boolean;
  /** Snapshot leg only: a round trip in ms added to every call and commit ({@link SnapshotIsolationStore}'s `latencyMs`). */
  latencyMs?: number;
  /** Embedded leg only: the store's transaction lock wait (`EmbeddedStore.memory`'s `lockWaitMs`). */
  lockWaitMs?: number;
}

/**
 * The store of one service, app or integration suite, on the leg the file runs on, always
 * wrapped in a {@link TransactionRulesStore} (MongoDB's transaction rules, and the record of
 * what each transaction wrote):
 *
 * - embedded leg: a fresh in-memory `EmbeddedStore`, each transaction's first attempt failing
 *   with a simulated write conflict (unless `failFirstAttempt: false`);
 * - snapshot leg: a fresh in-memory `EmbeddedStore` under {@link SnapshotIsolationStore}
 *   (concurrent transactions, snapshot reads, first-writer-wins conflicts, as on MongoDB);
 * - MongoDB leg: a `MongoStore` on a fresh database (unique name) of the replica set at
 *   `MONGO_URL` or the one the leg's global setup started; `close()` drops the database.
 *
 * Close it (or `await using`) when the suite ends. Rejects with `STORE_UNAVAILABLE` when the
 * MongoDB leg cannot connect.
 */
export async function testStore(opts: TestStoreOptions = {}): Promise<TransactionRulesStore> {
  if (storeLeg() === 'mongo') {
    const url = process.env.MONGO_URL || inject('mongoUrl');
    const mongo = await createTestMongo({ url });
    const store = await MongoStore.connect({ url: mongo.url, db: mongo.db });
    return new TransactionRulesStore(store, { failFirstAttempt: opts.failFirstAttempt ?? false, onClose: async () => mongo[Symbol.asyncDispose]() });
  }
  const inner = EmbeddedStore.memory(opts.lockWaitMs === undefined ? {} : { lockWaitMs: opts.lockWaitMs });
  if (storeLeg() === 'snapshot') {
    return new TransactionRulesStore(new SnapshotIsolationStore(inner, { latencyMs: opts.latencyMs ?? 0 }), { failFirstAttempt: opts.failFirstAttempt ?? false });
  }
  return new TransactionRulesStore(inner, { failFirstAttempt: opts.failFirstAttempt ?? true });
}
