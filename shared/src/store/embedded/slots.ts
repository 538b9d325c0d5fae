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

/** True when `n` slots, all below `top`, are kept as a sorted array: few of them, or sparse. */
function staysArray(n: number, top: number): boolean {
  return n <= SMALL || n * SPARSE <= top;
}

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

/**
 * The set of the slots in `slots` (any order, repeats allowed): a sorted array, or a bitmap when
 * they are many and dense, as {@link orSlots} makes them. Cheaper than uniting one-slot sets: a
 * read of a list of ids (`_id: {$in: [...]}`) is one numeric sort, and none when the slots come
 * ascending already (ids listed in the order their documents were stored, as a sprint's members
 * are). The caller gives `slots` up: it may become the set's own array.
 */
export function slotsOf(slots: number[]): Slots {
  let i = 1;
  while (i < slots.length && slots[i]! > slots[i - 1]!) i++;
  return i >= slots.length ? ofAscending(slots) : ofSorted(Int32Array.from(slots).sort()); // a numeric sort without a comparator call per pair
}

/** The set of the slots in ascending `sorted` (repeats allowed). */
function ofSorted(sorted: Int32Array): Slots {
  const out: number[] = [];
  for (let i = 0; i < sorted.length; i++) if (i === 0 || sorted[i] !== sorted[i - 1]) out.push(sorted[i]!);
  return ofAscending(out);
}

/** The set of the strictly ascending slots `out`: `out` itself as its array when few or sparse, else a bitmap. */
function ofAscending(out: number[]): Slots {
  const n = out.length;
  if (n === 0) return NO_SLOTS;
  const top = out[n - 1]! + 1;
  if (staysArray(n, top)) return { size: n, arr: out };
  const words = new Uint32Array((top + 31) >>> 5);
  for (let k = 0; k < n; k++) words[out[k]! >>> 5]! |= 1 << (out[k]! & 31);
  return { size: n, bits: words };
}

/** The union of sets (a new set unless there is only one). */
export function orSlots(sets: readonly Slots[]): Slots {
  if (sets.length === 0) return NO_SLOTS;
  if (sets.length === 1) return sets[0]!;
  let total = 0;
  let top = 0;
  let bitmaps = 0;
  for (const s of sets) {
    total += s.size;
    if (s.bits) bitmaps++;
    top = Math.max(top, s.bits ? s.bits.length * 32 : s.arr!.length > 0 ? s.arr![s.arr!.length - 1]! + 1 : 0);
  }
  if (bitmaps === 0 && staysArray(total, top)) {
    const all = new Int32Array(total);
    let n = 0;
    for (const s of sets) for (const slot of s.arr!) all[n++] = slot;
    return ofSorted(all.sort()); // an array: at most `total` slots, as sparse as the sets
  }
  const words = new Uint32Array((top + 31) >>> 5);
  if (bitmaps === 1) {
    // one bitmap: copied whole, the arrays' slots added to it, counting only the new ones
    const base = sets.find((x) => x.bits)!;
    words.set(base.bits!);
    let size = base.size;
    for (const x of sets) {
      if (x === base) continue;
      const arr = x.arr!;
      for (let k = 0; k < arr.length; k++) {
        const slot = arr[k]!;
        const w = slot >>> 5;
        const mask = 1 << (slot & 31);
        if ((words[w]! & mask) === 0) {
          words[w]! |= mask;
          size++;
        }
      }
    }
    return { size, bits: words };
  }
  for (const x of sets) {
    const bits = x.bits;
    if (bits) for (let i = 0; i < bits.length; i++) words[i]! |= bits[i]!;
    else {
      const arr = x.arr!;
      for (let k = 0; k < arr.length; k++) words[arr[k]! >>> 5]! |= 1 << (arr[k]! & 31);
    }
  }
  return { size: countBits(words), bits: words };
}

/**
 * The intersection of bitmaps over their first `length` words, skipping the words where the first
 * (the sparsest, as callers order them) is zero. Up to four bitmaps go through one fused pass
 * (fewer repeat the last: `x & y & y` is `x & y`); more are intersected word by word.
 */
function andBitmaps(maps: readonly Uint32Array[], length: number): Slots {
  const words = new Uint32Array(length);
  let size = 0;
  const a = maps[0]!;
  if (maps.length <= 4) {
    const b = maps[1]!;
    const c = maps[2] ?? b;
    const d = maps[3] ?? c;
    for (let i = 0; i < length; i++) {
      if (a[i] === 0) continue;
      const x = a[i]! & b[i]! & c[i]! & d[i]!;
      if (x !== 0) {
        words[i] = x;
        size += popcount(x);
      }
    }
    return { size, bits: words };
  }
  for (let i = 0; i < length; i++) {
    let x = a[i]!;
    for (let j = 1; j < maps.length && x !== 0; j++) x &= maps[j]![i]!;
    if (x !== 0) {
      words[i] = x;
      size += popcount(x);
    }
  }
  return { size, bits: words };
}

/**
 * The intersection of every set; `undefined` (every slot) for none. Driven by the smallest sorted
 * array when there is one (each of its slots tested in the others), else one fused pass over the
 * bitmaps' words.
 */
export function andAll(sets: readonly Slots[]): Slots | undefined {
  if (sets.length <= 1) return sets[0];
  let driver: Slots | undefined;
  for (const x of sets) if (x.arr && (!driver || x.size < driver.size)) driver = x;
  if (!driver) {
    let length = Infinity;
    for (const x of sets) length = Math.min(length, x.bits!.length);
    // sparsest first: a zero word of it settles the result word with one load
    return andBitmaps([...sets].sort((x, y) => x.size - y.size).map((x) => x.bits!), length);
  }
  const others = sets.filter((x) => x !== driver).sort((x, y) => x.size - y.size);
  const maps = others.filter((x) => x.bits).map((x) => x.bits!);
  const arrays = others.filter((x) => x.arr).map((x) => x.arr!);
  const slots = driver.arr!;
  const out: number[] = [];
  next: for (let k = 0; k < slots.length; k++) {
    const slot = slots[k]!;
    const w = slot >>> 5;
    const mask = 1 << (slot & 31);
    for (let j = 0; j < maps.length; j++) {
      const bits = maps[j]!;
      if (w >= bits.length || (bits[w]! & mask) === 0) continue next;
    }
    for (let j = 0; j < arrays.length; j++) {
      const arr = arrays[j]!;
      if (arr[lowerBound(arr, slot)] !== slot) continue next;
    }
    out.push(slot);
  }
  return { size: out.length, arr: out };
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
    if (!staysArray(this.size, slotCount)) this.toBitmap(slotCount);
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
