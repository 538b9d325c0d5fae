import { describe, expect, it } from 'vitest';
import { AppError } from '@app/shared/errors';
import { inRequest, type RequestScope } from '@app/shared/util';
import { EmbeddedStore, type Doc, type Filter, type Sort } from '@app/shared/store';

/**
 * Long reads and other users' requests (docs/store.md): outside a transaction, a read that runs
 * past its slice goes on in steps with a turn of the event loop between them, so a cheap request
 * started while it runs is answered before it ends; its answer is the one the same read gives at
 * once; and the read time limit counts the request's whole time.
 */

const N = 40_000;
/** Descriptions long enough that testing a pattern against every one takes well over a slice. */
const description = (i: number) => `${'lorem ipsum dolor sit amet '.repeat(8)}${i % 7 === 0 ? 'needle' : 'hay'} ${(i * 7919) % N}`;

async function seeded(): Promise<EmbeddedStore> {
  const store = EmbeddedStore.memory();
  const docs = Array.from({ length: N }, (_, i) => ({ _id: `d${String(i).padStart(6, '0')}`, owner: 'u1', rank: (i * 31) % 101, description: description(i) }));
  await store.ensureIndexes([{ collection: 'tasks', keys: { owner: 1 } }, { collection: 'tasks', keys: { rank: 1 } }]);
  await store.collection('tasks').insertMany(docs);
  await store.collection('tasks').insertOne({ _id: 'other', owner: 'u2', rank: 1, description: 'mine' });
  // the first read fills the indexes and compiles the matcher
  await store.collection('tasks').countDocuments(negated);
  return store;
}

/** The first of two concurrent calls to finish. */
async function firstDone(slow: Promise<unknown>, cheap: () => Promise<unknown>): Promise<string[]> {
  const order: string[] = [];
  const a = slow.then(() => order.push('slow'));
  // the cheap call starts once the slow one has begun (after its first slice)
  await new Promise((r) => setImmediate(r));
  const b = cheap().then(() => order.push('cheap'));
  await Promise.all([a, b]);
  return order;
}

/** Tested against every description, backtracking over each: a read of it takes many slices. */
const negated: Filter = { owner: 'u1', description: { $not: { $regex: 'a.*b.*c.*z', $options: 'i' } } };

describe('reads in steps (embedded store)', () => {
  it('a scan, a sort and a count of every document let a cheap read started meanwhile finish first', async () => {
    const store = await seeded();
    const tasks = store.collection('tasks');
    const cheap = () => tasks.findOne({ _id: 'other' });
    expect(await firstDone(tasks.find(negated, { sort: { description: -1 }, limit: 200 }), cheap)).toEqual(['cheap', 'slow']);
    expect(await firstDone(tasks.countDocuments(negated), cheap)).toEqual(['cheap', 'slow']);
    expect(await firstDone(tasks.find(negated), cheap)).toEqual(['cheap', 'slow']);
    await store.close();
  });

  it('answers exactly what the same read answers at once (inside a transaction, which never yields)', async () => {
    const store = await seeded();
    const tasks = store.collection('tasks');
    const cases: Array<[Filter, { sort?: Sort; skip?: number; limit?: number }]> = [
      [negated, { sort: { description: -1 }, limit: 200 }],
      [negated, { sort: { description: 1 }, skip: 900, limit: 100 }],
      [negated, { sort: { rank: -1 }, skip: 5000, limit: 50 }],
      [negated, { sort: { rank: 1, _id: -1 }, skip: 17, limit: 30 }],
      [{ description: { $regex: 'needle' } }, { sort: { rank: 1, description: -1 }, limit: 40 }],
      [negated, { skip: 39_000, limit: 10 }],
    ];
    for (const [filter, opts] of cases) {
      const stepped = (await tasks.find(filter, opts)).map((d) => d._id);
      const atOnce = await store.withTransaction(async (session) => (await tasks.find(filter, { ...opts, session })).map((d) => d._id));
      expect(stepped).toEqual(atOnce);
      expect(stepped.length).toBeGreaterThan(0);
    }
    const count = await tasks.countDocuments(negated);
    expect(count).toBe(N);
    expect(await store.withTransaction((session) => tasks.countDocuments(negated, { session }))).toBe(count);
    await store.close();
  });

  it('sees each document once while writes land between its steps', async () => {
    const store = await seeded();
    const tasks = store.collection('tasks');
    const read = tasks.find(negated);
    // writes between the steps: one document changed, one deleted, one added
    await new Promise((r) => setImmediate(r));
    await tasks.updateOne({ _id: 'd039999' }, { $set: { rank: 5 } });
    await tasks.deleteOne({ _id: 'd039998' });
    await tasks.insertOne({ _id: 'late', owner: 'u1', rank: 2, description: 'late' });
    const ids = (await read).map((d: Doc) => d._id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toContain('d039999');
    expect(ids).not.toContain('d039998');
    await store.close();
  });

  it("the read time limit counts the request's whole time: its reads together stop with QUERY_TIMEOUT, nothing after", async () => {
    const store = await seeded();
    const tasks = store.collection('tasks');
    const started = performance.now();
    await tasks.countDocuments(negated);
    const oneScan = performance.now() - started;
    // a request whose deadline lets about two scans run: every later read of it stops
    const scope: RequestScope = { grant: undefined, readDeadline: performance.now() + oneScan * 2.5, open: true, waitedMs: 0 };
    const outcome = await inRequest(scope, async () => {
      const answered: number[] = [];
      try {
        for (let i = 0; i < 6; i++) answered.push(await tasks.countDocuments(negated));
        return { answered, error: undefined };
      } catch (e) {
        return { answered, error: e };
      }
    });
    expect(outcome.answered.length).toBeGreaterThanOrEqual(1);
    expect(outcome.answered.length).toBeLessThan(6);
    expect(AppError.is(outcome.error) && [outcome.error.code, outcome.error.status]).toEqual(['QUERY_TIMEOUT', 503]);
    // once the request is answered, work it left running is no longer held to its deadline
    scope.open = false;
    expect(await inRequest(scope, () => tasks.countDocuments(negated))).toBe(N);
    await store.close();
  });

  it("two requests' reads in steps take turns, and each records the time it waited for the other's steps", async () => {
    const store = await seeded();
    const tasks = store.collection('tasks');
    const scopes: RequestScope[] = [0, 1].map(() => ({ grant: undefined, readDeadline: Infinity, open: true, waitedMs: 0 }));
    const started = performance.now();
    const counts = await Promise.all(scopes.map((scope) => inRequest(scope, () => tasks.countDocuments(negated))));
    const elapsed = performance.now() - started;
    expect(counts).toEqual([N, N]);
    for (const scope of scopes) {
      expect(scope.waitedMs).toBeGreaterThan(0);
      expect(scope.waitedMs).toBeLessThan(elapsed);
    }
    // together they waited about as long as the other one's steps ran: at least a third of the whole
    expect(scopes[0]!.waitedMs + scopes[1]!.waitedMs).toBeGreaterThan(elapsed / 3);
    await store.close();
  });
});
