import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { EmbeddedStore, type JournalSync } from '@app/shared/store';
import { eventually } from '@app/shared/testing';
import { LAZY_JOURNAL_MS } from '../../src/store/embedded/embedded-store.js';
import { lastPerRow } from '../../src/store/embedded/journal.js';
import type { Change } from '../../src/store/embedded/txn.js';

/**
 * The embedded store's durability modes (docs/store.md "One process, durable
 * acknowledgements"): `full` (default) acknowledges a write once its WAL is synced, concurrent
 * writes sharing one sync (group commit); `normal` acknowledges at once. Both keep every
 * acknowledged write across a reopen; transactions and failing bulk writes too.
 */

const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'store-durability-'));
  dirs.push(dir);
  return dir;
};
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe.each<[JournalSync | undefined]>([[undefined], ['full'], ['normal']])('EmbeddedStore durability %s', (sync) => {
  it('keeps every acknowledged write of concurrent calls, transactions and a half-failed bulk write across a reopen', async () => {
    const dir = tempDir();
    const opts = { dir, ...(sync ? { sync } : {}) };
    const first = await EmbeddedStore.open(opts);
    const c = first.collection('c');
    await Promise.all(Array.from({ length: 50 }, (_, i) => c.insertOne({ _id: `a${i}`, n: i })));
    await Promise.all(Array.from({ length: 5 }, (_, i) => first.withTransaction(async (s) => {
      await c.updateOne({ _id: `a${i}` }, { $set: { tx: true } }, { session: s });
      await c.insertOne({ _id: `t${i}` }, { session: s });
    })));
    // a bulk insert failing half-way: what it wrote before the duplicate stays, and is durable when it answers
    await expect(c.insertMany([{ _id: 'b1' }, { _id: 'a0' }, { _id: 'b2' }])).rejects.toMatchObject({ code: 'CONFLICT' });
    const before = await c.find({}, { sort: { _id: 1 } });
    await first.close();

    await using again = await EmbeddedStore.open(opts);
    expect(await again.collection('c').find({}, { sort: { _id: 1 } })).toEqual(before);
    expect(await again.collection('c').countDocuments({ tx: true })).toBe(5);
  });

  it('keeps a write made without waiting for its sync (awaitDurable: false), or the later version a transaction wrote', async () => {
    const dir = tempDir();
    const opts = { dir, ...(sync ? { sync } : {}) };
    const first = await EmbeddedStore.open(opts);
    const c = first.collection('c');
    await c.insertOne({ _id: 'claim', state: 'running' }, { awaitDurable: false });
    expect(await c.findOne({ _id: 'claim' })).toEqual({ _id: 'claim', state: 'running' }); // visible at once
    await c.updateOne({ _id: 'claim' }, { $set: { at: 1 } }, { awaitDurable: false });
    await first.withTransaction(async (s) => {
      await c.insertOne({ _id: 'task' }, { session: s });
    });
    // a deferred write superseded by a transaction before it was journaled: the newer version stays
    await c.insertOne({ _id: 'claim2', state: 'running' }, { awaitDurable: false });
    await first.withTransaction(async (s) => {
      await c.updateOne({ _id: 'claim2', state: 'running' }, { $set: { state: 'done' } }, { session: s });
    });
    await first.close();
    await using again = await EmbeddedStore.open(opts);
    expect(await again.collection('c').find({}, { sort: { _id: 1 } })).toEqual([
      { _id: 'claim', state: 'running', at: 1 }, { _id: 'claim2', state: 'done' }, { _id: 'task' },
    ]);
  });

  it('journals a write made without waiting (awaitDurable: false) with the next durable one, or alone after LAZY_JOURNAL_MS', async () => {
    const dir = tempDir();
    const store = await EmbeddedStore.open({ dir, ...(sync ? { sync } : {}) });
    const journal = (store as unknown as { journal: { write(changes: Change[]): void } }).journal;
    const groups: string[][] = [];
    const write = journal.write.bind(journal);
    journal.write = (changes) => {
      groups.push(lastPerRow(changes).map((c) => c.id));
      write(changes);
    };
    const c = store.collection('c');
    await c.insertOne({ _id: 'claim', state: 'running' }, { awaitDurable: false });
    await new Promise((r) => setTimeout(r, 10));
    expect(groups).toEqual([]); // it started no journal write of its own
    await c.updateOne({ _id: 'claim' }, { $set: { state: 'done' } }); // durable: both go, as one row
    expect(groups).toEqual([['claim']]);
    await c.insertOne({ _id: 'alone' }, { awaitDurable: false });
    // with no durable write to join, it is journaled on its own after LAZY_JOURNAL_MS
    await eventually('the lone write journaled', () => groups.length === 2, Boolean, { timeoutMs: LAZY_JOURNAL_MS + 5_000 });
    expect(groups).toEqual([['claim'], ['alone']]);
    await c.insertOne({ _id: 'at-close' }, { awaitDurable: false });
    await store.close();
    expect(groups).toEqual([['claim'], ['alone'], ['at-close']]);
    await using again = await EmbeddedStore.open({ dir });
    expect(await again.collection('c').find({}, { sort: { _id: 1 } })).toEqual([{ _id: 'alone' }, { _id: 'at-close' }, { _id: 'claim', state: 'done' }]);
  });

  it('answers writes still waiting for their sync when the store closes', async () => {
    const dir = tempDir();
    const store = await EmbeddedStore.open({ dir, ...(sync ? { sync } : {}) });
    const writes = Array.from({ length: 10 }, (_, i) => store.collection('c').insertOne({ _id: `w${i}` }));
    await store.close();
    await Promise.all(writes);
    await using again = await EmbeddedStore.open({ dir });
    expect(await again.collection('c').countDocuments({})).toBe(10);
  });
  it('journals grouped commits (status changes, text changes, inserts) in commit order, as one history', async () => {
    const dir = tempDir();
    const opts = { dir, ...(sync ? { sync } : {}) };
    const first = await EmbeddedStore.open(opts);
    const tasks = first.collection('tasks');
    const counters = first.collection('counters');
    await tasks.insertMany(Array.from({ length: 10 }, (_, i) => ({ _id: `t${i}`, title: `alpha ${i}`, description: '', status: 'todo' })));
    // concurrent units: status changes (the text index is not touched), title changes and inserts
    // (a new rowid each, and text for the index), each also counting in `counters`
    await Promise.all(Array.from({ length: 30 }, (_, i) => first.withTransaction(async (s) => {
      const id = `t${i % 10}`;
      if (i % 3 === 0) await tasks.updateOne({ _id: id }, { $set: { title: `beta ${i}` } }, { session: s });
      else if (i % 3 === 1) await tasks.updateOne({ _id: id }, { $set: { status: `s${i}` } }, { session: s });
      else await tasks.insertOne({ _id: `n${i}`, title: `gamma ${i}`, description: '', status: 'new' }, { session: s });
      await counters.updateOne({ _id: 'c' }, { $inc: { n: 1 } }, { upsert: true, session: s });
    })));
    const before = await tasks.find({}, { sort: { _id: 1 } });
    const betas = (await tasks.find({ title: { $regex: 'beta' } }, { sort: { _id: 1 } })).map((t) => t._id);
    expect(betas).toEqual(Array.from({ length: 10 }, (_, i) => `t${i}`)); // every task was retitled once
    await first.close();

    await using again = await EmbeddedStore.open(opts);
    expect(await again.collection('tasks').find({}, { sort: { _id: 1 } })).toEqual(before);
    expect(await again.collection('counters').findOne({ _id: 'c' })).toEqual({ _id: 'c', n: 30 });
    expect((await again.collection('tasks').find({ title: { $regex: 'beta' } }, { sort: { _id: 1 } })).map((t) => t._id)).toEqual(betas);
    expect((await again.collection('tasks').find({ title: { $regex: 'gamma' } })).length).toBe(10);
  });
});

