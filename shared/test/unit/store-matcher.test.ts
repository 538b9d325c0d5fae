import fc from 'fast-check';
import { Query } from 'mingo';
import { describe, expect, it } from 'vitest';
import type { Doc, Filter, Projection } from '@app/shared/store';
import { compileFilter, lazyMatcher, project, QUERY_OPTIONS, testDirect } from '../../src/store/embedded/matcher.js';

// The embedded store's compiled filters and projections must behave exactly as mingo (the
// reference the store was built on) for every filter and document, fast path or not.

const scalar = fc.constantFrom<unknown>('x', 'y', 'X', 'dev', '', 0, 1, 2.5, -1, true, false);
// Arrays within arrays (directly, or as fields of sub-documents in an array) are left out: there
// mingo departs from MongoDB, which the matcher follows (see the test below).
const leaf = fc.oneof(scalar, fc.constant(null), fc.array(scalar, { maxLength: 3 }));
const sub = fc.dictionary(fc.constantFrom('b', 'c'), leaf, { maxKeys: 2 });
const flatSub = fc.dictionary(fc.constantFrom('b', 'c'), fc.oneof(scalar, fc.constant(null)), { maxKeys: 2 });
const value = fc.oneof(leaf, sub, fc.array(flatSub, { maxLength: 3 }), fc.array(fc.oneof(scalar, flatSub), { maxLength: 3 }));
const doc = fc.record({ _id: fc.constantFrom('a', 'b'), a: value, tags: value, n: value }, { requiredKeys: ['_id'] });

const path = fc.constantFrom('a', 'tags', 'n', 'a.b', 'a.c', 'a.0', 'a.0.b', 'a.b.c', 'missing', '_id');
const cond = fc.oneof(
  scalar,
  scalar.map(($eq) => ({ $eq })),
  scalar.map(($ne) => ({ $ne })),
  fc.array(scalar, { maxLength: 3 }).map(($in) => ({ $in })),
  fc.array(scalar, { maxLength: 3 }).map(($nin) => ({ $nin })),
  fc.array(scalar, { maxLength: 2 }),
  fc.array(scalar, { maxLength: 2 }).map(($eq) => ({ $eq })),
  fc.array(scalar, { maxLength: 2 }).map(($ne) => ({ $ne })),
  fc.record({ $regex: fc.constantFrom('x', '^d', 'e', '^$', '.'), $options: fc.constantFrom('', 'i') }),
  fc.boolean().map(($exists) => ({ $exists })),
  // not compiled: mingo answers these through the same function
  fc.constantFrom<unknown>(null, { $gt: 1 }, { $exists: 1 }, { $size: 1 }, { $all: ['x'] }, [{ b: 'x' }], { b: 'x' }),
);
const field = fc.tuple(path, cond).map(([p, c]) => ({ [p]: c }));
const filter: fc.Arbitrary<Filter> = fc.letrec<{ f: Filter }>((tie) => ({
  f: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    field,
    fc.tuple(field, field).map(([x, y]) => ({ ...x, ...y })),
    fc.array(tie('f'), { minLength: 1, maxLength: 3 }).map(($and) => ({ $and })),
    fc.array(tie('f'), { minLength: 1, maxLength: 3 }).map(($or) => ({ $or })),
  ),
})).f;

