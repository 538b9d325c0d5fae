import { describe, expect, it } from 'vitest';
import { EmbeddedStore } from '@app/shared/store';
import { commonWrites, TransactionRuleError, TransactionRulesStore, writtenDocuments } from '@app/shared/testing';
import { isTransientTransactionError } from '../../src/store/mongo/errors.js';

/** What `p` rejects with (fails the test when it resolves). */
async function thrown(p: Promise<unknown>): Promise<Error> {
  try {
    await p;
  } catch (e) {
    return e as Error;
  }
  throw new Error('expected a rejection');
}

async function seeded(opts: { failFirstAttempt?: boolean } = {}) {
  const store = new TransactionRulesStore(EmbeddedStore.memory(), opts);
  await store.collection('tasks').insertMany([{ _id: 't1', n: 1 }, { _id: 't2', n: 2 }, { _id: 't3', n: 3 }]);
  return store;
}

describe('TransactionRulesStore: MongoDB transaction rules around any store', () => {
  it('fails the first write of the first attempt with a transient write conflict, then commits the rerun once', async () => {
    await using store = await seeded();
    const seen: unknown[] = [];
    const result = await store.withTransaction(async (session) => {
      const t1 = await store.collection('tasks').findOne({ _id: 't1' }, { session });
      try {
        await store.collection('tasks').updateOne({ _id: 't1' }, { $inc: { n: 10 } }, { session });
      } catch (e) {
        seen.push(e);
        throw e;
      }
      return t1?.n;
    });
    expect(result).toBe(1);
    expect(seen).toHaveLength(1);
    expect(isTransientTransactionError(seen[0])).toBe(true);
    expect(seen[0]).toMatchObject({ code: 112, codeName: 'WriteConflict' });
    expect(await store.collection('tasks').findOne({ _id: 't1' })).toEqual({ _id: 't1', n: 11 });
    expect(store.counts).toEqual({ attempts: 2, injected: 1, refused: 0 });
  });

  it('does not retry when the code turns the conflict into another error (the caller sees that error)', async () => {
    await using store = await seeded();
    let runs = 0;
    const err = await thrown(
      store.withTransaction(async (session) => {
        runs++;
        try {
          await store.collection('tasks').insertOne({ _id: 'new' }, { session });
        } catch (e) {
          throw new Error(`wrapped: ${(e as Error).message}`);
        }
      }),
    );
    expect(runs).toBe(1);
    expect(err.message).toMatch(/^wrapped: Simulated write conflict/);
    expect(await store.collection('tasks').findOne({ _id: 'new' })).toBeNull();
  });

  it('aborts the attempt on the conflict: a caller that swallows it fails on its next call and at commit, and is rerun', async () => {
    await using store = await seeded();
    const errors: unknown[] = [];
    let runs = 0;
    await store.withTransaction(async (session) => {
      runs++;
      await store.collection('tasks').insertOne({ _id: `x${runs}` }, { session }).catch((e: unknown) => errors.push(e));
      await store.collection('tasks').findOne({ _id: 't1' }, { session }).catch((e: unknown) => errors.push(e));
    });
    expect(runs).toBe(2);
    expect(errors.map((e) => (e as { codeName: string }).codeName)).toEqual(['WriteConflict', 'NoSuchTransaction']);
    expect((await store.collection('tasks').find({ _id: { $in: ['x1', 'x2'] } })).map((d) => d._id)).toEqual(['x2']);
  });

  it('fails a read-only first attempt at its commit', async () => {
    await using store = await seeded();
    let runs = 0;
    const n = await store.withTransaction(async (session) => {
      runs++;
      return store.collection('tasks').countDocuments({}, { session });
    });
    expect([runs, n]).toEqual([2, 3]);
  });

  it('refuses a second operation started while one is in flight in the same transaction, and close() reports it', async () => {
    const store = await seeded({ failFirstAttempt: false });
    const err = await thrown(
      store.withTransaction((session) =>
        Promise.all([store.collection('tasks').findOne({ _id: 't1' }, { session }), store.collection('boards').findOne({ _id: 'b1' }, { session })]),
      ),
    );
    expect(err).toBeInstanceOf(TransactionRuleError);
    expect(err.message).toMatch(/boards\.findOne started while tasks\.findOne is still in flight/);
    expect(store.violations).toHaveLength(1);
    await expect(store.close()).rejects.toBeInstanceOf(TransactionRuleError);
  });

  it('refuses a concurrent branch whose operation starts after the first one finished on the store but before it settled for its caller', async () => {
    // on MongoDB each call waits for the server's reply, so the second branch overlaps it; the
    // in-memory store answers within a few microtasks, which a branch with some awaits outlasts
    const store = await seeded({ failFirstAttempt: false });
    const later = async (session: Parameters<Parameters<typeof store.withTransaction>[0]>[0]) => {
      for (let i = 0; i < 50; i++) await Promise.resolve();
      return store.collection('boards').findOne({ _id: 'b1' }, { session });
    };
    const err = await thrown(
      store.withTransaction((session) => Promise.all([store.collection('tasks').findOne({ _id: 't1' }, { session }), later(session)])),
    );
    expect(err).toBeInstanceOf(TransactionRuleError);
    expect(err.message).toMatch(/boards\.findOne started while tasks\.findOne is still in flight/);
    await expect(store.close()).rejects.toBeInstanceOf(TransactionRuleError);
  });

  it('a write the server refuses (a duplicate key) aborts the transaction: code that records the error and goes on fails', async () => {
    await using store = await seeded({ failFirstAttempt: false });
    const tasks = store.collection('tasks');
    let runs = 0;
    const err = await thrown(
      store.withTransaction(async (session) => {
        runs++;
        try {
          await tasks.insertOne({ _id: 't1', n: 10 }, { session });
        } catch (e) {
          expect(e).toMatchObject({ code: 'CONFLICT' });
        }
        await tasks.updateOne({ _id: 't2' }, { $set: { n: 20 } }, { session });
      }),
    );
    expect(err).toMatchObject({ codeName: 'NoSuchTransaction' });
    expect(store.counts.refused).toBe(runs);
    expect(await tasks.findOne({ _id: 't2' })).toMatchObject({ n: 2 });
  });

  it('a write refused before it is sent (its own field names) leaves the transaction going, as the MongoDB store checks them itself', async () => {
    await using store = await seeded({ failFirstAttempt: false });
    const tasks = store.collection('tasks');
    await store.withTransaction(async (session) => {
      await expect(tasks.insertOne({ _id: 't9', 'a\u0000b': 1 }, { session })).rejects.toMatchObject({ code: 'VALIDATION_FAILED' });
      await tasks.updateOne({ _id: 't2' }, { $set: { n: 20 } }, { session });
    });
    expect(await tasks.findOne({ _id: 't2' })).toMatchObject({ n: 20 });
    expect(store.counts.refused).toBe(0);
  });

  it('lets calls outside a transaction run in parallel, and one call after another inside one', async () => {
    await using store = await seeded({ failFirstAttempt: false });
    const tasks = store.collection('tasks');
    await Promise.all([tasks.findOne({ _id: 't1' }), tasks.updateOne({ _id: 't2' }, { $set: { n: 20 } })]);
    await store.withTransaction(async (session) => {
      await tasks.findOne({ _id: 't1' }, { session });
      await tasks.updateOne({ _id: 't1' }, { $set: { n: 10 } }, { session });
    });
    expect(store.violations).toEqual([]);
  });

  it('refuses an operation on a transaction that has ended', async () => {
    const store = await seeded({ failFirstAttempt: false });
    let leaked: Parameters<Parameters<typeof store.withTransaction>[0]>[0] | undefined;
    await store.withTransaction(async (session) => {
      leaked = session;
    });
    const err = await thrown(store.collection('tasks').findOne({ _id: 't1' }, { session: leaked! }));
    expect(err).toBeInstanceOf(TransactionRuleError);
    expect(err.message).toMatch(/transaction that has already ended/);
    await expect(store.close()).rejects.toBeInstanceOf(TransactionRuleError);
  });

  it('records the documents each committed transaction wrote: inserts, matched updates and deletes, upserts, bulk writes', async () => {
    await using store = await seeded();
    const tasks = store.collection('tasks');
    const during = await store.transactionsDuring(() =>
      store.withTransaction(async (session) => {
        await tasks.insertOne({ _id: 'a' }, { session });
        await tasks.updateOne({ n: 1 }, { $set: { seen: true } }, { session });
        await tasks.updateOne({ _id: 'none' }, { $set: { n: 0 } }, { session }); // matches nothing: writes nothing
        await tasks.updateOne({ _id: 'up' }, { $set: { n: 9 } }, { session, upsert: true });
        await tasks.updateMany({ n: { $gte: 2 } }, { $inc: { n: 1 } }, { session });
        await store.collection('boards').bulkWrite([{ insertOne: { document: { _id: 'b1' } } }, { updateOne: { filter: { _id: 'b2' }, update: { $set: { x: 1 } }, upsert: true } }], { session });
        await tasks.deleteOne({ _id: 'a' }, { session });
      }),
    );
    expect(during).toHaveLength(1);
    expect(during[0]!.writes).toEqual([
      { collection: 'tasks', id: 'a' },
      { collection: 'tasks', id: 't1' },
      { collection: 'tasks', id: 'up' },
      { collection: 'tasks', id: 't2' },
      { collection: 'tasks', id: 't3' },
      { collection: 'boards', id: 'b1' },
      { collection: 'boards', id: 'b2' },
    ]);
    expect(store.transactions).toEqual(during);
    // the first attempt's write never committed, and writes outside a transaction are no transaction's
    await tasks.insertOne({ _id: 'outside' });
    expect(store.transactions).toHaveLength(1);
    store.resetTransactions();
    expect(store.transactions).toEqual([]);
  });

  it('commonWrites names the documents two sets of transactions both wrote', async () => {
    await using store = await seeded();
    const tasks = store.collection('tasks');
    const write = (id: string) => store.transactionsDuring(() =>
      store.withTransaction(async (session) => {
        await tasks.updateOne({ _id: id }, { $inc: { n: 1 } }, { session });
        await store.collection('counters').updateOne({ _id: 'shared' }, { $inc: { n: 1 } }, { session, upsert: true });
      }),
    );
    const a = await write('t1');
    const b = await write('t2');
    expect(commonWrites(a, b)).toEqual([{ collection: 'counters', id: 'shared' }]);
    expect(writtenDocuments([...a, ...b])).toHaveLength(3);
  });

  it('over a store that reruns labelled errors itself (as the MongoDB driver does) injects only into the first run', async () => {
    const embedded = EmbeddedStore.memory();
    let innerRuns = 0;
    const driverLike = Object.assign(Object.create(embedded) as EmbeddedStore, {
      async withTransaction<R>(fn: (s: never) => Promise<R>): Promise<R> {
        for (;;) {
          innerRuns++;
          try {
            return await embedded.withTransaction(fn as never);
          } catch (e) {
            if (!isTransientTransactionError(e)) throw e;
          }
        }
      },
    });
    await using store = new TransactionRulesStore(driverLike);
    await store.withTransaction(async (session) => {
      await store.collection('tasks').insertOne({ _id: 'once' }, { session });
    });
    expect(innerRuns).toBe(2);
    expect(store.counts).toEqual({ attempts: 2, injected: 1, refused: 0 });
    expect(store.transactions).toEqual([{ writes: [{ collection: 'tasks', id: 'once' }] }]);
  });

  it('with failFirstAttempt off runs each transaction once', async () => {
    await using store = await seeded({ failFirstAttempt: false });
    let runs = 0;
    await store.withTransaction(async (session) => {
      runs++;
      await store.collection('tasks').insertOne({ _id: 'once' }, { session });
    });
    expect(runs).toBe(1);
    expect(store.counts).toEqual({ attempts: 1, injected: 0, refused: 0 });
  });
});
