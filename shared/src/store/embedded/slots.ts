/**
 * Sets of document slots for the embedded store's indexes and query plans (docs/store.md
 * "Indexes and plans"). Every stored document of a collection has a slot: a small non-negative
 * integer given at insert and kept for the document's life. A set of slots is either a sorted
 * array (few members) or a bitmap (one bit per slot of the collection, 32 per word), so plans
 * intersect and unite index sets word by word and count matches without touching documents.
 */

/** A read-only set of slots: exactly one of `arr` (ascending, no duplicates) or `bits`. */
export interface Slots {
  /** The exact number of members. */
  readonly size: number;
  readonly arr?: readonly number[] | undefined;
  readonly bits?: Uint32Array | undefined;
}

/** The empty set. */
export const NO_SLOTS: Slots = { size: 0, arr: [] };

/** A sorted array is turned into a bitmap when it holds more than one slot in this many. */
const SPARSE = 64;
/** Arrays up to this size stay arrays whatever the collection size. */
const SMALL = 256;

/** Number of set bits of a 32-bit word. */
export function popcount(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (Math.imul((x + (x >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24) as number;
}

function countBits(words: Uint32Array): number {
  let n = 0;
  for (let i = 0; i < words.length; i++) if (words[i] !== 0) n += popcount(words[i]!);
  return n;
}

/** True when `slot` is a member. Arrays are searched by bisection. */
export function hasSlot(s: Slots, slot: number): boolean {
  if (s.bits) {
    const w = slot >>> 5;
    return w < s.bits.length && (s.bits[w]! & (1 << (slot & 31))) !== 0;
  }
  return s.arr![lowerBound(s.arr!, slot)] === slot;
}

/** The first index of sorted `arr` whose value is not below `slot` (`arr.length` if none). */
function lowerBound(arr: readonly number[], slot: number): number {
  let lo = 0;
  let hi = arr.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (arr[mid]! < slot) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Calls `visit` with each member in ascending order until it returns `false`. Returns `false`
 * when stopped early.
 */
export function eachSlot(s: Slots, visit: (slot: number) => boolean): boolean {
  if (s.arr) {
    for (let i = 0; i < s.arr.length; i++) if (!visit(s.arr[i]!)) return false;
    return true;
  }
  const words = s.bits!;
  for (let w = 0; w < words.length; w++) {
    let x = words[w]!;
    while (x !== 0) {
      const low = x & -x;
      if (!visit((w << 5) + 31 - Math.clz32(low))) return false;
      x ^= low;
    }
  }
  return true;
}

/** The union of sets (a new set unless there is only one). */
export function orSlots(sets: readonly Slots[]): Slots {
  if (sets.length === 0) return NO_SLOTS;
  if (sets.length === 1) return sets[0]!;
  let total = 0;
  let top = 0;
  for (const s of sets) {
    total += s.size;
    top = Math.max(top, s.bits ? s.bits.length * 32 : s.arr!.length > 0 ? s.arr![s.arr!.length - 1]! + 1 : 0);
  }
  if (sets.every((s) => s.arr) && (total <= SMALL || total * SPARSE <= top)) {
    const all = new Int32Array(total);
    let n = 0;
    for (const s of sets) for (const slot of s.arr!) all[n++] = slot;
    all.sort();
    const out: number[] = [];
    for (let i = 0; i < all.length; i++) if (i === 0 || all[i] !== all[i - 1]) out.push(all[i]!);
    return { size: out.length, arr: out };
  }
  const words = new Uint32Array((top + 31) >>> 5);
  for (const s of sets) {
    if (s.bits) for (let i = 0; i < s.bits.length; i++) words[i]! |= s.bits[i]!;
    else for (const slot of s.arr!) words[slot >>> 5]! |= 1 << (slot & 31);
  }
  return { size: countBits(words), bits: words };
}

/**
 * The intersection of every set; `undefined` (every slot) for none. Driven by the smallest sorted
 * array when there is one (membership tests in the others), else one pass over the bitmaps' words.
 */
export function andAll(sets: readonly Slots[]): Slots | undefined {
  if (sets.length <= 1) return sets[0];
  const arrays = sets.filter((s) => s.arr).sort((a, b) => a.size - b.size);
  if (arrays.length > 0) {
    const driver = arrays[0]!;
    const out: number[] = [];
    for (const slot of driver.arr!) {
      let all = true;
      for (const s of sets) if (s !== driver && !hasSlot(s, slot)) all = false;
      if (all) out.push(slot);
    }
    return { size: out.length, arr: out };
  }
  const maps = sets.map((s) => s.bits!).sort((a, b) => a.length - b.length);
  const first = maps[0]!;
  const words = new Uint32Array(first.length);
  let size = 0;
  if (maps.length === 2) {
    const second = maps[1]!;
    for (let i = 0; i < words.length; i++) {
      const x = first[i]! & second[i]!;
      if (x !== 0) {
        words[i] = x;
        size += popcount(x);
      }
    }
    return { size, bits: words };
  }
  for (let i = 0; i < words.length; i++) {
    let x = first[i]!;
    for (let j = 1; j < maps.length && x !== 0; j++) x &= maps[j]![i]!;
    if (x !== 0) {
      words[i] = x;
      size += popcount(x);
    }
  }
  return { size, bits: words };
}

/**
 * The mutable set of slots an index key holds, maintained on every write: a sorted array while
 * sparse, a bitmap (grown as slots grow) once it holds more than one slot in {@link SPARSE} of
 * the collection. Readers see it through {@link Slots}; plans never keep it past one call.
 */
export class Posting implements Slots {
  size = 0;
  arr: number[] | undefined = [];
  bits: Uint32Array | undefined;

  /** Adds `slot`; `slotCount` is the collection's number of slots (bitmap sizing). */
  add(slot: number, slotCount: number): void {
    if (this.bits) {
      const w = slot >>> 5;
      if (w >= this.bits.length) {
        const grown = new Uint32Array(Math.max(w + 1, this.bits.length * 2));
        grown.set(this.bits);
        this.bits = grown;
      }
      const mask = 1 << (slot & 31);
      if ((this.bits[w]! & mask) === 0) {
        this.bits[w]! |= mask;
        this.size++;
      }
      return;
    }
    const arr = this.arr!;
    if (arr.length === 0 || arr[arr.length - 1]! < slot) arr.push(slot);
    else {
      const at = lowerBound(arr, slot);
      if (arr[at] === slot) return;
      arr.splice(at, 0, slot);
    }
    this.size++;
    if (this.size > SMALL && this.size * SPARSE > slotCount) this.toBitmap(slotCount);
  }

  /** Removes `slot` when present. */
  remove(slot: number): void {
    if (this.bits) {
      const w = slot >>> 5;
      const mask = 1 << (slot & 31);
      if (w < this.bits.length && (this.bits[w]! & mask) !== 0) {
        this.bits[w]! &= ~mask;
        this.size--;
      }
      return;
    }
    const arr = this.arr!;
    const at = lowerBound(arr, slot);
    if (arr[at] === slot) {
      arr.splice(at, 1);
      this.size--;
    }
  }

  private toBitmap(slotCount: number): void {
    const bits = new Uint32Array(((slotCount + 31) >>> 5) + 1);
    for (const slot of this.arr!) bits[slot >>> 5]! |= 1 << (slot & 31);
    this.bits = bits;
    this.arr = undefined;
  }
}
