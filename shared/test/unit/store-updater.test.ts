import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Doc, Update } from '@app/shared/store';
import { applyUpdate, applyWithMingo } from '../../src/store/embedded/updater.js';
import { toStored } from '../../src/store/embedded/values.js';

// The embedded store applies `$set`/`$unset` itself and everything else through mingo: both must
// give the same documents and the same "modified" answer.

const scalar = fc.constantFrom<unknown>('x', 'y', '', 0, 1, 2.5, true, false, null);
const value = fc.oneof(scalar, fc.array(scalar, { maxLength: 2 }), fc.dictionary(fc.constantFrom('p', 'q'), scalar, { maxKeys: 2 }));
const doc = fc.record({
  _id: fc.constant('d1'),
  a: fc.oneof(value, fc.dictionary(fc.constantFrom('b', 'c'), value, { maxKeys: 2 })),
  status: scalar,
  metadata: fc.dictionary(fc.constantFrom('order', 'app%2Esprint', 'cf%2Epriority'), value, { maxKeys: 3 }),
}, { requiredKeys: ['_id'] });
const path = fc.constantFrom('a', 'a.b', 'a.c', 'a.b.p', 'status', 'metadata.order', 'metadata.app%2Esprint', 'metadata.new', 'fresh.deep', 'a.0');
const spec: fc.Arbitrary<Update> = fc
  .tuple(fc.dictionary(path, value, { maxKeys: 3 }), fc.dictionary(path, fc.constant(''), { maxKeys: 2 }))
  .map(([$set, $unset]) => ({ ...(Object.keys($set).length ? { $set } : {}), ...(Object.keys($unset).length ? { $unset } : {}) }))
  .filter((u) => Object.keys(u).length > 0);

/** The reference: mingo on a stored copy; null when mingo refuses the update. */
function reference(d: Doc, u: Update): { after: Doc; modified: boolean } | null {
  const after = toStored(d);
  try {
    const modified = applyWithMingo(after, u);
    return { after: toStored(after), modified };
  } catch {
    return null;
  }
}

describe('embedded store updater', () => {
  it('applies $set/$unset exactly as mingo does, and reports a change exactly when the document changed', () => {
    fc.assert(
      fc.property(doc, spec, (d, u) => {
        const stored = toStored(d as Doc);
        const expected = reference(stored, u);
        fc.pre(expected !== null);
        const before = JSON.stringify(stored);
        const got = applyUpdate(stored, u);
        expect(JSON.stringify(stored)).toBe(before);
        // key order aside: mingo keeps the old order when a `$set` value equals the stored
        // sub-document up to key order, MongoDB (and we) write the new value (test below)
        expect(got.after).toEqual(expected!.after);
        // MongoDB counts a document as modified when it changed (mingo also flags a $set of an equal sub-document)
        expect(got.modified).toBe(JSON.stringify(got.after) !== before);
      }),
      { numRuns: 3_000 },
    );
  });

  it('writes a $set sub-document in its own key order, as MongoDB does (a reordered one is a change)', () => {
    const d: Doc = { _id: 'd1', a: { q: 'x', p: 2.5 } };
    const got = applyUpdate(d, { $set: { a: { p: 2.5, q: 'x' } } });
    expect(JSON.stringify(got.after)).toBe('{"_id":"d1","a":{"p":2.5,"q":"x"}}');
    expect(got.modified).toBe(true);
    expect(applyUpdate(d, { $set: { a: { q: 'x', p: 2.5 } } }).modified).toBe(false);
  });

  it('creates missing sub-documents on $set and leaves them alone on $unset', () => {
    const d: Doc = { _id: 'd', metadata: {} };
    expect(applyUpdate(d, { $set: { 'x.y.z': 1 } }).after).toEqual({ _id: 'd', metadata: {}, x: { y: { z: 1 } } });
    expect(applyUpdate(d, { $unset: { 'x.y': '' } })).toEqual({ after: d, modified: false });
    expect(applyUpdate(d, { $set: { metadata: {} } }).modified).toBe(false);
  });
});
