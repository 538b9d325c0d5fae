import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { decodeMetadata, encodeMetadata, metadataPath } from '../store/keys.js';
import { TRANSACTION_DEADLINE_MS, type Collection, type Doc, type DocumentStore, type Filter, type IndexSpec, type Sort } from '../store/port.js';
import { likeToRegex } from '../query/patterns.js';
import { rejection } from './assertions.js';

/** The fixture every filter, sort and projection test reads (metadata keys stored escaped). */
const ITEMS: Doc[] = [
  {
    _id: 'a', title: 'Alpha task', status: 'todo', n: 1, tags: ['x', 'y'],
    metadata: encodeMetadata({ 'app.sprint': 's1', order: 2 }), members: [{ user_id: 'u1' }],
    created_at: '2024-01-01T00:00:00.000Z',
  },
  {
    _id: 'b', title: 'beta', status: 'doing', n: 2, tags: ['y'],
    metadata: encodeMetadata({ order: 1 }), members: [{ user_id: 'u2' }, { user_id: 'u3' }],
    created_at: '2024-02-01T00:00:00.000Z',
  },
  {
    _id: 'c', title: 'Gamma ALPHA', status: 'done', n: 3, tags: [], assignee: 'u1',
    metadata: encodeMetadata({ 'app.sprint': 's2' }), created_at: '2024-03-01T00:00:00.000Z',
  },
  {
    _id: 'd', title: 'delta', status: 'todo', tags: ['x'], assignee: null,
    metadata: {}, created_at: '2024-04-01T00:00:00.000Z',
  },
];

const SPRINT = metadataPath('app.sprint');

/** Filter → ids it selects from {@link ITEMS}: every operator the port documents. */
const FILTER_CASES: Array<[string, Filter, string[]]> = [
  ['implicit $eq', { status: 'todo' }, ['a', 'd']],
  ['$eq', { status: { $eq: 'done' } }, ['c']],
  ['$ne', { status: { $ne: 'todo' } }, ['b', 'c']],
  ['$ne matches missing fields', { n: { $ne: 1 } }, ['b', 'c', 'd']],
  ['$gt', { n: { $gt: 1 } }, ['b', 'c']],
  ['$gte', { n: { $gte: 2 } }, ['b', 'c']],
  ['$lt', { n: { $lt: 2 } }, ['a']],
  ['$lte', { n: { $lte: 2 } }, ['a', 'b']],
  ['ISO date range on strings', { created_at: { $gte: '2024-02-01T00:00:00.000Z', $lt: '2024-04-01T00:00:00.000Z' } }, ['b', 'c']],
  ['$in', { status: { $in: ['todo', 'done'] } }, ['a', 'c', 'd']],
  ['$nin matches missing fields', { n: { $nin: [1] } }, ['b', 'c', 'd']],
  ['array field has a value', { tags: 'x' }, ['a', 'd']],
  ['$in on an array field', { tags: { $in: ['x', 'zz'] } }, ['a', 'd']],
  ['$nin on an array field', { tags: { $nin: ['y'] } }, ['c', 'd']],
  ['$all', { tags: { $all: ['x', 'y'] } }, ['a']],
  ['$size', { tags: { $size: 0 } }, ['c']],
  ['$exists true (null counts)', { assignee: { $exists: true } }, ['c', 'd']],
  ['$exists false', { assignee: { $exists: false } }, ['a', 'b']],
  ['null matches null and missing', { assignee: null }, ['a', 'b', 'd']],
  ['$regex', { title: { $regex: '^b' } }, ['b']],
  ['$regex with $options i', { title: { $regex: 'alpha', $options: 'i' } }, ['a', 'c']],
  ['$not with $regex', { title: { $not: { $regex: 'a$' } } }, ['a', 'c']],
  ['$not matches missing fields', { n: { $not: { $gt: 1 } } }, ['a', 'd']],
  ['$and', { $and: [{ status: 'todo' }, { tags: 'y' }] }, ['a']],
  ['$or', { $or: [{ status: 'done' }, { n: 2 }] }, ['b', 'c']],
  ['$nor', { $nor: [{ status: 'todo' }, { n: 2 }] }, ['c']],
  ['$elemMatch', { members: { $elemMatch: { user_id: 'u3' } } }, ['b']],
  ['dotted path into an array of sub-documents', { 'members.user_id': 'u1' }, ['a']],
  ['dotted path into an escaped metadata key', { [SPRINT]: 's1' }, ['a']],
  ['$in on an escaped metadata key', { [SPRINT]: { $in: ['s1', 's2'] } }, ['a', 'c']],
  ['$exists false on an escaped metadata key', { [SPRINT]: { $exists: false } }, ['b', 'd']],
  ['nested numeric comparison', { 'metadata.order': { $gte: 1 } }, ['a', 'b']],
  ['$in on _id', { _id: { $in: ['a', 'zz'] } }, ['a']],
  ['_id pinned inside nested $and, other conditions still apply', { $and: [{ $and: [{ _id: { $in: ['a', 'b'] } }, { n: { $gte: 1 } }] }, { status: 'todo' }] }, ['a']],
  ['_id pinned with a condition it fails', { $and: [{ _id: 'b' }, { status: 'todo' }] }, []],
  ['empty filter', {}, ['a', 'b', 'c', 'd']],
];

