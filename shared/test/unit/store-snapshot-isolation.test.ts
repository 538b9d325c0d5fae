import { describe, expect, it } from 'vitest';
import { EmbeddedStore, type Session } from '@app/shared/store';
import { SnapshotIsolationStore, storeContract, TransactionRuleError } from '@app/shared/testing';
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

/** A promise and its resolver: lets two transactions interleave at chosen points. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  return { opened, open };
}

async function seeded() {
  const store = new SnapshotIsolationStore(EmbeddedStore.memory());
  await store.collection('tasks').insertMany([
    { _id: 't1', n: 1, col: 'a' }, { _id: 't2', n: 2, col: 'a' }, { _id: 't3', n: 3, col: 'b' },
  ]);
  return store;
}

const tasks = (store: SnapshotIsolationStore) => store.collection('tasks');

describe('SnapshotIsolationStore: MongoDB snapshot isolation over any store', () => {
  it('runs transactions concurrently: the second one starts and finishes while the first is still open', async () => {
    await using store = await seeded();
    const order: string[] = [];
    const g = gate();
    const first = store.withTransaction(async (session) => {
      order.push('first started');
      await g.opened;
      await tasks(store).updateOne({ _id: 't1' }, { $inc: { n: 1 } }, { session });
      order.push('first done');
    });
    await new Promise((r) => setImmediate(r));
    await store.withTransaction(async (session) => {
      order.push('second started');
      await tasks(store).updateOne({ _id: 't2' }, { $inc: { n: 1 } }, { session });
      order.push('second done');
    });
    g.open();
    await first;
    expect(order).toEqual(['first started', 'second started', 'second done', 'first done']);
  });

  it('reads the snapshot of its start: finds, counts and sorts do not see a commit made after it, but see its own writes', async () => {
    await using store = await seeded();
    const g = gate();
    const later = gate();
    const seen = store.withTransaction(async (session) => {
      const before = await tasks(store).countDocuments({ col: 'a' }, { session });
      later.open();
      await g.opened;
      const count = await tasks(store).countDocuments({ col: 'a' }, { session });
      const sorted = (await tasks(store).find({}, { session, sort: { n: -1 }, limit: 2 })).map((d) => d._id);
      const one = await tasks(store).findOne({ _id: 't3' }, { session });
      await tasks(store).insertOne({ _id: 'own', n: 100, col: 'a' }, { session });
      const withOwn = (await tasks(store).find({ col: 'a' }, { session, sort: { n: -1 } })).map((d) => d._id);
      return { before, count, sorted, one, withOwn };
    });
    await later.opened;
    // committed meanwhile: one more card in column a, t3 moved to a with the highest n, t1 deleted
    await store.withTransaction(async (session) => {
      await tasks(store).insertOne({ _id: 't4', n: 50, col: 'a' }, { session });
      await tasks(store).updateOne({ _id: 't3' }, { $set: { col: 'a', n: 99 } }, { session });
      await tasks(store).deleteOne({ _id: 't1' }, { session });
    });
    g.open();
    expect(await seen).toEqual({
      before: 2,
      count: 2,
      sorted: ['t3', 't2'],
      one: { _id: 't3', n: 3, col: 'b' },
      withOwn: ['own', 't2', 't1'],
    });
    // outside a transaction, the latest commit
    expect((await tasks(store).find({ col: 'a' }, { sort: { n: 1 } })).map((d) => d._id)).toEqual(['t2', 't4', 't3', 'own']);
  });

  it('first writer wins: a write to a document another open transaction wrote fails at once, labelled TransientTransactionError, and the rerun sees the winner', async () => {
    await using store = await seeded();
    const g = gate();
    const wrote = gate();
    const errors: unknown[] = [];
    let runs = 0;
    const winner = store.withTransaction(async (session) => {
      await tasks(store).updateOne({ _id: 't1' }, { $inc: { n: 10 } }, { session });
      wrote.open();
      await g.opened;
    });
    await wrote.opened;
    const loser = store.withTransaction(async (session) => {
      runs++;
      const t1 = await tasks(store).findOne({ _id: 't1' }, { session });
      try {
        await tasks(store).updateOne({ _id: 't1' }, { $inc: { n: 100 } }, { session });
      } catch (e) {
        errors.push(e);
        if (runs === 1) g.open();
        throw e;
      }
      return t1?.n;
    });
    await winner;
    // the rerun started after the winner committed: it read 11 and wrote on top of it
    expect(await loser).toBe(11);
    expect(isTransientTransactionError(errors[0])).toBe(true);
    expect(errors[0]).toMatchObject({ code: 112, codeName: 'WriteConflict' });
    expect(await tasks(store).findOne({ _id: 't1' })).toEqual({ _id: 't1', n: 111, col: 'a' });
    expect(store.counts.conflicts).toBeGreaterThanOrEqual(1);
    expect(store.counts.retries).toBeGreaterThanOrEqual(1);
  });

  it('a write to a document committed after the snapshot conflicts (no lost update)', async () => {
    await using store = await seeded();
    const g = gate();
    const read = gate();
    let runs = 0;
    const slow = store.withTransaction(async (session) => {
      runs++;
      const t1 = await tasks(store).findOne({ _id: 't1' }, { session });
      if (runs === 1) {
        read.open();
        await g.opened;
      }
      await tasks(store).updateOne({ _id: 't1' }, { $set: { n: (t1!.n as number) + 1 } }, { session });
    });
    await read.opened;
    await tasks(store).updateOne({ _id: 't1' }, { $set: { n: 10 } });
    g.open();
    await slow;
    expect(runs).toBe(2);
    expect((await tasks(store).findOne({ _id: 't1' }))?.n).toBe(11);
  });

  it('commits all or nothing: an error thrown after writes leaves nothing, and the writes were invisible outside until then', async () => {
    await using store = await seeded();
    const g = gate();
    const wrote = gate();
    const failing = store.withTransaction(async (session) => {
      await tasks(store).insertOne({ _id: 'x', n: 0 }, { session });
      await tasks(store).updateMany({ col: 'a' }, { $set: { col: 'z' } }, { session });
      wrote.open();
      await g.opened;
      throw new Error('changed my mind');
    });
    await wrote.opened;
    expect(await tasks(store).findOne({ _id: 'x' })).toBeNull();
    expect(await tasks(store).countDocuments({ col: 'z' })).toBe(0);
    g.open();
    expect((await thrown(failing)).message).toBe('changed my mind');
    expect(await tasks(store).findOne({ _id: 'x' })).toBeNull();
    expect(await tasks(store).countDocuments({ col: 'a' })).toBe(2);
    // and a commit applies every write at once
    await store.withTransaction(async (session) => {
      await tasks(store).insertOne({ _id: 'y', n: 0 }, { session });
      await tasks(store).deleteOne({ _id: 't3' }, { session });
    });
    expect((await tasks(store).find({}, { sort: { _id: 1 } })).map((d) => d._id)).toEqual(['t1', 't2', 'y']);
  });

  it('concurrent transactions that write different documents both commit, even when each decided from a read of the other (write skew)', async () => {
    await using store = await seeded();
    const both = gate();
    let ready = 0;
    let runs = 0;
    const move = (id: string) => store.withTransaction(async (session) => {
      runs++;
      const inB = await tasks(store).countDocuments({ col: 'b' }, { session });
      if (++ready === 2) both.open();
      await both.opened;
      if (inB < 2) await tasks(store).updateOne({ _id: id }, { $set: { col: 'b' } }, { session });
    });
    await Promise.all([move('t1'), move('t2')]);
    expect(runs).toBe(2);
    expect(await tasks(store).countDocuments({ col: 'b' })).toBe(3);
  });

  it('reads never conflict: a transaction reading documents another one is writing reads its snapshot and commits', async () => {
    await using store = await seeded();
    const g = gate();
    const wrote = gate();
    const writer = store.withTransaction(async (session) => {
      await tasks(store).updateOne({ _id: 't1' }, { $set: { n: 42 } }, { session });
      wrote.open();
      await g.opened;
    });
    await wrote.opened;
    let runs = 0;
    const reader = await store.withTransaction(async (session) => {
      runs++;
      const d = await tasks(store).findOne({ _id: 't1' }, { session });
      await tasks(store).insertOne({ _id: 'log', saw: d?.n }, { session });
      return d?.n;
    });
    g.open();
    await writer;
    expect({ reader, runs }).toEqual({ reader: 1, runs: 1 });
    expect((await tasks(store).findOne({ _id: 't1' }))?.n).toBe(42);
  });

  it('an insert of a key a concurrent transaction already took in a unique (sparse) index conflicts, and the rerun finds the winner', async () => {
    await using store = await seeded();
    await store.ensureIndexes([{ collection: 'users', keys: { sub: 1 }, unique: true, sparse: true }]);
    await store.collection('users').insertMany([{ _id: 'local1' }, { _id: 'local2' }]);
    const both = gate();
    let ready = 0;
    const signIn = (id: string) => store.withTransaction(async (session) => {
      const found = await store.collection('users').findOne({ sub: 's' }, { session });
      if (found) return found._id;
      if (++ready === 2) both.open();
      await both.opened;
      await store.collection('users').insertOne({ _id: id, sub: 's' }, { session });
      return id;
    });
    const [a, b] = await Promise.all([signIn('u1'), signIn('u2')]);
    expect(a).toBe(b);
    expect(await store.collection('users').countDocuments({ sub: 's' })).toBe(1);
  });

  it('a write outside transactions waits for the open transaction that holds its document', async () => {
    await using store = await seeded();
    const g = gate();
    const wrote = gate();
    const order: string[] = [];
    const txn = store.withTransaction(async (session) => {
      await tasks(store).updateOne({ _id: 't1' }, { $set: { n: 5 } }, { session });
      wrote.open();
      await g.opened;
      order.push('txn commits');
    });
    await wrote.opened;
    const plain = tasks(store).updateOne({ _id: 't1' }, { $inc: { n: 1 } }).then(() => order.push('plain write'));
    await new Promise((r) => setTimeout(r, 20));
    g.open();
    await Promise.all([txn, plain]);
    expect(order).toEqual(['txn commits', 'plain write']);
    expect((await tasks(store).findOne({ _id: 't1' }))?.n).toBe(6);
  });

  it('keeps the transaction rules: a second operation in flight in one transaction, or a call after the end, is refused', async () => {
    const store = await seeded();
    const parallel = await thrown(store.withTransaction(async (session) => {
      await Promise.all([tasks(store).findOne({ _id: 't1' }, { session }), tasks(store).findOne({ _id: 't2' }, { session })]);
    }));
    expect(parallel).toBeInstanceOf(TransactionRuleError);
    let kept: Session | undefined;
    await store.withTransaction(async (session) => {
      kept = session;
    });
    expect(await thrown(tasks(store).findOne({ _id: 't1' }, { session: kept! }))).toBeInstanceOf(TransactionRuleError);
    await expect(store.close()).rejects.toBeInstanceOf(TransactionRuleError);
  });

  it('gives up with CONFLICT at the deadline when a transaction keeps losing', async () => {
    await using store = new SnapshotIsolationStore(EmbeddedStore.memory(), { deadlineMs: 100 });
    await tasks(store).insertOne({ _id: 't1', n: 0 });
    const g = gate();
    const wrote = gate();
    const holder = store.withTransaction(async (session) => {
      await tasks(store).updateOne({ _id: 't1' }, { $inc: { n: 1 } }, { session });
      wrote.open();
      await g.opened;
    });
    await wrote.opened;
    const err = await thrown(store.withTransaction(async (session) => {
      await tasks(store).updateOne({ _id: 't1' }, { $inc: { n: 1 } }, { session });
    }));
    g.open();
    await holder;
    expect(err).toMatchObject({ code: 'CONFLICT' });
    expect((await tasks(store).findOne({ _id: 't1' }))?.n).toBe(1);
  });
});

// every operation of the port keeps MongoDB's meaning through the model, in and out of transactions
storeContract('SnapshotIsolationStore over EmbeddedStore (memory)', async () => new SnapshotIsolationStore(EmbeddedStore.memory()));
