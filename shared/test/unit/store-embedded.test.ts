import { AsyncLocalStorage } from 'node:async_hooks';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { EmbeddedStore, MAX_TRANSACTION_ATTEMPTS, encodeMetadata, metadataPath, type Doc, type Filter, type IndexSpec, type Session } from '@app/shared/store';
import { historyContract, rejection, storeContract } from '@app/shared/testing';
import { HISTORY_CACHE_DOCS } from '../../src/store/embedded/history.js';

const dirs: string[] = [];
const tempDir = () => {
  const dir = mkdtempSync(join(tmpdir(), 'embedded-store-'));
  dirs.push(dir);
  return dir;
};
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

storeContract('EmbeddedStore (memory)', async () => EmbeddedStore.memory());
storeContract('EmbeddedStore (file)', async () => EmbeddedStore.open({ dir: tempDir() }));
// every collection kept as a history collection (SQLite tables read through SQL): the same contract
storeContract('EmbeddedStore (file, every collection a history collection)', async () => EmbeddedStore.open({ dir: tempDir(), history: () => true }));
{
  const dir = tempDir();
  historyContract('EmbeddedStore (file)', () => EmbeddedStore.open({ dir }));
}

describe('EmbeddedStore durability', () => {
  it('keeps every committed write across close and reopen, and nothing of an aborted transaction', async () => {
    const dir = tempDir();
    const first = await EmbeddedStore.open({ dir });
    const tasks = first.collection('tasks');
    await tasks.insertMany([{ _id: 'a', n: 1, metadata: encodeMetadata({ 'app.sprint': 's1' }) }, { _id: 'b', n: 2 }, { _id: 'c', n: 3 }]);
    await tasks.updateOne({ _id: 'a' }, { $set: { n: 10 } });
    await tasks.deleteOne({ _id: 'b' });
    await tasks.bulkWrite([{ insertOne: { document: { _id: 'd', n: 4 } } }, { updateMany: { filter: {}, update: { $inc: { n: 1 } } } }]);
    await first.withTransaction(async (session) => {
      await tasks.insertOne({ _id: 'e', n: 5 }, { session });
      await first.collection('boards').insertOne({ _id: 'b1', name: 'board' }, { session });
    });
    await expect(
      first.withTransaction(async (session) => {
        await tasks.insertOne({ _id: 'f' }, { session });
        throw new Error('abort');
      }),
    ).rejects.toThrow('abort');
    const expected = await tasks.find({}, { sort: { _id: 1 } });
    expect(expected.map((d) => [d._id, d.n])).toEqual([['a', 11], ['c', 4], ['d', 5], ['e', 5]]);
    await first.close();

    await using second = await EmbeddedStore.open({ dir });
    expect(await second.collection('tasks').find({}, { sort: { _id: 1 } })).toEqual(expected);
    expect(await second.collection('boards').find({})).toEqual([{ _id: 'b1', name: 'board' }]);
    expect(await second.collection('tasks').countDocuments({ [metadataPath('app.sprint')]: 's1' })).toBe(1);
  });

  it('stores dates as ISO strings and drops undefined fields, in memory as on disk', async () => {
    await using store = EmbeddedStore.memory();
    await store.collection('c').insertOne({ _id: 'x', at: new Date(0), gone: undefined });
    expect(await store.collection('c').findOne({ _id: 'x' })).toEqual({ _id: 'x', at: '1970-01-01T00:00:00.000Z' });
  });

  it('refuses a second open of the same folder while the first is open', async () => {
    const dir = tempDir();
    const first = await EmbeddedStore.open({ dir });
    await first.collection('c').insertOne({ _id: 'x' });
    expect((await rejection(EmbeddedStore.open({ dir }))).code).toBe('STORE_UNAVAILABLE');
    await first.close();
    await using again = await EmbeddedStore.open({ dir });
    expect(await again.collection('c').find({})).toEqual([{ _id: 'x' }]);
  });

  it('rejects with STORE_UNAVAILABLE when the data folder cannot be created', async () => {
    expect((await rejection(EmbeddedStore.open({ dir: '/dev/null/store' }))).code).toBe('STORE_UNAVAILABLE');
  });
});