describe.each<[JournalSync]>([['full'], ['normal']])('EmbeddedStore journal failure, %s', (sync) => {
  it('answers 503 for a group whose journal write failed and takes it back in memory: no later write persists it', async () => {
    const dir = tempDir();
    {
      await using store = await EmbeddedStore.open({ dir, sync });
      const journal = (store as unknown as { journal: { writeAll: (changes: Change[]) => void } }).journal;
      const writeAll = journal.writeAll;
      let failures = 1;
      journal.writeAll = (changes) => {
        if (failures-- > 0) throw new Error('disk I/O error'); // as SQLITE_IOERR would
        writeAll(changes);
      };
      const tasks = store.collection('tasks');
      await expect(tasks.insertOne({ _id: 'a', title: 'Wombat burrow', description: '', status: 'todo' })).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE', status: 503 });
      // the caller was told it failed: nothing of it is visible, and the next writes do not carry it to disk
      expect(await tasks.findOne({ _id: 'a' })).toBeNull();
      expect(await tasks.find({ title: { $regex: 'ombat' } })).toEqual([]);
      await tasks.insertOne({ _id: 'b', title: 'Numbat', description: '', status: 'todo' });
      expect((await tasks.updateOne({ _id: 'a' }, { $set: { status: 'doing' } })).matchedCount).toBe(0);
      await tasks.insertOne({ _id: 'a', title: 'Wombat burrow, again', description: '', status: 'todo' });
    }
    await using again = await EmbeddedStore.open({ dir, sync });
    expect((await again.collection('tasks').find({}, { sort: { _id: 1 } })).map((t) => [t._id, t.status])).toEqual([['a', 'todo'], ['b', 'todo']]);
    expect((await again.collection('tasks').find({ title: { $regex: 'ombat' } })).map((t) => [t._id, t.title])).toEqual([['a', 'Wombat burrow, again']]);
  });
});