/** Sort → ids in order, over {@link ITEMS}: multi-key, nested, missing fields, arrays. */
const SORT_CASES: Array<[string, Filter, Sort, string[]]> = [
  ['multi-key, missing last descending', {}, { status: 1, n: -1, _id: 1 }, ['b', 'c', 'a', 'd']],
  ['nested ascending, missing first', {}, { 'metadata.order': 1, _id: 1 }, ['c', 'd', 'b', 'a']],
  ['nested descending, missing last', {}, { 'metadata.order': -1, _id: 1 }, ['a', 'b', 'c', 'd']],
  ['missing and null tie, first ascending', {}, { assignee: 1, _id: 1 }, ['a', 'b', 'd', 'c']],
  ['descending _id', {}, { _id: -1 }, ['d', 'c', 'b', 'a']],
  ['array ascending by smallest element', { _id: { $in: ['a', 'b', 'd'] } }, { tags: 1, _id: 1 }, ['a', 'd', 'b']],
  ['array descending by largest element', { _id: { $in: ['a', 'b', 'd'] } }, { tags: -1, _id: 1 }, ['a', 'b', 'd']],
];

const METADATA_KEYS = ['app.sprint', 'cf.x', 'order', '$weird', 'a%2Eb', '100%', 'ключ.ü'];

const ids = (docs: Doc[]) => docs.map((d) => d._id);
const sorted = (docs: Doc[]) => ids(docs).sort();
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The one `DocumentStore` contract suite (docs/architecture.md §2, §10), run against every backend:
 * `makeStore` is called before each test and the store is closed after it. Every test works in
 * collections with a fresh random prefix, so one database can serve the whole run.
 */