describe('EmbeddedStore indexes', () => {
  const INDEXES: IndexSpec[] = ['created_by', 'groupId', 'status', 'tags', 'deleted', 'members.user_id', metadataPath('app.sprint')].map(
    (field) => ({ collection: 'tasks', keys: { [field]: 1 } }),
  );
  const user = fc.constantFrom('u0', 'u1', 'u2', 'u3');
  const group = fc.constantFrom('g0', 'g1', 'g2');
  const status = fc.constantFrom('todo', 'doing', 'done');
  const tag = fc.constantFrom('a', 'b', 'c');
  const sprint = fc.constantFrom('s1', 's2');
  const task = fc.record({
    created_by: user,
    groupId: fc.option(group, { nil: undefined }),
    status,
    deleted: fc.boolean(),
    tags: fc.uniqueArray(tag, { maxLength: 3 }),
    members: fc.array(fc.record({ user_id: user }), { maxLength: 2 }),
    metadata: fc.record({ 'app%2Esprint': fc.option(sprint, { nil: undefined }) }),
    n: fc.integer({ min: 0, max: 5 }),
  });
  const leaf: fc.Arbitrary<Filter> = fc.oneof(
    user.map((u) => ({ created_by: u })),
    fc.uniqueArray(group, { minLength: 1 }).map((gs) => ({ groupId: { $in: gs } })),
    status.map((s) => ({ status: { $eq: s } })),
    status.map((s) => ({ status: { $ne: s } })),
    tag.map((t) => ({ tags: t })),
    fc.uniqueArray(tag, { minLength: 1 }).map((ts) => ({ tags: { $all: ts } })),
    fc.boolean().map((b) => ({ deleted: b })),
    user.map((u) => ({ 'members.user_id': u })),
    sprint.map((s) => ({ 'metadata.app%2Esprint': s })),
    fc.integer({ min: 0, max: 5 }).map((n) => ({ n: { $gte: n } })),
    fc.constant({ groupId: { $exists: false } }),
  );
  const { filter } = fc.letrec<{ filter: Filter }>((tie) => ({
    filter: fc.oneof(
      { depthSize: 'small' },
      leaf,
      fc.array(tie('filter'), { minLength: 1, maxLength: 3 }).map((fs) => ({ $and: fs })),
      fc.array(tie('filter'), { minLength: 1, maxLength: 3 }).map((fs) => ({ $or: fs })),
      fc.tuple(leaf, tie('filter')).map(([a, b]) => ({ ...b, ...a })),
    ),
  }));

  it('gives the same results as a full scan on random data, before and after writes that move index keys', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(task, { maxLength: 60 }), fc.array(filter, { minLength: 1, maxLength: 4 }), async (docs, filters) => {
        await using indexed = EmbeddedStore.memory();
        await using plain = EmbeddedStore.memory();
        await indexed.ensureIndexes(INDEXES);
        const stores = [indexed, plain].map((s) => s.collection('tasks'));
        for (const c of stores) await c.insertMany(docs.map((d, i) => ({ _id: `t${i}`, ...d })));
        const snapshot = (f: Filter) => Promise.all(stores.map((c) => c.find(f, { sort: { _id: 1 } })));
        for (const f of filters) {
          const [a, b] = await snapshot(f);
          expect(a).toEqual(b);
          expect(await stores[0]!.countDocuments(f)).toBe(b!.length);
          const update = { $set: { status: 'done', created_by: 'u1' }, $addToSet: { tags: 'c' }, $unset: { groupId: '' } };
          const results = await Promise.all(stores.map((c) => c.updateMany(f, update)));
          expect(results[0]).toEqual(results[1]);
        }
        for (const f of filters) {
          const [a, b] = await snapshot(f);
          expect(a).toEqual(b);
        }
      }),
      { numRuns: 60 },
    );
  });

  it('gives the same results as a full scan when index sets are large enough to be bitmaps', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(task, { minLength: 1, maxLength: 30 }), fc.array(filter, { minLength: 1, maxLength: 4 }), async (docs, filters) => {
        await using indexed = EmbeddedStore.memory();
        await using plain = EmbeddedStore.memory();
        await indexed.ensureIndexes(INDEXES);
        const stores = [indexed, plain].map((s) => s.collection('tasks'));
        // 25 copies of each: every common key holds hundreds of slots
        const many = Array.from({ length: 25 }, (_, k) => docs.map((d, i) => ({ _id: `t${k}-${i}`, ...d }))).flat();
        for (const c of stores) await c.insertMany(many);
        for (const f of filters) {
          const [a, b] = await Promise.all(stores.map((c) => c.find(f, { sort: { _id: 1 }, projection: { _id: 1 } })));
          expect(a).toEqual(b);
          expect(await stores[0]!.countDocuments(f)).toBe(b!.length);
          await Promise.all(stores.map((c) => c.updateMany(f, { $set: { status: 'done' }, $addToSet: { tags: 'c' } })));
          const [c, d] = await Promise.all(stores.map((s) => s.countDocuments({ status: 'done', tags: 'c' })));
          expect(c).toBe(d);
        }
      }),
      { numRuns: 40 },
    );
  });

  /** Documents whose `n` is a number (`$inc` of a null, string or array is refused, as by MongoDB). */
  const NUMERIC_N: Filter = { n: { $gte: 0 }, 'n.0': { $exists: false } };

  it('walks a sort index to the same pages as sorting, through writes, ties, arrays and missing values', async () => {
    // `n` repeats a lot (ties broken by _id), is sometimes missing, null or an array (MongoDB order)
    const sortValue = fc.oneof(
      { weight: 6, arbitrary: fc.integer({ min: 0, max: 5 }) },
      { weight: 1, arbitrary: fc.constantFrom<unknown>(undefined, null, 'x', [], [4, 1], [2]) },
    );
    const row = fc.record({ status, tags: fc.uniqueArray(tag, { maxLength: 2 }), n: sortValue });
    const sorts = fc.constantFrom<Record<string, 1 | -1>>({ n: 1, _id: 1 }, { n: -1, _id: 1 }, { n: -1, _id: -1 }, { n: 1 });
    await fc.assert(
      fc.asyncProperty(fc.array(row, { minLength: 1, maxLength: 20 }), fc.array(fc.tuple(filter, sorts, fc.nat(30), fc.integer({ min: 1, max: 8 })), { minLength: 1, maxLength: 5 }), async (rows, reads) => {
        await using indexed = EmbeddedStore.memory();
        await using plain = EmbeddedStore.memory();
        await indexed.ensureIndexes([...INDEXES, { collection: 'tasks', keys: { n: 1 } }]);
        const stores = [indexed, plain].map((s) => s.collection('tasks'));
        const docs = Array.from({ length: 20 }, (_, k) => rows.map((r, i) => ({ _id: `t${(k * 37 + i * 11) % 997}-${k}-${i}`, created_by: 'u0', deleted: false, ...r }))).flat();
        for (const c of stores) await c.insertMany(docs.map((d) => (d.n === undefined ? (({ n: _, ...rest }) => rest)(d) : d)));
        for (const [r, [f, sort, skip, limit]] of reads.entries()) {
          const page = (c: (typeof stores)[number]) => c.find(f, { sort, skip, limit, projection: { _id: 1, n: 1 } });
          const [a, b] = await Promise.all(stores.map(page));
          // without an _id tie-breaker the order of ties is unspecified: compare the ascending sort keys
          // (an array sorts by its smallest element, an empty one before null and missing)
          const key = (v: unknown) => (Array.isArray(v) ? (v.length ? Math.min(...(v as number[])) : '[]') : (v ?? null));
          if (!('_id' in sort)) expect(a!.map((d) => key(d.n))).toEqual(b!.map((d) => key(d.n)));
          else expect(a).toEqual(b);
          await Promise.all(stores.map((c) => c.updateMany({ $and: [f, NUMERIC_N] }, { $inc: { n: 1 } })));
          await Promise.all(stores.map((c) => c.deleteOne({ status: 'done' })));
          await Promise.all(stores.map((c) => c.insertOne({ _id: `new-${r}`, status: 'todo', tags: ['a'], n: skip % 6, created_by: 'u0', deleted: false })));
        }
      }),
      { numRuns: 60, endOnFailure: true },
    );
  });

  it('selects a page of scattered candidates by sort index position like sorting, through writes, ties, arrays and untested conditions', async () => {
    // few candidates among many documents: too sparse to walk, so the page is selected from the candidates
    const sortValue = fc.oneof(
      { weight: 6, arbitrary: fc.integer({ min: 0, max: 5 }) },
      { weight: 1, arbitrary: fc.constantFrom<unknown>(undefined, null, 'x', [], [4, 1], [2]) },
    );
    const row = fc.record({ status, tags: fc.uniqueArray(tag, { maxLength: 2 }), n: sortValue, created_by: user });
    const sorts = fc.constantFrom<Record<string, 1 | -1>>({ n: -1, _id: 1 }, { n: 1, _id: 1 }, { n: 1, _id: -1 }, { n: -1, _id: -1 });
    await fc.assert(
      fc.asyncProperty(fc.array(row, { minLength: 1, maxLength: 30 }), fc.array(fc.tuple(filter, sorts, fc.nat(12), fc.integer({ min: 1, max: 8 })), { minLength: 1, maxLength: 5 }), async (rows, reads) => {
        await using indexed = EmbeddedStore.memory();
        await using plain = EmbeddedStore.memory();
        await indexed.ensureIndexes([...INDEXES, { collection: 'tasks', keys: { n: 1 } }]);
        const stores = [indexed, plain].map((s) => s.collection('tasks'));
        const filler = Array.from({ length: 2_000 }, (_, i) => ({ _id: `f${i}`, status: 'filler', created_by: 'u9', deleted: true, n: i % 7 }));
        const picked = Array.from({ length: 4 }, (_, k) => rows.map((r, i) => ({ _id: `t${(k * 37 + i * 11) % 997}-${k}-${i}`, deleted: false, ...r }))).flat();
        const docs = [...filler, ...picked].sort((a, b) => (a._id < b._id ? -1 : 1)); // candidates scattered over the slots
        for (const c of stores) await c.insertMany(docs.map((d) => (d.n === undefined ? (({ n: _, ...rest }) => rest)(d) : d)));
        for (const [r, [f, sort, skip, limit]] of reads.entries()) {
          const live = { $and: [{ deleted: false }, f] };
          const [a, b] = await Promise.all(stores.map((c) => c.find(live, { sort, skip, limit, projection: { _id: 1, n: 1 } })));
          expect(a).toEqual(b);
          // writes since the index was built: the changed documents are compared by their keys
          await Promise.all(stores.map((c) => c.updateMany({ $and: [f, NUMERIC_N] }, { $inc: { n: 1 } })));
          await Promise.all(stores.map((c) => c.deleteOne({ status: 'done' })));
          await Promise.all(stores.map((c) => c.insertOne({ _id: `new-${r}`, status: 'todo', tags: ['a'], n: skip % 6, created_by: 'u0', deleted: false })));
          const [c, d] = await Promise.all(stores.map((s) => s.find(live, { sort, skip, limit, projection: { _id: 1, n: 1 } })));
          expect(c).toEqual(d);
        }
      }),
      { numRuns: 60, endOnFailure: true },
    );
  });

  it('pages a scattered exact match without examining the matches that are not on the page', async () => {
    await using store = EmbeddedStore.memory();
    await store.ensureIndexes([{ collection: 'tasks', keys: { status: 1 } }, { collection: 'tasks', keys: { created_at: 1 } }]);
    const tasks = store.collection('tasks');
    // 300 'doing' tasks scattered over 12,000; created_at repeats (ties broken by _id ascending)
    const docs = Array.from({ length: 12_000 }, (_, i) => ({ _id: `t${String(i).padStart(5, '0')}`, status: i % 40 === 0 ? 'doing' : 'todo', created_at: `2026-01-${String(1 + ((i * 7) % 28)).padStart(2, '0')}` }));
    await tasks.insertMany(docs);
    const expected = (all: typeof docs) =>
      all.filter((d) => d.status === 'doing').sort((a, b) => (a.created_at !== b.created_at ? (a.created_at < b.created_at ? 1 : -1) : a._id < b._id ? -1 : 1)).slice(10, 30).map((d) => d._id);
    const page = async () => {
      const before = store.stats.docsExamined;
      const found = await tasks.find({ status: 'doing' }, { sort: { created_at: -1, _id: 1 }, skip: 10, limit: 20, projection: { _id: 1 } });
      return { ids: found.map((d) => d._id), examined: store.stats.docsExamined - before };
    };
    expect(await page()).toEqual({ ids: expected(docs), examined: 30 });
    await tasks.updateOne({ _id: 't00400' }, { $set: { created_at: '2027-01-01' } });
    const moved = docs.map((d) => (d._id === 't00400' ? { ...d, created_at: '2027-01-01' } : d));
    expect((await page()).ids).toEqual(expected(moved));
  });

  it('keeps a sorted page while the collection is unchanged: asked again it examines nothing, and a write is seen at once', async () => {
    await using store = EmbeddedStore.memory();
    await store.ensureIndexes([{ collection: 'tasks', keys: { status: 1 } }, { collection: 'tasks', keys: { order: 1 } }]);
    const tasks = store.collection('tasks');
    await tasks.insertMany(Array.from({ length: 2_000 }, (_, i) => ({ _id: `t${String(i).padStart(4, '0')}`, status: i % 4 === 0 ? 'doing' : 'todo', title: `task ${i}`, order: (i * 7_919) % 2_000 })));
    const page = async (filter: Filter) => {
      const before = store.stats.docsExamined;
      const [found, total] = await Promise.all([tasks.find(filter, { sort: { order: 1, _id: 1 }, limit: 5 }), tasks.countDocuments(filter)]);
      return { ids: found.map((d) => d._id), total, examined: store.stats.docsExamined - before };
    };
    const filter = { status: { $in: ['doing'] } };
    const first = await page(filter);
    expect(first.examined).toBeGreaterThan(0);
    // the same filter (another object, same content): the kept page and its plan, nothing examined
    expect(await page({ status: { $in: ['doing'] } })).toEqual({ ...first, examined: 0 });
    // a write changes the collection: the page is made again and shows it
    await tasks.insertOne({ _id: 'first', status: 'doing', title: 'new 0', order: -1 });
    const after = await page(filter);
    expect(after.ids).toEqual(['first', ...first.ids.slice(0, 4)]);
    expect(after.total).toBe(first.total + 1);
    // a filter holding a RegExp object is never kept (its JSON text would not tell /0$/ from /1$/)
    const zero = await page({ status: 'doing', title: /0$/ });
    const one = await page({ status: 'doing', title: /1$/ });
    expect(zero.ids[0]).toBe('first');
    expect(zero.total).toBe(101); // 'doing' tasks are the multiples of 4: 100 of them end in 0, and 'new 0'
    expect(one).toMatchObject({ ids: [], total: 0 }); // none ends in 1
    // a filter of more than 512 values is not kept: asked again, it is made again
    const long = { status: { $in: ['doing', ...Array.from({ length: 600 }, (_, i) => `unused ${i}`)] } };
    const made = await page(long);
    expect(made.ids).toEqual(after.ids);
    expect((await page(long)).examined).toBe(made.examined);
  });

  it('serves a small sorted page of a large collection by walking the sort index, also after many writes', async () => {
    await using store = EmbeddedStore.memory();
    await store.ensureIndexes([{ collection: 'tasks', keys: { status: 1 } }, { collection: 'tasks', keys: { order: 1 } }]);
    const tasks = store.collection('tasks');
    const docs = Array.from({ length: 6_000 }, (_, i) => ({ _id: `t${String(i).padStart(4, '0')}`, status: i % 3 === 0 ? 'doing' : 'todo', order: (i * 7_919) % 6_000 }));
    await tasks.insertMany(docs);
    const expected = (all: typeof docs) =>
      all.filter((d) => d.status === 'doing').sort((a, b) => a.order - b.order || (a._id < b._id ? -1 : 1)).slice(5, 15).map((d) => d._id);
    const page = async () => {
      const before = store.stats.docsExamined;
      const found = await tasks.find({ status: 'doing' }, { sort: { order: 1, _id: 1 }, skip: 5, limit: 10, projection: { _id: 1 } });
      return { ids: found.map((d) => d._id), examined: store.stats.docsExamined - before };
    };
    const first = await page();
    expect(first.ids).toEqual(expected(docs));
    // 2,000 candidates; the walk stops after the 15th match (about 45 documents in)
    expect(first.examined).toBeLessThan(200);
    // more changed documents than the index merges at read time: it is rebuilt
    await tasks.updateMany({}, { $inc: { order: 1_000 } });
    await tasks.updateMany({ status: 'todo' }, { $inc: { order: -3_000 } });
    const moved = docs.map((d) => ({ ...d, order: d.order + 1_000 - (d.status === 'todo' ? 3_000 : 0) }));
    expect((await page()).ids).toEqual(expected(moved));
    await tasks.updateOne({ _id: 't0003' }, { $set: { order: -1 } });
    const again = moved.map((d) => (d._id === 't0003' ? { ...d, order: -1 } : d));
    expect((await page()).ids).toEqual(expected(again));
  });

  it('answers the readable-tasks filter from the indexes, examining only documents the caller can read', async () => {
    const docs = Array.from({ length: 10_000 }, (_, i) => ({
      _id: `t${String(i).padStart(5, '0')}`,
      title: `task ${i}`,
      created_by: `u${i % 100}`,
      ...(i % 500 === 0 ? { groupId: 'g1' } : {}),
      deleted: i % 10 === 0,
      status: i % 3 === 0 ? 'done' : 'todo',
    }));
    const filter = { deleted: false, $or: [{ created_by: 'u7' }, { groupId: { $in: ['g1'] } }], status: 'todo', title: { $regex: '7$' } };
    const readable = docs.filter((d) => d.created_by === 'u7' || d.groupId === 'g1');
    const expected = readable.filter((d) => !d.deleted && d.status === 'todo' && d.title.endsWith('7')).map((d) => d._id);

    const examine = async (indexes: IndexSpec[]) => {
      await using store = EmbeddedStore.memory();
      await store.ensureIndexes(indexes);
      await store.collection('tasks').insertMany(docs);
      const before = store.stats.docsExamined;
      const found = await store.collection('tasks').find(filter, { sort: { _id: 1 } });
      expect(found.map((d) => d._id)).toEqual(expected);
      return store.stats.docsExamined - before;
    };
    expect(expected.length).toBeGreaterThan(0);
    expect(await examine(INDEXES)).toBeLessThanOrEqual(readable.length);
    expect(await examine([])).toBe(docs.length);
  });

  it('fills the indexes declared before while loading at reopen: plans use them, unique keys stay enforced, writes keep them current', async () => {
    const dir = tempDir();
    const docs = Array.from({ length: 2_000 }, (_, i) => ({ _id: `t${i}`, owner: `u${i % 50}`, tags: [`k${i % 7}`, 'all'], at: `2026-01-01T00:00:${i}` }));
    const first = await EmbeddedStore.open({ dir });
    await first.ensureIndexes([
      { collection: 'tasks', keys: { owner: 1, tags: 1 } },
      { collection: 'tasks', keys: { at: 1 } },
      { collection: 'users', keys: { username: 1 }, unique: true },
    ]);
    await first.collection('tasks').insertMany(docs);
    await first.collection('users').insertOne({ _id: 'a', username: 'x' });
    await first.close();

    await using second = await EmbeddedStore.open({ dir });
    const tasks = second.collection('tasks');
    await tasks.updateOne({ _id: 't7' }, { $set: { owner: 'u1', tags: ['new'] } });
    // an exact plan counts from the index sets alone, and a find examines only the matches
    const examined = async (filter: Filter, expected: string[]) => {
      const before = second.stats.docsExamined;
      expect(await tasks.countDocuments(filter)).toBe(expected.length);
      const found = await tasks.find(filter);
      expect(found.map((d) => d._id).sort()).toEqual([...expected].sort());
      return second.stats.docsExamined - before - expected.length;
    };
    const owned = ['t7', ...docs.filter((d) => d.owner === 'u1' && d.tags.includes('k1')).map((d) => d._id)];
    // no ensureIndexes on this open: the recorded indexes answer the conditions exactly
    expect(await examined({ owner: 'u1', tags: { $in: ['k1', 'new'] } }, owned)).toBe(0);
    expect(await examined({ at: '2026-01-01T00:00:42' }, ['t42'])).toBe(0);
    expect(await examined({ owner: 'u7' }, docs.filter((d) => d.owner === 'u7' && d._id !== 't7').map((d) => d._id))).toBe(0);
    expect((await rejection(second.collection('users').insertOne({ _id: 'b', username: 'x' }))).code).toBe('CONFLICT');
    // declaring them again changes nothing
    await second.ensureIndexes([{ collection: 'tasks', keys: { owner: 1, tags: 1 } }]);
    expect(await examined({ tags: 'new' }, ['t7'])).toBe(0);
  });

  it('records near-unique indexes as deferred at close, and a deferred index answers like a filled one through writes before and after its first use', async () => {
    const dir = tempDir();
    const docs = Array.from({ length: 1_000 }, (_, i) => ({ _id: `t${i}`, owner: `u${i % 10}`, at: `a${i}` }));
    const first = await EmbeddedStore.open({ dir, deferIndexesFrom: 500 });
    await first.ensureIndexes([{ collection: 'tasks', keys: { owner: 1 } }, { collection: 'tasks', keys: { at: 1 } }]);
    await first.collection('tasks').insertMany(docs);
    await first.close();
    const recorded = () => {
      const db = new Database(join(dir, 'store.sqlite'), { readonly: true });
      try {
        return Object.fromEntries((db.prepare('SELECT fields, deferred FROM doc_indexes').all() as { fields: string; deferred: number }[]).map((r) => [r.fields, r.deferred]));
      } finally {
        db.close();
      }
    };
    expect(recorded()).toEqual({ '["owner"]': 0, '["at"]': 1 });

    const second = await EmbeddedStore.open({ dir, deferIndexesFrom: 500 });
    const tasks = second.collection('tasks');
    // writes before the first lookup: an update moving a key, a delete, an insert
    await tasks.updateOne({ _id: 't1' }, { $set: { at: 'moved' } });
    await tasks.deleteOne({ _id: 't2' });
    await tasks.insertOne({ _id: 'n1', owner: 'u0', at: 'a3' });
    const ids = async (filter: Filter) => (await tasks.find(filter)).map((d) => d._id).sort();
    expect(await ids({ at: 'a1' })).toEqual([]);
    expect(await ids({ at: 'moved' })).toEqual(['t1']);
    expect(await ids({ at: { $in: ['a2', 'a3'] } })).toEqual(['n1', 't3']);
    // and after it (the index is filled now)
    await tasks.updateOne({ _id: 't3' }, { $set: { at: 'a4' } });
    expect(await ids({ at: 'a3' })).toEqual(['n1']);
    expect(await ids({ at: 'a4' })).toEqual(['t3', 't4']);
    expect(await tasks.countDocuments({ at: 'a4', owner: 'u4' })).toBe(1);
    expect(await tasks.countDocuments({ owner: 'u2' })).toBe(99);
    await second.close();
    // an index left unused keeps its mark; once filled and below the size, it is filled while loading again
    const third = await EmbeddedStore.open({ dir, deferIndexesFrom: 5_000 });
    await third.close();
    expect(recorded()).toEqual({ '["owner"]': 0, '["at"]': 1 });
    const fourth = await EmbeddedStore.open({ dir, deferIndexesFrom: 5_000 });
    expect((await fourth.collection('tasks').find({ at: 'moved' })).map((d) => d._id)).toEqual(['t1']);
    await fourth.close();
    expect(recorded()).toEqual({ '["owner"]': 0, '["at"]': 0 });
  });

  it('refuses a unique index over existing duplicates with CONFLICT', async () => {
    await using store = EmbeddedStore.memory();
    await store.collection('users').insertMany([{ _id: 'a', username: 'x' }, { _id: 'b', username: 'x' }]);
    const err = await rejection(store.ensureIndexes([{ collection: 'users', keys: { username: 1 }, unique: true }]));
    expect(err.code).toBe('CONFLICT');
    await store.collection('users').insertOne({ _id: 'c', username: 'x' });
  });
});

