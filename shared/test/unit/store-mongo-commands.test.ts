import type { MongoClient } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { lastSeq, readOutbox } from '@app/shared/events';
import { Collections, COMMIT_BUDGET_MS, MongoStore, TRANSACTION_DEADLINE_MS } from '@app/shared/store';

/**
 * What the MongoDB store sends to the driver, checked without a server (a stand-in client that
 * records the calls): the value types of every collection's TTL field (docs/store.md "One
 * definition per collection") and the options and time limits of a transaction's commit
 * (docs/concurrency.md "Deadlines").
 */

interface Recorded {
  reads: Array<{ collection: string; options: Record<string, unknown> }>;
  inserted: Array<{ collection: string; doc: Record<string, unknown> }>;
  updates: Array<{ collection: string; update: Record<string, unknown> }>;
  transactions: Array<Record<string, unknown>>;
  commits: number;
}

/** A client whose sessions commit with `commit()` and whose collections record what they are sent. */
function standIn(commit: () => Promise<void> = async () => undefined): { client: MongoClient; seen: Recorded } {
  const seen: Recorded = { reads: [], inserted: [], updates: [], transactions: [], commits: 0 };
  const collection = (name: string) => ({
    collectionName: name,
    find: (_filter: unknown, options: Record<string, unknown>) => {
      seen.reads.push({ collection: name, options });
      return { toArray: async () => [] };
    },
    insertOne: async (doc: Record<string, unknown>) => {
      seen.inserted.push({ collection: name, doc });
      return { acknowledged: true, insertedId: doc._id };
    },
    updateOne: async (_filter: unknown, update: Record<string, unknown>) => {
      seen.updates.push({ collection: name, update });
      return { matchedCount: 1, modifiedCount: 1, upsertedId: null };
    },
  });
  let active = false;
  const session = {
    startTransaction: (opts: Record<string, unknown>) => {
      seen.transactions.push(opts);
      active = true;
    },
    inTransaction: () => active,
    commitTransaction: async () => {
      seen.commits++;
      await commit();
      active = false;
    },
    abortTransaction: async () => {
      active = false;
    },
    endSession: async () => undefined,
  };
  const client = { db: () => ({ collection }), startSession: () => session, close: async () => undefined };
  return { client: client as unknown as MongoClient, seen };
}

describe('MongoStore: value types of every collection, whoever writes it', () => {
  it('sends the Idempotency-Key records’ expires_at as a date before any service ensured its TTL index', async () => {
    const { client, seen } = standIn();
    await using store = MongoStore.over(client, { db: 'fresh' });
    const records = store.collection(Collections.idempotency);
    await records.insertOne({ _id: 'k', state: 'running', expires_at: '2026-03-02T09:01:00.000Z' });
    await records.updateOne({ _id: 'k' }, { $set: { state: 'done', expires_at: '2026-03-03T09:00:00.000Z' } });
    expect(seen.inserted[0]!.doc.expires_at).toEqual(new Date('2026-03-02T09:01:00.000Z'));
    expect((seen.updates[0]!.update.$set as Record<string, unknown>).expires_at).toEqual(new Date('2026-03-03T09:00:00.000Z'));
    // a collection without a TTL field keeps its text as text
    await store.collection(Collections.tasks).insertOne({ _id: 't', expires_at: '2026-03-02T09:01:00.000Z' });
    expect(seen.inserted[1]!.doc.expires_at).toBe('2026-03-02T09:01:00.000Z');
  });
});

describe('MongoStore: a transaction keeps a fixed part of its deadline for the commit', () => {
  it('gives the commit a maxCommitTimeMS of the commit budget, however long the work took', async () => {
    const { client, seen } = standIn();
    await using store = MongoStore.over(client, { db: 'fresh' });
    expect(await store.withTransaction(async () => 'done')).toBe('done');
    expect(seen.transactions).toEqual([{ readConcern: { level: 'snapshot' }, writeConcern: { w: 'majority' }, maxCommitTimeMS: COMMIT_BUDGET_MS }]);
    expect(COMMIT_BUDGET_MS).toBeLessThan(TRANSACTION_DEADLINE_MS);
  });

  it('answers 503 at the deadline when the commit waits for a server that does not answer, instead of waiting with it', async () => {
    // the driver's commit waits up to its server selection timeout (5 s), past the bus timeout of a write
    const { client, seen } = standIn(() => new Promise(() => undefined));
    await using store = MongoStore.over(client, { db: 'fresh', transactionDeadlineMs: 300 });
    await expect(store.withTransaction(async () => 'done')).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE', details: { deadline_ms: 300 } });
    expect(seen.commits).toBe(1);
    expect(seen.transactions[0]!.maxCommitTimeMS).toBe(75);
  });
});

describe('MongoStore: what is published is read with majority', () => {
  it('the feed, the stream, JetStream and webhook reads of events ask for majority; a read in a transaction keeps the transaction’s', async () => {
    const { client, seen } = standIn();
    await using store = MongoStore.over(client, { db: 'fresh' });
    await readOutbox(store, 0, 10);
    await lastSeq(store);
    const events = seen.reads.filter((r) => r.collection === Collections.events);
    expect(events).toHaveLength(2);
    for (const r of events) expect(r.options.readConcern).toEqual({ level: 'majority' });

    await store.withTransaction(async (session) => store.collection(Collections.events).find({}, { session, readConcern: 'majority' }));
    expect(seen.reads.at(-1)!.options.readConcern).toBeUndefined();
    await store.collection(Collections.tasks).find({});
    expect(seen.reads.at(-1)!.options.readConcern).toBeUndefined();
  });
});
