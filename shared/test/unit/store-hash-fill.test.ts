import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { EmbeddedStore, type Doc } from '@app/shared/store';
import { eventually } from '@app/shared/testing';
import { CollectionState } from '../../src/store/embedded/collection-state.js';
import { eachSlot } from '../../src/store/embedded/slots.js';

// The hash indexes recorded in a large store's journal are filled after the load, in steps, in the
// background (docs/store.md "Indexes and plans"): whatever the writes between the steps, and
// whether a lookup or the last step finishes the fill, an index answers as a scan would.

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A field value: mostly a small integer, sometimes missing, null, a string or an array. */
const value = fc.oneof({ weight: 6, arbitrary: fc.integer({ min: 0, max: 5 }) }, { weight: 1, arbitrary: fc.constantFrom<unknown>(undefined, null, 'x', [3, 1], [2, 2]) });
const op = fc.oneof(
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('step' as const), slots: fc.integer({ min: 1, max: 8 }) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('set' as const), at: fc.nat(), n: value, m: value }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('delete' as const), at: fc.nat() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('insert' as const), n: value, m: value }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('lookup' as const), field: fc.constantFrom('n', 'm') }) },
);

const docOf = (id: string, n: unknown, m: unknown): Doc => ({ _id: id, ...(n === undefined ? {} : { n }), ...(m === undefined ? {} : { m }) });

/** Whether `doc` holds `v` at `field` as an index files it (the value, or an element of an array there). */
const holds = (doc: Doc, field: string, v: unknown) => {
  const at = doc[field];
  return Array.isArray(at) ? at.includes(v) : at === v;
};

describe('hash indexes filled after the load', () => {
  it('answer as a scan through writes, inserts and deletes between the steps, however the fill ends', () => {
    let writesWhileFilling = 0;
    let endedByLookup = 0;
    let endedBySteps = 0;
    fc.assert(
      fc.property(fc.array(fc.tuple(value, value), { maxLength: 40 }), fc.array(op, { maxLength: 60 }), (initial, ops) => {
        const state = new CollectionState('tasks', undefined, 0);
        state.addIndex(['n'], false, 'after-load');
        state.addIndex(['m'], false, 'after-load');
        const docs: Array<Doc | undefined> = [];
        let version = 0;
        for (const [n, m] of initial) {
          const doc = docOf(`d${docs.length}`, n, m);
          docs.push(doc);
          state.load(doc._id as string, doc, ++version, docs.length);
        }
        let filled = false;
        const check = (field: 'n' | 'm') => {
          for (const v of [0, 1, 2, 3, 4, 5, 'x']) {
            const found: number[] = [];
            const { slots } = state.plan({ [field]: v });
            if (slots) eachSlot(slots, (slot) => (found.push(slot), true));
            const expected = docs.flatMap((d, slot) => (d && holds(d, field, v) ? [slot] : []));
            expect(found.sort((a, b) => a - b)).toEqual(expected);
          }
        };
        const write = (slot: number, doc: Doc | null) => {
          if (!filled) writesWhileFilling++;
          state.apply(doc ? (doc._id as string) : (docs[slot]!._id as string), doc, ++version, slot + 1);
          docs[slot] = doc ?? undefined;
        };
        for (const o of ops) {
          if (o.kind === 'step') {
            if (!filled && state.fillStep(o.slots)) {
              filled = true;
              endedBySteps++;
            }
          } else if (o.kind === 'lookup') {
            check(o.field); // a lookup fills the rest of the index it uses
            if (!filled && state.fillStep(0)) {
              filled = true; // (only when both indexes were looked up)
              endedByLookup++;
            }
          } else if (o.kind === 'insert') {
            const slot = docs.length;
            docs.push(undefined);
            write(slot, docOf(`d${slot}`, o.n, o.m));
          } else if (docs.length > 0) {
            const slot = o.at % docs.length;
            if (!docs[slot]) continue;
            write(slot, o.kind === 'delete' ? null : docOf(docs[slot]!._id as string, o.n, o.m));
          }
        }
        expect(state.fillStep(1_000)).toBe(true);
        check('n');
        check('m');
      }),
      { numRuns: 400 },
    );
    // the runs did what they were meant to: writes landed mid-fill, and fills ended both ways
    expect(writesWhileFilling).toBeGreaterThan(200);
    expect(endedBySteps).toBeGreaterThan(20);
    expect(endedByLookup).toBeGreaterThan(5);
  });

  it('a large store answers right after its open, while its recorded indexes fill in the background, and by the indexes once filled', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'store-hash-fill-'));
    dirs.push(dir);
    const docs = Array.from({ length: 3_000 }, (_, i) => ({ _id: `t${i}`, owner: `u${i % 7}`, tags: [`k${i % 3}`] }));
    const first = await EmbeddedStore.open({ dir, deferIndexesFrom: 500 });
    await first.ensureIndexes([{ collection: 'tasks', keys: { owner: 1, tags: 1 } }]);
    await first.collection('tasks').insertMany(docs);
    await first.close();

    // from 500 documents on, the recorded indexes are filled after the load (1M tasks in production)
    await using store = await EmbeddedStore.open({ dir, deferIndexesFrom: 500 });
    const tasks = store.collection('tasks');
    // written before the fill is done (the first step runs on a later turn of the event loop)
    await tasks.updateOne({ _id: 't0' }, { $set: { owner: 'moved' } });
    await tasks.insertOne({ _id: 'n1', owner: 'u1', tags: ['k2'] });
    await tasks.deleteOne({ _id: 't1' });
    const ids = async (filter: Record<string, unknown>) => (await tasks.find(filter, { projection: { _id: 1 } })).map((d) => d._id).sort();
    const expected = (keep: (d: { _id: string; owner: string; tags: string[] }) => boolean) =>
      [...docs.filter((d) => d._id !== 't1').map((d) => (d._id === 't0' ? { ...d, owner: 'moved' } : d)), { _id: 'n1', owner: 'u1', tags: ['k2'] }].filter(keep).map((d) => d._id).sort();
    // exact plans from the filled indexes: the documents found are the only ones examined
    const examined = async (filter: Record<string, unknown>, want: string[]) => {
      const before = store.stats.docsExamined;
      expect(await ids(filter)).toEqual(want);
      return store.stats.docsExamined - before - want.length;
    };
    // the fill's steps run on the event loop's idle turns: wait until a lookup is exact
    await eventually('the recorded indexes filled', () => examined({ owner: 'u0' }, expected((d) => d.owner === 'u0')), (n) => n === 0);
    expect(await examined({ owner: 'u1', tags: 'k2' }, expected((d) => d.owner === 'u1' && d.tags.includes('k2')))).toBe(0);
    expect(await examined({ owner: 'moved' }, ['t0'])).toBe(0);
    expect(await examined({ owner: 'u0' }, expected((d) => d.owner === 'u0'))).toBe(0);
    expect(await examined({ tags: { $in: ['k0', 'k1'] }, owner: 'u3' }, expected((d) => d.owner === 'u3' && d.tags[0] !== 'k2'))).toBe(0);
  });
});