describe('EmbeddedStore transactions', () => {
  it('retries a transaction whose document was changed meanwhile outside it', async () => {
    await using store = EmbeddedStore.memory();
    const c = store.collection<Doc & { n: number }>('c');
    await c.insertOne({ _id: 'x', n: 0 });
    let runs = 0;
    await store.withTransaction(async (session) => {
      runs++;
      const doc = await c.findOne({ _id: 'x' }, { session });
      if (runs === 1) await c.updateOne({ _id: 'x' }, { $inc: { n: 10 } });
      await c.updateOne({ _id: 'x' }, { $set: { n: doc!.n + 1 } }, { session });
    });
    expect(runs).toBe(2);
    expect((await c.findOne({ _id: 'x' }))?.n).toBe(11);
  });

  it('gives up with CONFLICT after the last attempt and writes nothing of the transaction', async () => {
    await using store = EmbeddedStore.memory();
    const c = store.collection('c');
    await c.insertOne({ _id: 'x', n: 0 });
    let runs = 0;
    const err = await rejection(
      store.withTransaction(async (session) => {
        runs++;
        await c.updateOne({ _id: 'x' }, { $set: { mine: true } }, { session });
        await c.insertOne({ _id: `new${runs}` }, { session });
        await c.updateOne({ _id: 'x' }, { $inc: { n: 1 } });
      }),
    );
    expect(err.code).toBe('CONFLICT');
    expect(runs).toBe(MAX_TRANSACTION_ATTEMPTS);
    expect(await c.find({})).toEqual([{ _id: 'x', n: runs }]);
  });

  it('fails the commit with CONFLICT when a write outside the transaction took its unique key', async () => {
    await using store = EmbeddedStore.memory();
    await store.ensureIndexes([{ collection: 'users', keys: { username: 1 }, unique: true }]);
    const users = store.collection('users');
    const err = await rejection(
      store.withTransaction(async (session) => {
        await users.insertOne({ _id: 'u1', username: 'alice' }, { session });
        await users.insertOne({ _id: 'u2', username: 'alice' });
      }),
    );
    expect(err.code).toBe('CONFLICT');
    expect(await users.find({})).toEqual([{ _id: 'u2', username: 'alice' }]);
  });

  it('checks unique keys among the writes of one transaction: a key taken, given up, taken again', async () => {
    await using store = EmbeddedStore.memory();
    await store.ensureIndexes([{ collection: 'users', keys: { username: 1 }, unique: true }]);
    const users = store.collection('users');
    await store.withTransaction(async (session) => {
      await users.insertOne({ _id: 'u1', username: 'alice' }, { session });
      expect((await rejection(users.insertOne({ _id: 'u2', username: 'alice' }, { session }))).code).toBe('CONFLICT');
      await users.updateOne({ _id: 'u1' }, { $set: { username: 'bob' } }, { session });
      await users.insertOne({ _id: 'u2', username: 'alice' }, { session }); // alice is free again
      expect((await rejection(users.updateOne({ _id: 'u1' }, { $set: { username: 'alice' } }, { session }))).code).toBe('CONFLICT');
      await users.deleteOne({ _id: 'u2' }, { session });
      await users.insertOne({ _id: 'u3', username: 'alice' }, { session });
    });
    expect(await users.find({}, { sort: { _id: 1 } })).toEqual([{ _id: 'u1', username: 'bob' }, { _id: 'u3', username: 'alice' }]);
  });

  it('refuses a nested transaction (after the lock wait) and a session used after its transaction, and keeps serving', async () => {
    await using store = EmbeddedStore.memory({ lockWaitMs: 50 });
    const nested = await rejection(store.withTransaction(() => store.withTransaction(async () => 1)));
    expect(nested.code).toBe('STORE_UNAVAILABLE');
    // refused once the lock wait has passed (a hang would fail the test by its own timeout)
    expect(nested.details).toMatchObject({ waitedMs: expect.any(Number) });
    expect(nested.details!.waitedMs as number).toBeGreaterThanOrEqual(45);
    let leaked: Session | undefined;
    await store.withTransaction(async (session) => {
      leaked = session;
    });
    expect((await rejection(store.collection('c').find({}, { session: leaked! }))).code).toBe('INTERNAL');
    expect(await store.withTransaction(async () => 'still serving')).toBe('still serving');
    expect((await rejection(store.withTransaction(async () => store.withTransaction(async () => 2)))).code).toBe('STORE_UNAVAILABLE');
    // transactions that wait less than the lock wait run in arrival order
    const order: number[] = [];
    await Promise.all([1, 2, 3].map((i) => store.withTransaction(async () => {
      await new Promise((r) => setTimeout(r, 5));
      order.push(i);
    })));
    expect(order).toEqual([1, 2, 3]);
  });
});