describe('journal: one write per row and group', () => {
  it('writes a document changed several times in one group once, as its last version, an insert when the first was', () => {
    const ins: Change = { collection: 'tasks', id: 'a', doc: { _id: 'a', title: 'x' }, rowid: 7, inserted: true, textChanged: -1 };
    const other: Change = { collection: 'events', id: 'e', doc: { _id: 'e' }, rowid: 8, inserted: true };
    const upd: Change = { collection: 'tasks', id: 'a', doc: { _id: 'a', title: 'x', status: 'doing' }, rowid: 7, textChanged: 0 };
    const out = lastPerRow([ins, other, upd]);
    expect(out.map((c) => [c.id, c.doc])).toEqual([['e', { _id: 'e' }], ['a', { _id: 'a', title: 'x', status: 'doing' }]]);
    expect(out[1]).toMatchObject({ inserted: true, textChanged: -1 }); // its row and its text are new
    const del: Change = { collection: 'tasks', id: 'a', doc: null, rowid: 7 };
    expect(lastPerRow([upd, del])).toEqual([del]);
    const alone = [other, ins];
    expect(lastPerRow(alone)).toBe(alone);
  });

  it('writes a history collection\'s record (addressed by collection and _id, no rowid) once per group, as its last version', () => {
    const claim: Change = { collection: 'idempotency', id: 'k', doc: { _id: 'k', state: 'running' } };
    const sameIdElsewhere: Change = { collection: 'outbox', id: 'k', doc: { _id: 'k', events: [] } };
    const finished: Change = { collection: 'idempotency', id: 'k', doc: { _id: 'k', state: 'done', reply: '{}' } };
    expect(lastPerRow([claim, sameIdElsewhere, finished])).toEqual([sameIdElsewhere, finished]);
    const dropped: Change = { collection: 'idempotency', id: 'k', doc: null };
    expect(lastPerRow([claim, dropped])).toEqual([dropped]);
  });

  it('keeps the last version of a document written twice before one sync, across a reopen', async () => {
    const dir = tempDir();
    {
      await using store = await EmbeddedStore.open({ dir });
      const tasks = store.collection('tasks');
      // one group: the insert, a title change and a status change of the same task, not awaited in between
      await Promise.all([
        tasks.insertOne({ _id: 'a', title: 'first', description: '', status: 'todo' }, { awaitDurable: false }),
        tasks.updateOne({ _id: 'a' }, { $set: { title: 'second' } }, { awaitDurable: false }),
        tasks.updateOne({ _id: 'a' }, { $set: { status: 'doing' } }),
      ]);
    }
    await using again = await EmbeddedStore.open({ dir });
    expect(await again.collection('tasks').findOne({ _id: 'a' })).toEqual({ _id: 'a', title: 'second', description: '', status: 'doing' });
    expect((await again.collection('tasks').find({ title: { $regex: 'seco' } })).map((t) => t._id)).toEqual(['a']);
    expect(await again.collection('tasks').find({ title: { $regex: 'firs' } })).toEqual([]);
  });
});