describe('embedded store matcher', () => {
  it('matches exactly the documents mingo matches', () => {
    fc.assert(
      fc.property(filter, fc.array(doc, { maxLength: 8 }), (f, docs) => {
        const query = new Query(f, QUERY_OPTIONS);
        const matches = compileFilter(f);
        // as stored: plain JSON objects
        for (const d of JSON.parse(JSON.stringify(docs)) as Doc[]) expect(matches(d)).toBe(query.test(d));
      }),
      { numRuns: 3_000 },
    );
  });

  it('tests the simplest filters without compiling them, as mingo does, and says when it cannot', () => {
    let direct = 0;
    fc.assert(
      fc.property(filter, fc.array(doc, { maxLength: 8 }), (f, docs) => {
        const query = new Query(f, QUERY_OPTIONS);
        const lazy = lazyMatcher(f);
        for (const d of JSON.parse(JSON.stringify(docs)) as Doc[]) {
          const result = testDirect(f, d);
          if (result !== undefined) {
            direct++;
            expect(result).toBe(query.test(d));
          }
          expect(lazy(d)).toBe(query.test(d)); // direct for the first documents, compiled after
        }
      }),
      { numRuns: 3_000 },
    );
    expect(direct).toBeGreaterThan(1_000); // the shapes a write looks up by were tested directly
    expect(testDirect({ _id: 'a', version: 3 }, { _id: 'a', version: 3 })).toBe(true);
    expect(testDirect({ _id: 'a', version: 3 }, { _id: 'a', version: 4 })).toBe(false);
    expect(testDirect({ _id: 'a', deleted_at: { $exists: false } }, { _id: 'a' })).toBe(true);
    expect(testDirect({ $or: [{ _id: 'b' }, { _id: 'a' }] }, { _id: 'a' })).toBe(true);
    expect(testDirect({ $and: [{ _id: 'a' }, { $or: [{ n: 1 }, { n: { $in: [2, 3] } }] }] }, { _id: 'a', n: 2 })).toBe(true);
    expect(testDirect({ $and: [{ _id: 'a' }, { n: 4 }] }, { _id: 'a', n: 2 })).toBe(false);
    expect(testDirect({ $and: [{ _id: 'a' }, { n: { $gt: 1 } }] }, { _id: 'a', n: 2 })).toBeUndefined(); // compiled
    expect(testDirect({ $and: [] }, { _id: 'a' })).toBeUndefined(); // left to the compiled matcher (mingo refuses it)
    // a frozen part already compiled (a shared column query) is tested by its matcher
    const column = Object.freeze({ title: Object.freeze({ $regex: 'hook', $options: 'i' }) });
    expect(testDirect(column, { _id: 'a', title: 'Webhook' })).toBeUndefined(); // not yet compiled
    compileFilter({ $and: [column] });
    expect(testDirect({ $and: [{ _id: 'a' }, column] }, { _id: 'a', title: 'Webhook' })).toBe(true);
    expect(testDirect({ $and: [{ _id: 'a' }, column] }, { _id: 'a', title: 'Web' })).toBe(false);
    expect(testDirect({ a: { $gt: 1 } }, { _id: 'a', a: 2 })).toBeUndefined();
    expect(testDirect({ a: ['x'] }, { _id: 'a', a: ['x'] })).toBeUndefined(); // array equality: compiled
  });

  it('follows MongoDB, like the hash indexes, for arrays within arrays: one level of array is searched', () => {
    const doc = { _id: 'a', tags: [['x']], a: [[{ b: 1 }]] };
    expect(compileFilter({ tags: 'x' })(doc)).toBe(false);
    expect(compileFilter({ tags: { $regex: 'x' } })(doc)).toBe(false);
    expect(compileFilter({ tags: { $ne: 'x' } })(doc)).toBe(true);
    expect(compileFilter({ 'a.b': 1 })(doc)).toBe(false);
    expect(compileFilter({ 'tags.0': 'x' })(doc)).toBe(true);
    expect(compileFilter({ tags: ['x'] })(doc)).toBe(true);
    expect(compileFilter({ tags: { $ne: ['x'] } })(doc)).toBe(false);
    const members = { _id: 'b', a: [{ c: null }, { c: [true] }] };
    expect(compileFilter({ 'a.c': { $in: [true] } })(members)).toBe(true);
    expect(compileFilter({ 'a.c': { $nin: [true] } })(members)).toBe(false);
  });

  it('projects exactly as mingo does, key order included', () => {
    const docs: Doc[] = [
      { _id: 'a', title: 't', status: 's', metadata: { 'app%2Esprint': 'x', order: 1 }, n: null },
      { _id: 'b', status: 's2' },
    ];
    const projections: Projection[] = [
      { _id: 1 }, { _id: 0 }, { title: 1 }, { status: 1, title: 1 }, { _id: 0, title: 1 }, { title: 0 },
      { title: 0, _id: 0 }, { n: 1 }, { 'metadata.order': 1 }, { missing: 1 }, { _id: 1, title: 1 },
    ];
    for (const p of projections) {
      const expected = new Query({}, QUERY_OPTIONS).find<Doc>(docs, p).all();
      expect(JSON.stringify(project(docs, p)), JSON.stringify(p)).toBe(JSON.stringify(expected));
    }
  });
});

describe('compiled filters reused by value', () => {
  const docs: Doc[] = [{ _id: 'a', n: 1 }, { _id: 'b', n: 5 }, { _id: 'c' }];
  const matching = (f: Filter) => docs.filter(compileFilter(f)).map((d) => d._id);

  it('hands out one compiled matcher for equal filters built anew, frozen or not', () => {
    const build = () => ({ n: { $not: { $gt: 2 } } });
    expect(compileFilter(build())).toBe(compileFilter(build()));
    expect(matching(build())).toEqual(['a', 'c']);
  });

  it('follows a filter object changed after it was compiled (the key is its value, not its identity)', () => {
    const f: Filter = { n: { $not: { $gt: 2 } } };
    expect(matching(f)).toEqual(['a', 'c']);
    (f.n as Record<string, unknown>).$not = { $lt: 2 };
    expect(matching(f)).toEqual(['b', 'c']);
  });

  it('compiles filters holding values JSON cannot tell apart each time', () => {
    expect(matching({ n: { $not: { $in: [/x/, 1] } } })).toEqual(['b', 'c']);
    expect(matching({ n: { $not: { $in: [/y/, 5] } } })).toEqual(['a', 'c']);
  });
});
