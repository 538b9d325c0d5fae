import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { andAll, eachSlot, hasSlot, orSlots, Posting, slotsOf, type Slots } from '../../src/store/embedded/slots.js';

// The slot sets behind the embedded store's indexes and plans must behave as plain sets of
// integers, whichever form (sorted array or bitmap) each operand has taken.

const members = (s: Slots): number[] => {
  const out: number[] = [];
  eachSlot(s, (slot) => (out.push(slot), true));
  return out;
};

/** A posting built by adds and removes, next to the reference Set it must equal. */
const posting = (slotCount: number) =>
  fc
    .tuple(
      fc.array(fc.integer({ min: 0, max: slotCount - 1 }), { maxLength: 1_500 }),
      fc.array(fc.integer({ min: 0, max: slotCount - 1 }), { maxLength: 300 }),
      fc.integer({ min: 0, max: Math.floor(slotCount / 2) }),
      fc.integer({ min: 0, max: slotCount - 1 }),
    )
    .map(([adds, removes, extra, offset]) => {
      const p = new Posting();
      const ref = new Set<number>();
      // dense postings (a share of every slot) turn into bitmaps, sparse ones stay arrays
      for (let i = 0; i < extra; i++) adds.push((offset + i * (offset % 2 ? 7919 : 104_729)) % slotCount);
      for (const a of adds) {
        p.add(a, slotCount);
        ref.add(a);
      }
      for (const r of removes) {
        p.remove(r);
        ref.delete(r);
      }
      return { p, ref };
    });

describe('embedded store slot sets', () => {
  it('the set of a list of slots (a read of ids) holds each once, ascending, whether it comes out an array or a bitmap', () => {
    const ascending = (a: number[]) => a.sort((x, y) => x - y);
    const list = fc.oneof(
      fc.array(fc.integer({ min: 0, max: 100_000 }), { maxLength: 600 }),
      fc.array(fc.integer({ min: 0, max: 2_000 }), { minLength: 300, maxLength: 3_000 }),
      // ids listed in the order their documents were stored: ascending already, sparse or dense
      fc.uniqueArray(fc.integer({ min: 0, max: 100_000 }), { maxLength: 600 }).map(ascending),
      fc.uniqueArray(fc.integer({ min: 0, max: 2_000 }), { minLength: 300, maxLength: 2_001 }).map(ascending),
    );
    fc.assert(fc.property(list, (slots) => {
      const ref = [...new Set(slots)].sort((a, b) => a - b);
      const set = slotsOf([...slots]);
      expect(members(set)).toEqual(ref);
      expect(set.size).toBe(ref.length);
      for (const slot of slots.slice(0, 20)) expect(hasSlot(set, slot)).toBe(true);
      expect(members(andAll([set, orSlots(ref.map((x) => ({ size: 1, arr: [x] })))])!)).toEqual(ref);
    }));
    expect(slotsOf([1_000, ...Array.from({ length: 999 }, (_, i) => i)]).bits).toBeDefined();
    expect(slotsOf(Array.from({ length: 1_000 }, (_, i) => i)).bits).toBeDefined(); // ascending and dense: a bitmap too
    expect(slotsOf([3, 70_000]).arr).toEqual([3, 70_000]);
  });

  it('a posting holds exactly what was added and not removed, in ascending order, with its exact size', () => {
    fc.assert(
      fc.property(posting(4_000), ({ p, ref }) => {
        expect(members(p)).toEqual([...ref].sort((a, b) => a - b));
        expect(p.size).toBe(ref.size);
        for (let slot = 0; slot < 4_100; slot += 37) expect(hasSlot(p, slot)).toBe(ref.has(slot));
      }),
      { numRuns: 150, endOnFailure: true },
    );
  });

  it('intersections and unions of arrays and bitmaps equal those of plain sets', () => {
    fc.assert(
      fc.property(fc.array(posting(3_000), { minLength: 1, maxLength: 4 }), (sets) => {
        const refs = sets.map((s) => s.ref);
        const and = [...refs[0]!].filter((x) => refs.every((r) => r.has(x))).sort((a, b) => a - b);
        const or = [...new Set(refs.flatMap((r) => [...r]))].sort((a, b) => a - b);
        const both = andAll(sets.map((s) => s.p))!;
        const either = orSlots(sets.map((s) => s.p));
        expect(members(both)).toEqual(and);
        expect(both.size).toBe(and.length);
        expect(members(either)).toEqual(or);
        expect(either.size).toBe(or.length);
        // results feed further plans: a union intersected with a posting
        expect(members(andAll([either, sets[0]!.p])!)).toEqual([...refs[0]!].sort((a, b) => a - b));
      }),
      { numRuns: 150, endOnFailure: true },
    );
  });

  it('stops a walk when the visitor says so', () => {
    const p = new Posting();
    for (let i = 0; i < 2_000; i += 2) p.add(i, 2_000);
    expect(p.bits).toBeDefined();
    const seen: number[] = [];
    expect(eachSlot(p, (slot) => (seen.push(slot), seen.length < 3))).toBe(false);
    expect(seen).toEqual([0, 2, 4]);
  });
});