export function storeContract(label: string, makeStore: () => Promise<DocumentStore>): void {
  describe(`DocumentStore contract: ${label}`, () => {
    let store: DocumentStore;
    let prefix: string;
    const coll = <T extends Doc = Doc>(name = 'items'): Collection<T> => store.collection<T>(`${prefix}_${name}`);
    const seed = async () => {
      await coll().insertMany(ITEMS);
      return coll();
    };

    beforeEach(async () => {
      store = await makeStore();
      prefix = `c${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;
    });
    afterEach(async () => {
      await store.close();
    });

    describe('CRUD', () => {
      it('inserts, reads, updates and deletes one document', async () => {
        const c = coll();
        await c.insertOne({ _id: 't1', title: 'one', tags: [] });
        expect(await c.findOne({ _id: 't1' })).toEqual({ _id: 't1', title: 'one', tags: [] });
        expect(await c.updateOne({ _id: 't1' }, { $set: { title: 'uno' } })).toEqual({ matchedCount: 1, modifiedCount: 1 });
        expect((await c.findOne({ _id: 't1' }))?.title).toBe('uno');
        expect(await c.deleteOne({ _id: 't1' })).toEqual({ deletedCount: 1 });
        expect(await c.findOne({ _id: 't1' })).toBeNull();
        expect(await c.deleteOne({ _id: 't1' })).toEqual({ deletedCount: 0 });
      });

      it('counts a matched but unchanged document as not modified', async () => {
        const c = await seed();
        expect(await c.updateOne({ _id: 'a' }, { $set: { status: 'todo' } })).toEqual({ matchedCount: 1, modifiedCount: 0 });
        expect(await c.updateOne({ _id: 'zz' }, { $set: { status: 'todo' } })).toEqual({ matchedCount: 0, modifiedCount: 0 });
      });

      it('updateMany and deleteMany report matched, modified and deleted counts', async () => {
        const c = await seed();
        expect(await c.updateMany({}, { $addToSet: { tags: 'x' } })).toEqual({ matchedCount: 4, modifiedCount: 2 });
        expect(sorted(await c.find({ tags: 'x' }))).toEqual(['a', 'b', 'c', 'd']);
        expect(await c.deleteMany({ status: 'todo' })).toEqual({ deletedCount: 2 });
        expect(sorted(await c.find({}))).toEqual(['b', 'c']);
      });

      it('countDocuments counts matches', async () => {
        const c = await seed();
        expect(await c.countDocuments({ status: 'todo' })).toBe(2);
        expect(await c.countDocuments({})).toBe(4);
        expect(await c.countDocuments({ status: 'nope' })).toBe(0);
      });

      it('keeps what is stored: changing an inserted object, or trying to change a returned one, changes nothing stored', async () => {
        const c = coll();
        const doc = { _id: 'k', title: 'kept', tags: ['a'], metadata: { order: 1 } };
        await c.insertOne(doc);
        doc.tags.push('mutated');
        doc.metadata.order = 99;
        // Returned documents are read-only (port.ts): MongoDB hands out copies, the embedded store
        // its frozen stored documents, where a change throws. Neither reaches the store.
        const attempt = (change: () => void) => {
          try {
            change();
          } catch (e) {
            expect(e).toBeInstanceOf(TypeError);
          }
        };
        const read = (await c.findOne({ _id: 'k' }))!;
        attempt(() => (read.tags as string[]).push('mutated'));
        attempt(() => ((read.metadata as Record<string, unknown>).order = 42));
        const [listed] = await c.find({});
        attempt(() => (listed!.title = 'changed'));
        const updated = (await c.findOneAndUpdate({ _id: 'k' }, { $set: { title: 'kept' } }, { returnDocument: 'after' }))!;
        attempt(() => (updated.tags as string[]).push('mutated'));
        expect(await c.findOne({ _id: 'k' })).toEqual({ _id: 'k', title: 'kept', tags: ['a'], metadata: { order: 1 } });
      });

      it('rejects a duplicate _id with CONFLICT and keeps the stored document', async () => {
        const c = await seed();
        const err = await rejection(c.insertOne({ _id: 'a', title: 'other' }));
        expect(err.code).toBe('CONFLICT');
        expect((await c.findOne({ _id: 'a' }))?.title).toBe('Alpha task');
      });
    });

    describe('filters', () => {
      it.each(FILTER_CASES)('%s', async (_name, filter, expected) => {
        const c = await seed();
        expect(sorted(await c.find(filter))).toEqual(expected);
        expect(await c.countDocuments(filter)).toBe(expected.length);
      });
    });

    describe('updates', () => {
      it('$set on nested and escaped metadata paths, $unset', async () => {
        const c = await seed();
        await c.updateOne({ _id: 'b' }, { $set: { status: 'done', [SPRINT]: 's9', [metadataPath('cf.priority')]: 1 } });
        await c.updateOne({ _id: 'b' }, { $unset: { 'metadata.order': '' } });
        const b = (await c.findOne({ _id: 'b' }))!;
        expect(b.status).toBe('done');
        expect(decodeMetadata(b.metadata)).toEqual({ 'app.sprint': 's9', 'cf.priority': 1 });
      });

      it('$addToSet (plain and $each) adds no duplicates; $pull (value and $in); $push', async () => {
        const c = await seed();
        await c.updateOne({ _id: 'a' }, { $addToSet: { tags: 'y' } });
        await c.updateOne({ _id: 'a' }, { $addToSet: { tags: { $each: ['x', 'z', 'w'] } } });
        expect((await c.findOne({ _id: 'a' }))?.tags).toEqual(['x', 'y', 'z', 'w']);
        await c.updateOne({ _id: 'a' }, { $pull: { tags: 'y' } });
        await c.updateOne({ _id: 'a' }, { $pull: { tags: { $in: ['z', 'nope'] } } });
        await c.updateOne({ _id: 'a' }, { $push: { tags: 'x' } });
        expect((await c.findOne({ _id: 'a' }))?.tags).toEqual(['x', 'w', 'x']);
      });

      it('$inc on an existing and a missing field', async () => {
        const c = await seed();
        await c.updateMany({ _id: { $in: ['a', 'd'] } }, { $inc: { n: 5 } });
        expect((await c.find({ _id: { $in: ['a', 'd'] } }, { sort: { _id: 1 } })).map((d) => d.n)).toEqual([6, 5]);
      });

      it('updateOne with upsert inserts filter equalities plus the update, with a string _id', async () => {
        const c = coll();
        const first = await c.updateOne({ key: 'k1', [SPRINT]: 's1' }, { $set: { v: 1 } }, { upsert: true });
        expect(first.matchedCount).toBe(0);
        expect(typeof first.upsertedId).toBe('string');
        const doc = await c.findOne({ _id: first.upsertedId! });
        expect(doc).toEqual({ _id: first.upsertedId, key: 'k1', v: 1, metadata: encodeMetadata({ 'app.sprint': 's1' }) });
        expect(await c.updateOne({ key: 'k1' }, { $set: { v: 1 } }, { upsert: true })).toEqual({ matchedCount: 1, modifiedCount: 0 });
        const pinned = await c.updateOne({ _id: 'mine' }, { $set: { v: 2 } }, { upsert: true });
        expect(pinned.upsertedId).toBe('mine');
        expect(await c.countDocuments({})).toBe(2);
      });
    });

    describe('sort, skip, limit', () => {
      it.each(SORT_CASES)('%s', async (_name, filter, sort, expected) => {
        const c = await seed();
        expect(ids(await c.find(filter, { sort }))).toEqual(expected);
      });

      it('skip and limit page through a sorted result without overlap or gaps', async () => {
        const c = await seed();
        const sort: Sort = { status: 1, _id: 1 };
        const all = ids(await c.find({}, { sort }));
        const pages = [
          ...ids(await c.find({}, { sort, skip: 0, limit: 3 })),
          ...ids(await c.find({}, { sort, skip: 3, limit: 3 })),
        ];
        expect(pages).toEqual(all);
        expect(ids(await c.find({}, { sort: { _id: 1 }, skip: 1, limit: 2 }))).toEqual(['b', 'c']);
        expect(ids(await c.find({}, { sort: { _id: 1 }, skip: 10 }))).toEqual([]);
      });

      it('findOne takes the first document of the sort', async () => {
        const c = await seed();
        expect((await c.findOne({ status: 'todo' }, { sort: { _id: -1 } }))?._id).toBe('d');
      });
    });

    describe('projection', () => {
      it('inclusion keeps _id unless excluded; exclusion drops fields; nested paths', async () => {
        const c = await seed();
        expect(await c.findOne({ _id: 'a' }, { projection: { title: 1 } })).toEqual({ _id: 'a', title: 'Alpha task' });
        expect(await c.findOne({ _id: 'a' }, { projection: { title: 1, _id: 0 } })).toEqual({ title: 'Alpha task' });
        expect(await c.findOne({ _id: 'a' }, { projection: { 'metadata.order': 1 } })).toEqual({ _id: 'a', metadata: { order: 2 } });
        const lean = await c.find({ _id: 'b' }, { projection: { tags: 0, metadata: 0, members: 0 } });
        expect(lean).toEqual([{ _id: 'b', title: 'beta', status: 'doing', n: 2, created_at: '2024-02-01T00:00:00.000Z' }]);
      });
    });

    describe('findOneAndUpdate', () => {
      it('returns the document after the update by default, before on request, null without a match', async () => {
        const c = await seed();
        expect((await c.findOneAndUpdate({ _id: 'a' }, { $set: { status: 'doing' } }))?.status).toBe('doing');
        const before = await c.findOneAndUpdate({ _id: 'a' }, { $set: { status: 'done' } }, { returnDocument: 'before' });
        expect(before?.status).toBe('doing');
        expect((await c.findOne({ _id: 'a' }))?.status).toBe('done');
        expect(await c.findOneAndUpdate({ _id: 'zz' }, { $set: { status: 'x' } })).toBeNull();
        expect(await c.countDocuments({})).toBe(4);
      });

      it('updates the first match in sort order when given one, in and out of a transaction', async () => {
        const c = await seed();
        const all = (await c.find({}, { sort: { n: -1 } })).map((d) => d._id);
        expect((await c.findOneAndUpdate({}, { $set: { picked: 1 } }, { sort: { n: -1 } }))?._id).toBe(all[0]);
        const second = await store.withTransaction((session) => c.findOneAndUpdate({ picked: { $exists: false } }, { $set: { picked: 2 } }, { sort: { n: -1 }, session }));
        expect(second?._id).toBe(all[1]);
        expect((await c.find({ picked: { $exists: true } }, { sort: { n: -1 } })).map((d) => d._id)).toEqual(all.slice(0, 2));
      });

      it('acts only when the filter still matches (a conditional write)', async () => {
        const c = await seed();
        expect(await c.findOneAndUpdate({ _id: 'a', status: 'doing' }, { $set: { status: 'done' } })).toBeNull();
        expect((await c.findOne({ _id: 'a' }))?.status).toBe('todo');
      });

      it('upserts: after returns the new document, before returns null', async () => {
        const c = coll();
        const after = await c.findOneAndUpdate({ _id: 'n1', status: 'todo' }, { $set: { title: 'N' } }, { upsert: true });
        expect(after).toEqual({ _id: 'n1', status: 'todo', title: 'N' });
        expect(await c.findOneAndUpdate({ _id: 'n2' }, { $set: { title: 'M' } }, { upsert: true, returnDocument: 'before' })).toBeNull();
        expect((await c.findOne({ _id: 'n2' }))?.title).toBe('M');
      });

      it('applies a projection to the returned document', async () => {
        const c = await seed();
        const r = await c.findOneAndUpdate({ _id: 'b' }, { $inc: { n: 1 } }, { projection: { n: 1, _id: 0 } });
        expect(r).toEqual({ n: 3 });
      });
    });

    describe('bulkWrite and insertMany', () => {
      it('applies ordered mixed operations and reports counts', async () => {
        const c = await seed();
        const r = await c.bulkWrite([
          { insertOne: { document: { _id: 'e', status: 'todo', tags: [] } } },
          { updateOne: { filter: { _id: 'a' }, update: { $set: { status: 'doing' } } } },
          { updateMany: { filter: { status: 'todo' }, update: { $set: { flagged: true } } } },
          { deleteOne: { filter: { _id: 'b' } } },
          { updateOne: { filter: { _id: 'f' }, update: { $set: { status: 'new' } }, upsert: true } },
        ]);
        expect(r).toEqual({ insertedCount: 1, matchedCount: 3, modifiedCount: 3, deletedCount: 1 });
        expect(sorted(await c.find({ flagged: true }))).toEqual(['d', 'e']);
        expect(sorted(await c.find({}))).toEqual(['a', 'c', 'd', 'e', 'f']);
      });

      it('stops at the first failing operation, keeping the ones before it (ordered)', async () => {
        const c = await seed();
        const err = await rejection(
          c.bulkWrite([
            { insertOne: { document: { _id: 'x1' } } },
            { insertOne: { document: { _id: 'a' } } },
            { insertOne: { document: { _id: 'x2' } } },
          ]),
        );
        expect(err.code).toBe('CONFLICT');
        expect(sorted(await c.find({ _id: { $in: ['x1', 'x2'] } }))).toEqual(['x1']);
        const err2 = await rejection(c.insertMany([{ _id: 'y1' }, { _id: 'b' }, { _id: 'y2' }]));
        expect(err2.code).toBe('CONFLICT');
        expect(sorted(await c.find({ _id: { $in: ['y1', 'y2'] } }))).toEqual(['y1']);
      });
    });

    describe('indexes', () => {
      it('enforces a unique index with CONFLICT on insert and update; accepts wildcard keys; is idempotent', async () => {
        const users = coll('users');
        const specs: IndexSpec[] = [
          { collection: users.name, keys: { username: 1 }, unique: true },
          { collection: coll().name, keys: { 'metadata.$**': 1 } },
          { collection: coll().name, keys: { created_by: 1, status: 1 } },
        ];
        await store.ensureIndexes(specs);
        await store.ensureIndexes(specs);
        await users.insertOne({ _id: 'u1', username: 'alice' });
        await users.insertOne({ _id: 'u2', username: 'bob' });
        const dup = await rejection(users.insertOne({ _id: 'u3', username: 'alice' }));
        expect(dup.code).toBe('CONFLICT');
        expect((await rejection(users.updateOne({ _id: 'u2' }, { $set: { username: 'alice' } }))).code).toBe('CONFLICT');
        expect((await users.findOne({ _id: 'u2' }))?.username).toBe('bob');
        await users.deleteOne({ _id: 'u1' });
        await users.insertOne({ _id: 'u3', username: 'alice' });
        expect(await users.countDocuments({ username: 'alice' })).toBe(1);
      });

      it('a unique sparse index leaves out documents without its fields, and refuses a second one with them', async () => {
        const users = coll('users');
        await store.ensureIndexes([{ collection: users.name, keys: { 'oidc.iss': 1, 'oidc.sub': 1 }, unique: true, sparse: true, name: 'oidc_subject' }]);
        await users.insertMany([{ _id: 'l1', username: 'local1' }, { _id: 'l2', username: 'local2' }]);
        await users.insertOne({ _id: 'o1', oidc: { iss: 'https://idp', sub: 's1' } });
        await users.insertOne({ _id: 'o2', oidc: { iss: 'https://idp', sub: 's2' } });
        expect((await rejection(users.insertOne({ _id: 'o3', oidc: { iss: 'https://idp', sub: 's1' } }))).code).toBe('CONFLICT');
        expect(await users.countDocuments({})).toBe(4);
      });

      it('keeps a TTL index field as the ISO string it was given, and filters and updates on it as one', async () => {
        const c = coll('ttl');
        await store.ensureIndexes([{ collection: c.name, keys: { expires_at: 1 }, expireAfterSeconds: 0, name: `${c.name}_ttl` }]);
        const soon = '2999-01-01T00:00:00.000Z';
        const later = '2999-06-01T00:00:00.000Z';
        await c.insertOne({ _id: 'k1', expires_at: soon, state: 'running' });
        await c.insertMany([{ _id: 'k2', expires_at: later }]);
        expect(await c.findOne({ _id: 'k1' })).toEqual({ _id: 'k1', expires_at: soon, state: 'running' });
        expect(sorted(await c.find({ expires_at: { $lt: later } }))).toEqual(['k1']);
        expect((await c.updateOne({ _id: 'k1', expires_at: soon }, { $set: { state: 'done', expires_at: later } })).matchedCount).toBe(1);
        expect(await c.findOneAndUpdate({ _id: 'k1', expires_at: later }, { $set: { n: 1 } })).toEqual({ _id: 'k1', expires_at: later, state: 'done', n: 1 });
        expect((await c.deleteMany({ expires_at: { $gte: later } })).deletedCount).toBe(2);
      });

      it('gives the same results with indexes as without', async () => {
        await store.ensureIndexes(['status', 'tags', 'members.user_id', SPRINT].map((f): IndexSpec => ({ collection: coll().name, keys: { [f]: 1 } })));
        const c = await seed();
        for (const [, filter, expected] of FILTER_CASES) expect(sorted(await c.find(filter)), JSON.stringify(filter)).toEqual(expected);
      });
    });

    describe('transactions', () => {
      it('commits every write of the transaction and returns what fn returned', async () => {
        const c = await seed();
        const result = await store.withTransaction(async (session) => {
          await c.updateOne({ _id: 'a' }, { $set: { status: 'done' } }, { session });
          await coll('other').insertOne({ _id: 'o1', ref: 'a' }, { session });
          await c.deleteOne({ _id: 'b' }, { session });
          return 'ok';
        });
        expect(result).toBe('ok');
        expect((await c.findOne({ _id: 'a' }))?.status).toBe('done');
        expect(await coll('other').findOne({ _id: 'o1' })).toEqual({ _id: 'o1', ref: 'a' });
        expect(await c.findOne({ _id: 'b' })).toBeNull();
      });

      it('aborts when fn throws: the error is rethrown and nothing is visible', async () => {
        const c = await seed();
        const boom = new Error('boom');
        await expect(
          store.withTransaction(async (session) => {
            await c.updateOne({ _id: 'a' }, { $set: { status: 'done' } }, { session });
            await coll('other').insertOne({ _id: 'o1' }, { session });
            await c.deleteOne({ _id: 'b' }, { session });
            throw boom;
          }),
        ).rejects.toBe(boom);
        expect((await c.findOne({ _id: 'a' }))?.status).toBe('todo');
        expect(await coll('other').countDocuments({})).toBe(0);
        expect(await c.countDocuments({})).toBe(4);
      });

      it('a failing write inside aborts the whole transaction', async () => {
        const c = await seed();
        const err = await rejection(
          store.withTransaction(async (session) => {
            await c.updateOne({ _id: 'a' }, { $set: { status: 'done' } }, { session });
            await c.insertOne({ _id: 'b' }, { session });
          }),
        );
        expect(err.code).toBe('CONFLICT');
        expect((await c.findOne({ _id: 'a' }))?.status).toBe('todo');
      });

      it('isolates: the session reads its own writes, other readers see none until commit', async () => {
        const c = await seed();
        await store.withTransaction(async (session) => {
          await c.updateOne({ _id: 'a' }, { $set: { status: 'done' } }, { session });
          await c.insertOne({ _id: 'e', status: 'done' }, { session });
          await c.deleteOne({ _id: 'c' }, { session });
          expect(sorted(await c.find({ status: 'done' }, { session }))).toEqual(['a', 'e']);
          expect(await c.countDocuments({}, { session })).toBe(4);
          expect(ids(await c.find({}, { session, sort: { _id: -1 }, limit: 2 }))).toEqual(['e', 'd']);
          expect(sorted(await c.find({ status: 'done' }))).toEqual(['c']);
          expect(await c.findOne({ _id: 'e' })).toBeNull();
        });
        expect(sorted(await c.find({ status: 'done' }))).toEqual(['a', 'e']);
      });

      it('runs two concurrent read-modify-write transactions on one document without a lost update', async () => {
        const c = coll('counters');
        await c.insertOne({ _id: 'ctr', n: 0 });
        const increment = () =>
          store.withTransaction(async (session) => {
            const doc = await c.findOne({ _id: 'ctr' }, { session });
            await pause(20);
            await c.updateOne({ _id: 'ctr' }, { $set: { n: (doc!.n as number) + 1 } }, { session });
          });
        await Promise.all([increment(), increment()]);
        expect((await c.findOne({ _id: 'ctr' }))?.n).toBe(2);
      });

      it('a transaction kept from committing by another one holding its document gives up at TRANSACTION_DEADLINE_MS: 409 or 503, nothing written', async () => {
        const c = coll('held');
        await c.insertOne({ _id: 'x', n: 0 });
        let release!: () => void;
        const gate = new Promise<void>((r) => (release = r));
        let wrote!: () => void;
        const firstWrote = new Promise<void>((r) => (wrote = r));
        const first = store.withTransaction(async (session) => {
          await c.updateOne({ _id: 'x' }, { $inc: { n: 1 } }, { session });
          wrote();
          await gate;
        });
        await firstWrote;
        const started = Date.now();
        const err = await rejection(
          store.withTransaction(async (session) => {
            await c.updateOne({ _id: 'x' }, { $set: { by: 'second' } }, { session });
          }),
        );
        const took = Date.now() - started;
        release();
        await first;
        expect(['CONFLICT', 'STORE_UNAVAILABLE']).toContain(err.code);
        // gave up at the deadline (MongoDB: the last backoff may end up to 500 ms before it), not at the driver's 120 s
        expect(took).toBeGreaterThanOrEqual(TRANSACTION_DEADLINE_MS - 600);
        expect(took).toBeLessThan(TRANSACTION_DEADLINE_MS + 2_000);
        expect(await c.findOne({ _id: 'x' })).toEqual({ _id: 'x', n: 1 });
      }, TRANSACTION_DEADLINE_MS + 10_000);
    });

    describe('metadata key escaping', () => {
      it('round-trips awkward keys through the store and finds each by its escaped path', async () => {
        const c = coll();
        const meta = Object.fromEntries(METADATA_KEYS.map((k, i) => [k, `v${i}`]));
        await c.insertOne({ _id: 'm', metadata: encodeMetadata(meta) });
        expect(decodeMetadata((await c.findOne({ _id: 'm' }))?.metadata)).toEqual(meta);
        for (const [i, key] of METADATA_KEYS.entries()) {
          expect(ids(await c.find({ [metadataPath(key)]: `v${i}` })), key).toEqual(['m']);
        }
        await c.updateOne({ _id: 'm' }, { $set: { [metadataPath('cf.x')]: 'new' }, $unset: { [metadataPath('$weird')]: '' } });
        const after = decodeMetadata((await c.findOne({ _id: 'm' }))?.metadata);
        expect(after['cf.x']).toBe('new');
        expect(after).not.toHaveProperty('$weird');
        expect(after['ключ.ü']).toBe(`v${METADATA_KEYS.indexOf('ключ.ü')}`);
      });
    });

    describe('what the store refuses (MongoDB\'s rules, docs/store.md "What the store refuses")', () => {
      /** Asserts a 400 naming stored field `field` (a JSON pointer). */
      const refusedField = async (p: Promise<unknown>, field: string) => {
        const err = await rejection(p);
        expect(err.code, err.message).toBe('VALIDATION_FAILED');
        expect(err.status).toBe(400);
        expect(err.validationErrors?.map((v) => v.field)).toEqual([field]);
        return err;
      };

      it('refuses a NUL byte in a field name at any depth, on insert and in what an update stores', async () => {
        const c = await seed();
        await refusedField(c.insertOne({ _id: 'n1', 'a\u0000b': 1 }), '/a\u0000b');
        await refusedField(c.insertOne({ _id: 'n2', metadata: { deep: { 'x\u0000': 1 } } }), '/metadata/deep/x\u0000');
        await refusedField(c.insertOne({ _id: 'n3', members: [{ 'u\u0000': 1 }] }), '/members/u\u0000');
        await refusedField(c.insertMany([{ _id: 'n4', list: [[{ '\u0000': 1 }]] }]), '/list/\u0000');
        await refusedField(c.updateOne({ _id: 'a' }, { $set: { 'metadata.k\u0000': 1 } }), '/metadata/k\u0000');
        await refusedField(c.updateOne({ _id: 'a' }, { $set: { metadata: { ok: { 'k\u0000': 1 } } } }), '/metadata/ok/k\u0000');
        await refusedField(c.updateOne({ _id: 'a' }, { $push: { members: { 'k\u0000': 1 } } }), '/members/k\u0000');
        await refusedField(c.findOneAndUpdate({ _id: 'new' }, { $set: { 'k\u0000': 1 } }, { upsert: true }), '/k\u0000');
        await refusedField(c.bulkWrite([{ insertOne: { document: { _id: 'n5', 'k\u0000': 1 } } }]), '/k\u0000');
        expect(sorted(await c.find({}))).toEqual(['a', 'b', 'c', 'd']);
        expect(await c.findOne({ _id: 'a' })).toEqual(ITEMS[0]);
      });

      it('refuses an update writing a top-level field name starting with $, and stores $-prefixed names inside documents as MongoDB does', async () => {
        const c = await seed();
        await refusedField(c.updateOne({ _id: 'a' }, { $set: { $top: 1 } }), '/$top');
        await refusedField(c.updateOne({ _id: 'a' }, { $inc: { '$n.x': 1 } }), '/$n/x');
        await refusedField(c.updateOne({ _id: 'zz' }, { $set: { $top: 1 } }, { upsert: true }), '/$top');
        await refusedField(c.bulkWrite([{ updateOne: { filter: { _id: 'a' }, update: { $set: { $top: 1 } } } }]), '/$top');
        expect(sorted(await c.find({}))).toEqual(['a', 'b', 'c', 'd']);
        expect(await c.findOne({ _id: 'a' })).toEqual(ITEMS[0]);
        // MongoDB ≥ 5.0 stores a $-prefixed name inside an inserted document or a sub-document value
        await c.insertOne({ _id: 'd1', $weird: 1, nested: { a: { $inc: 1 } } });
        expect(await c.findOne({ _id: 'd1' })).toEqual({ _id: 'd1', $weird: 1, nested: { a: { $inc: 1 } } });
        await c.updateOne({ _id: 'a' }, { $set: { 'metadata.deep': { $x: [{ $y: 1 }] } } });
        expect(((await c.findOne({ _id: 'a' }))?.metadata as Record<string, unknown>).deep).toEqual({ $x: [{ $y: 1 }] });
        // an escaped metadata key (a leading $ stored as %24) is an ordinary field name
        await c.updateOne({ _id: 'a' }, { $set: { [metadataPath('$ok')]: 1 } });
        expect(decodeMetadata((await c.findOne({ _id: 'a' }))?.metadata)['$ok']).toBe(1);
      });

      it('refuses $inc of a stored value that is not a number, or by a non-number, changing nothing', async () => {
        const c = await seed();
        await c.insertOne({ _id: 'i', s: '3', nul: null, obj: { n: 1 }, arr: [1], metadata: { [metadataPath('app.carried').slice(9)]: 'x' } });
        for (const field of ['s', 'nul', 'obj', 'arr', 'title']) {
          await refusedField(c.updateOne({ _id: field === 'title' ? 'a' : 'i' }, { $inc: { [field]: 1 } }), `/${field}`);
        }
        const carried = metadataPath('app.carried');
        await refusedField(c.updateOne({ _id: 'i' }, { $inc: { [carried]: 1 } }), `/${carried.replace('.', '/')}`);
        await refusedField(c.updateOne({ _id: 'a' }, { $inc: { n: '1' as unknown as number } }), '/n');
        await refusedField(c.findOneAndUpdate({ _id: 'a' }, { $inc: { title: 1 }, $set: { status: 'done' } }), '/title');
        expect((await c.findOne({ _id: 'i' }))?.s).toBe('3');
        expect(await c.findOne({ _id: 'a' })).toEqual(ITEMS[0]);
        // a refused write inside a transaction aborts the transaction
        const err = await rejection(
          store.withTransaction(async (session) => {
            await c.updateOne({ _id: 'b' }, { $set: { status: 'done' } }, { session });
            await c.updateOne({ _id: 'i' }, { $inc: { s: 1 } }, { session });
          }),
        );
        expect(err.code).toBe('VALIDATION_FAILED');
        expect((await c.findOne({ _id: 'b' }))?.status).toBe('doing');
      });

      it('refuses a document over 16 MiB of BSON with PAYLOAD_TOO_LARGE: an insert, and an update growing one', async () => {
        const c = coll();
        const mib = (n: number) => 'x'.repeat(n * 1024 * 1024);
        const big = await rejection(c.insertOne({ _id: 'big', text: mib(17) }));
        expect([big.code, big.status]).toEqual(['PAYLOAD_TOO_LARGE', 413]);
        await c.insertOne({ _id: 'half', text: mib(9) });
        const grown = await rejection(c.updateOne({ _id: 'half' }, { $set: { more: mib(8) } }));
        expect([grown.code, grown.status]).toEqual(['PAYLOAD_TOO_LARGE', 413]);
        expect(await c.findOne({ _id: 'half' }, { projection: { more: 1 } })).toEqual({ _id: 'half' });
        expect(await c.findOne({ _id: 'big' })).toBeNull();
        // under the limit is fine
        await c.updateOne({ _id: 'half' }, { $set: { more: mib(6) } });
        expect(((await c.findOne({ _id: 'half' }))?.more as string).length).toBe(6 * 1024 * 1024);
      });
    });

    describe('characters outside the Basic Multilingual Plane (compared by code point, as MongoDB does)', () => {
      // U+1D49C and U+1F600 take two UTF-16 units; U+E000 and U+FFFD one, and sort before them by code point
      const ASTRAL: Doc[] = [
        { _id: 'script', s: '\u{1D49C}', t: '\u{1D49C}b' },
        { _id: 'emoji', s: '\u{1F600}', t: '\u{1F600}b' },
        { _id: 'private', s: '\uE000', t: '\uE000b' },
        { _id: 'replacement', s: '\uFFFD', t: '\uFFFDb' },
        { _id: 'latin', s: '\u00E9', t: '\u00E9b' },
        { _id: 'ascii', s: 'z', t: 'zb' },
        { _id: 'two', s: 'zz', t: 'zzb' },
      ];
      const BY_CODE_POINT = ['ascii', 'two', 'latin', 'private', 'replacement', 'script', 'emoji'];

      it("LIKE's _ matches one character, one or two UTF-16 units long; % any run", async () => {
        const c = coll();
        await c.insertMany(ASTRAL);
        expect(sorted(await c.find({ t: { $regex: likeToRegex('_b') } }))).toEqual(['ascii', 'emoji', 'latin', 'private', 'replacement', 'script']);
        expect(sorted(await c.find({ t: { $regex: likeToRegex('__b') } }))).toEqual(['two']);
        expect(sorted(await c.find({ t: { $not: { $regex: likeToRegex('_b') } } }))).toEqual(['two']);
        expect(sorted(await c.find({ t: { $regex: likeToRegex('%b'), $options: 'i' } }))).toEqual(sorted(ASTRAL.map((d) => ({ _id: d._id }) as Doc)));
        expect(sorted(await c.find({ $or: [{ t: { $regex: likeToRegex('\u{1F600}_') } }, { t: { $regex: likeToRegex('_\u{1D49C}') } }] }))).toEqual(['emoji']);
      });

      it('ORDER BY a string puts characters past U+FFFF after U+E000–U+FFFF, with and without an index', async () => {
        const c = coll();
        await c.insertMany(ASTRAL);
        expect(ids(await c.find({}, { sort: { s: 1 } }))).toEqual(BY_CODE_POINT);
        expect(ids(await c.find({}, { sort: { s: -1 } }))).toEqual([...BY_CODE_POINT].reverse());
        expect(ids(await c.find({}, { sort: { s: 1, _id: 1 }, limit: 5 }))).toEqual(BY_CODE_POINT.slice(0, 5));
        await store.ensureIndexes([{ collection: c.name, keys: { s: 1 } }]);
        expect(ids(await c.find({}, { sort: { s: 1, _id: 1 }, limit: 6 }))).toEqual(BY_CODE_POINT.slice(0, 6));
        expect(ids(await c.find({}, { sort: { s: -1, _id: 1 }, skip: 1, limit: 3 }))).toEqual([...BY_CODE_POINT].reverse().slice(1, 4));
      });
    });

    describe('round trips, ping and close', () => {
      it('counts one round trip per collection call, bulk write and transaction commit', async () => {
        const c = coll();
        const at = store.stats.roundTrips;
        await c.find({});
        expect(store.stats.roundTrips).toBe(at + 1);
        await c.bulkWrite([{ insertOne: { document: { _id: 'r1' } } }, { insertOne: { document: { _id: 'r2' } } }]);
        expect(store.stats.roundTrips).toBe(at + 2);
        await store.withTransaction(async (session) => {
          await c.updateOne({ _id: 'r1' }, { $set: { v: 1 } }, { session });
          await c.deleteOne({ _id: 'r2' }, { session });
        });
        expect(store.stats.roundTrips).toBe(at + 5);
      });

      it('ping resolves while open; after close every call rejects with STORE_UNAVAILABLE', async () => {
        const c = coll();
        await store.ping();
        await store.close();
        await store.close();
        for (const p of [
          c.find({}),
          c.insertOne({ _id: 'z' }),
          c.updateOne({}, { $set: { v: 1 } }),
          store.withTransaction(async () => 1),
          store.ensureIndexes([]),
          store.ping(),
        ]) {
          expect((await rejection(p)).code).toBe('STORE_UNAVAILABLE');
        }
      });
    });
  });
}