describe('EmbeddedStore history collections', () => {
  const event = (seq: number, at = '2026-01-01T00:00:00.000Z') => ({ _id: `e${String(seq).padStart(6, '0')}`, seq, type: 'task.updated', occurred_at: at, task_id: 't1', data: { n: seq } });
  const sqlite = (dir: string) => new Database(join(dir, 'store.sqlite'));
  const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

  it('opens a data folder without reading its events, keys or deliveries', async () => {
    const dir = tempDir();
    const first = await EmbeddedStore.open({ dir });
    await first.collection('tasks').insertOne({ _id: 't1', title: 'kept' });
    await first.collection('events').insertMany([event(1), event(2)]);
    await first.collection('idempotency').insertOne({ _id: 'k1', expires_at: '2026-01-02T00:00:00.000Z' });
    await first.close();
    // damage every stored event, key and delivery wherever it is kept: an open that read them would fail
    const db = sqlite(dir);
    for (const { name } of db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]) {
      if (name === 'docs') db.prepare("UPDATE docs SET body = '{' WHERE coll IN ('events', 'idempotency')").run();
      if (name.startsWith('hist:')) db.prepare(`UPDATE "${name}" SET body = '{'`).run();
    }
    db.close();
    await using store = await EmbeddedStore.open({ dir });
    expect(await store.collection('tasks').findOne({ _id: 't1' })).toEqual({ _id: 't1', title: 'kept' });
    await expect(store.collection('events').findOne({ seq: 1 })).rejects.toThrow();
  });

  it('moves the events of an older data folder, where they were ordinary collections, into their tables', async () => {
    const dir = tempDir();
    const older = await EmbeddedStore.open({ dir, history: () => false });
    await older.ensureIndexes([{ collection: 'events', keys: { seq: 1 }, unique: true }]);
    await older.collection('events').insertMany([1, 2, 3, 4].map((s) => event(s)));
    await older.collection('idempotency').insertOne({ _id: 'k1', state: 'done', expires_at: '2026-01-02T00:00:00.000Z' });
    await older.collection('tasks').insertOne({ _id: 't1', title: 'kept' });
    await older.close();

    const store = await EmbeddedStore.open({ dir });
    const events = store.collection('events');
    expect((await events.find({ seq: { $gt: 1 } }, { sort: { seq: -1 } })).map((e) => e.seq)).toEqual([4, 3, 2]);
    await expect(events.insertOne({ ...event(2), _id: 'other' })).rejects.toMatchObject({ code: 'CONFLICT' });
    expect(await store.collection('idempotency').findOne({ _id: 'k1' })).toMatchObject({ state: 'done' });
    expect(await store.collection('tasks').countDocuments({})).toBe(1);
    await store.close();
    const db = sqlite(dir);
    expect(db.prepare("SELECT count(*) FROM docs WHERE coll IN ('events', 'idempotency')").pluck().get()).toBe(0);
    expect(db.prepare('SELECT count(*) FROM "hist:events"').pluck().get()).toBe(4);
    db.close();
  });

  it('pages through more rows than the matcher takes and more documents than the cache holds, as a store holding them in memory does', async () => {
    const dir = tempDir();
    const kinds = ['task.updated', 'task.updated', 'task.updated', 'card.moved', 'task.created'];
    // type is not indexed: SQL reads by seq, the matcher turns most rows down
    const docs = Array.from({ length: 3_000 }, (_, i) => ({ ...event(i + 1), type: kinds[(i * 7) % kinds.length]!, task_id: `t${i % 11}` }));
    const first = await EmbeddedStore.open({ dir });
    await first.ensureIndexes([{ collection: 'events', keys: { seq: 1 }, unique: true }]);
    await first.collection('events').insertMany(docs);
    await first.close();
    await using memory = EmbeddedStore.memory();
    await memory.collection('events').insertMany(docs);
    // reopened: nothing cached, so the first reads parse every row they use
    await using store = await EmbeddedStore.open({ dir });
    const reads: [Record<string, unknown>, Record<string, 1 | -1>, number][] = [
      [{ seq: { $gt: 10 } }, { seq: 1 }, 2_000],
      [{ seq: { $gt: 10 }, type: 'task.created' }, { seq: 1 }, 150],
      [{ seq: { $lte: 2_900 }, type: 'card.moved', task_id: { $in: ['t3', 't4'] } }, { seq: -1 }, 40],
      [{ type: 'none' }, { seq: 1 }, 10],
      [{ seq: { $gt: 100 } }, { seq: 1 }, 100],
    ];
    for (const [filter, sort, limit] of reads) {
      const want = (await memory.collection('events').find(filter, { sort, limit })).map((e) => e.seq);
      expect((await store.collection('events').find(filter, { sort, limit })).map((e) => e.seq)).toEqual(want);
      // again, now partly from the cache, and with a write in between (no kept result)
      await store.collection('events').insertOne({ ...event(10_000 + want.length), type: 'other' });
      await memory.collection('events').insertOne({ ...event(10_000 + want.length), type: 'other' });
      expect((await store.collection('events').find(filter, { sort, limit })).map((e) => e.seq)).toEqual((await memory.collection('events').find(filter, { sort, limit })).map((e) => e.seq));
    }
  });

  it('reads a page whose newest documents are cached and whose older ones, parsed first, push them out of the cache', async () => {
    const dir = tempDir();
    const total = 3 * HISTORY_CACHE_DOCS;
    const first = await EmbeddedStore.open({ dir });
    await first.ensureIndexes([{ collection: 'events', keys: { seq: 1 }, unique: true }]);
    await first.collection('events').insertMany(Array.from({ length: total }, (_, i) => event(i + 1)));
    await first.close();
    await using store = await EmbeddedStore.open({ dir });
    const events = store.collection('events');
    const newest = range(total - 99, total);
    // the newest 100 read twice (another filter: no kept result): cached, and the second read finds them in the cache
    expect((await events.find({ seq: { $gt: total - 100 } }, { sort: { seq: 1 }, limit: 100 })).map((e) => e.seq)).toEqual(newest);
    expect((await events.find({ seq: { $gte: total - 99 } }, { sort: { seq: 1 }, limit: 100 })).map((e) => e.seq)).toEqual(newest);
    // then every event: the older ones, more than the cache holds, are parsed before the cached ones are reached
    expect((await events.find({ seq: { $gt: 0 } }, { sort: { seq: 1 }, limit: total })).map((e) => e.seq)).toEqual(range(1, total));
  });

  it('deletes swept events from SQLite, and later writes reuse the freed pages', async () => {
    const dir = tempDir();
    const round = async (from: number) => {
      await using store = await EmbeddedStore.open({ dir });
      await store.ensureIndexes([{ collection: 'events', keys: { seq: 1 }, unique: true }, { collection: 'events', keys: { occurred_at: 1 } }]);
      const events = store.collection('events');
      const old = '2020-01-01T00:00:00.000Z';
      await events.insertMany(Array.from({ length: 3_000 }, (_, i) => ({ ...event(from + i, old), data: { text: 'x'.repeat(500) } })));
      expect((await events.deleteMany({ occurred_at: { $lt: '2021-01-01T00:00:00.000Z' } })).deletedCount).toBe(3_000);
      expect(await events.countDocuments({})).toBe(0);
    };
    const pages = () => {
      const db = sqlite(dir);
      db.pragma('wal_checkpoint(TRUNCATE)');
      const out = { pages: db.pragma('page_count', { simple: true }) as number, free: db.pragma('freelist_count', { simple: true }) as number, rows: db.prepare('SELECT count(*) FROM "hist:events"').pluck().get() };
      db.close();
      return out;
    };
    await round(1);
    const first = pages();
    expect(first.rows).toBe(0);
    expect(first.free).toBeGreaterThan(0);
    await round(3_001);
    await round(6_001);
    const third = pages();
    expect(third.rows).toBe(0);
    expect(third.pages).toBeLessThanOrEqual(first.pages * 1.1);
  });
});

describe('EmbeddedStore transaction lock', () => {
  it("runs a transaction that waited for the lock in its own caller's async context, not in the one that ended before it", async () => {
    const store = await EmbeddedStore.open({ dir: tempDir() });
    try {
      // a request's context, as tracing and access tokens keep theirs (AsyncLocalStorage)
      const request = new AsyncLocalStorage<string>();
      let release!: () => void;
      const held = new Promise<void>((r) => (release = r));
      const first = request.run('first', () => store.withTransaction(async () => held));
      const seen: Array<string | undefined> = [];
      const second = request.run('second', () => store.withTransaction(async () => void seen.push(request.getStore())));
      const third = store.withTransaction(async () => void seen.push(request.getStore()));
      release();
      await Promise.all([first, second, third]);
      expect(seen).toEqual(['second', undefined]);
    } finally {
      await store.close();
    }
  });
});
