/**
 * MongoDB's transaction concurrency over any store (docs/store.md "Snapshot isolation"): for the
 * test legs and for `EMBEDDED_ISOLATION=snapshot`. A folder of its own so an entry point can load
 * it without the rest of the test helpers (which load vitest).
 */
export { SnapshotIsolationStore, type SnapshotCounts, type SnapshotIsolationOptions } from './snapshot-isolation.js';
