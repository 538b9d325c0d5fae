import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { EmbeddedStore, type Doc } from '@app/shared/store';
import { eventually } from '@app/shared/testing';
import { SortIndex } from '../../src/store/embedded/sort-index.js';
import { sortDocs } from '../../src/store/embedded/values.js';

// A sort index of a large collection is built in steps, in the background (docs/store.md "Indexes
// and plans"): whatever the writes between its steps, once ready it walks the documents in the
// order sorting them gives.

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const value = fc.oneof({ weight: 6, arbitrary: fc.integer({ min: 0, max: 9 }) }, { weight: 1, arbitrary: fc.constantFrom<unknown>(undefined, null, 'x', [3, 1]) });
const op = fc.oneof(
  fc.record({ kind: fc.constant('step' as const) }),
  fc.record({ kind: fc.constant('set' as const), at: fc.nat(), n: value }),
  fc.record({ kind: fc.constant('delete' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('insert' as const), n: value }),
);

// more steps than writes: re-sorts complete between the writes that would force one at once
const stepHeavy = fc.oneof({ weight: 2, arbitrary: fc.record({ kind: fc.constant('step' as const) }) }, { weight: 3, arbitrary: op });

describe('sort index built in steps', () => {
  it('walks in sort order once ready, through writes, inserts and deletes between its steps', () => {
    fc.assert(
      fc.property(fc.array(value, { minLength: 0, maxLength: 60 }), fc.array(op, { maxLength: 80 }), fc.integer({ min: 1, max: 9 }), (initial, ops, stepSize) => {
        const docs: Array<{ doc: Doc } | undefined> = initial.map((n, i) => ({ doc: n === undefined ? { _id: `d${i}` } : { _id: `d${i}`, n } }));
        const index = new SortIndex('n', stepSize);
        index.beginSteps();
        const write = (slot: number, doc: Doc | null) => {
          docs[slot] = doc ? { doc } : undefined;
          index.write(slot, doc);
        };
        const check = () => {
          const live = docs.filter((e) => e !== undefined).map((e) => e.doc);
          for (const sort of [{ n: 1, _id: 1 }, { n: 1, _id: -1 }] as const) {
            const walked: string[] = [];
            index.walk(sort, (slot) => (walked.push(docs[slot]!.doc._id as string), true));
            expect(walked).toEqual(sortDocs(live, sort).map((d) => d._id));
          }
        };
        for (const o of ops) {
          if (o.kind === 'step') {
            if (!index.ready) index.buildStep(docs);
          } else if (o.kind === 'insert') {
            const slot = docs.length;
            write(slot, o.n === undefined ? { _id: `d${slot}` } : { _id: `d${slot}`, n: o.n });
          } else if (docs.length > 0) {
            const slot = o.at % docs.length;
            if (!docs[slot]) continue;
            if (o.kind === 'delete') write(slot, null);
            else write(slot, { _id: docs[slot]!.doc._id, ...(o.n === undefined ? {} : { n: o.n }) });
          }
          if (index.ready) check();
        }
        let guard = 0;
        while (!index.ready && guard++ < 10_000) index.buildStep(docs);
        expect(index.ready).toBe(true);
        check();
      }),
      { numRuns: 300 },
    );
  });

  it('re-sorts in steps after many writes, answering in sort order all along, however the steps and writes interleave', () => {
    let resorts = 0;
    fc.assert(
      fc.property(fc.array(value, { minLength: 100, maxLength: 300 }), fc.array(stepHeavy, { minLength: 200, maxLength: 600 }), fc.integer({ min: 10, max: 120 }), (initial, ops, stepSize) => {
        const docs: Array<{ doc: Doc } | undefined> = initial.map((n, i) => ({ doc: n === undefined ? { _id: `d${i}` } : { _id: `d${i}`, n } }));
        // a re-sort from 4 changed slots (1/64 of the base) in steps, at once from 1/16 of it
        const index = new SortIndex('n', stepSize, () => (resorts++, true), 4);
        for (const [slot, e] of docs.entries()) index.write(slot, e!.doc);
        const check = () => {
          const live = docs.filter((e) => e !== undefined).map((e) => e.doc);
          const walked: string[] = [];
          index.walk({ n: 1, _id: 1 }, (slot) => (walked.push(docs[slot]!.doc._id as string), true));
          expect(walked).toEqual(sortDocs(live, { n: 1, _id: 1 }).map((d) => d._id));
        };
        check(); // the first build (at once: no steps asked for)
        for (const o of ops) {
          if (o.kind === 'step') index.buildStep(docs);
          else if (o.kind === 'insert') {
            const slot = docs.length;
            const doc = o.n === undefined ? { _id: `d${slot}` } : { _id: `d${slot}`, n: o.n };
            docs[slot] = { doc };
            index.write(slot, doc);
          } else {
            const slot = o.at % docs.length;
            if (!docs[slot]) continue;
            const doc = o.kind === 'delete' ? null : { _id: docs[slot]!.doc._id, ...(o.n === undefined ? {} : { n: o.n }) };
            docs[slot] = doc ? { doc } : undefined;
            index.write(slot, doc);
          }
          check();
        }
        let guard = 0;
        while (!index.buildStep(docs) && guard++ < 10_000);
        check();
      }),
      { numRuns: 100 },
    );
    expect(resorts).toBeGreaterThan(500); // re-sorts in steps were started (about 13 a run), and finished or overtaken
  });

  it('is built in the background for a large collection: sorted reads are answered meanwhile, and by the walk once it is ready', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'store-sort-steps-'));
    dirs.push(dir);
    // from 500 documents on, sort indexes are built in steps (1M tasks in production: DEFERRED_INDEX_MIN_DOCS)
    await using store = await EmbeddedStore.open({ dir, deferIndexesFrom: 500 });
    await store.ensureIndexes([{ collection: 'tasks', keys: { order: 1 } }]);
    const tasks = store.collection('tasks');
    const docs = Array.from({ length: 2_000 }, (_, i) => ({ _id: `t${String(i).padStart(4, '0')}`, order: (i * 7_919) % 2_000 }));
    await tasks.insertMany(docs);
    const page = async () => {
      const before = store.stats.docsExamined;
      const found = await tasks.find({}, { sort: { order: 1, _id: 1 }, limit: 5, projection: { _id: 1 } });
      return { ids: found.map((d) => d._id), examined: store.stats.docsExamined - before };
    };
    const expected = (all: typeof docs) => [...all].sort((a, b) => a.order - b.order || (a._id < b._id ? -1 : 1)).slice(0, 5).map((d) => d._id);
    const first = await page(); // starts the build; answered by sorting every document
    expect(first.ids).toEqual(expected(docs));
    expect(first.examined).toBe(2_000);
    await tasks.updateOne({ _id: 't1999' }, { $set: { order: -5 } }); // written while the build may still run
    const moved = docs.map((d) => (d._id === 't1999' ? { ...d, order: -5 } : d));
    // the build's steps run on the event loop's idle turns: wait until a page walks the index
    const later = await eventually('the sort index built', () => page(), (p) => p.examined < 20); // the walk: the page's documents only
    expect(later.ids).toEqual(expected(moved));
  });
});
