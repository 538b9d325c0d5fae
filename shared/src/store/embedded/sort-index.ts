import type { Doc, Sort } from '../port.js';
import type { Slots } from './slots.js';
import { compareValues, sortKey } from './values.js';

/** Positions below this fit a two-part rank (run, position) in one exact double. */
const RANK_SPAN = 2 ** 26;

/** Changed slots a sort index merges in at read time before it re-sorts itself. */
const MIN_REBUILD = 1_024;

/**
 * Work per step of a build in steps ({@link SortIndex.buildStep}): slots whose keys are read and
 * sorted into one run, or slots of two runs merged (about 10–40 ms of CPU at a time).
 */
export const SORT_BUILD_STEP = 32_768;

/** The state of a build in steps: the keys as read (the runs' order), the sorted runs, the merge in progress. */
interface Steps {
  /** The next slot to read. */
  next: number;
  keys: unknown[];
  ids: Array<string | undefined>;
  /** Sorted runs waiting to be merged (a queue: merged pairwise, the result to the back). */
  runs: Int32Array<ArrayBuffer>[];
  /** Slots written after their key was read: the changed slots of the new base. (A slot added meanwhile is read by a later step.) */
  after: Set<number>;
  merge: { a: Int32Array<ArrayBuffer>; b: Int32Array<ArrayBuffer>; out: Int32Array<ArrayBuffer>; i: number; j: number } | undefined;
}

/**
 * The documents of a collection in the order of one field (docs/store.md "Indexes and plans"):
 * a sorted base of slots by (sort key, `_id`), plus the slots written since it was built, which
 * readers merge in. A sorted read with a small `limit` walks it and stops after `limit` matches
 * instead of computing and comparing the sort key of every match. Keys follow MongoDB's order
 * (`sortKey`); a descending walk is refused while some document holds an array there (its
 * descending key would differ from its ascending one).
 */
export class SortIndex {
  private readonly path: string[];
  /** Slots by (key, _id), as of the last build. */
  private base = new Int32Array(0);
  /** Position in {@link base} of each slot as of the last build (-1: not in it). */
  private posOf = new Int32Array(0);
  /**
   * Per position of {@link base}: the first position of its run of equal keys; `undefined` when
   * every key differs (each position is its own run).
   */
  private runStart: Int32Array | undefined;
  /** Current ascending key per slot (undefined: no document). */
  private readonly keys: unknown[] = [];
  private readonly ids: Array<string | undefined> = [];
  /** Slots whose document was written since the build (their base position may be stale). */
  private changed: number[] = [];
  /** 1 at the slots of {@link changed} (its membership test). */
  private changedMark = new Uint8Array(0);
  /** Slots whose ascending and descending keys differ (array values). */
  private readonly multi = new Set<number>();
  private built = false;
  /** A build in steps under way ({@link beginSteps}). */
  private steps: Steps | undefined;

  constructor(
    readonly field: string,
    /** Slots per step of a build in steps ({@link SORT_BUILD_STEP}; smaller in tests). */
    private readonly stepSize = SORT_BUILD_STEP,
    /**
     * Asked to run the steps of a re-sort in the background (true: it will call {@link buildStep}
     * until done; false or absent: the index re-sorts itself at once). See {@link refresh}.
     */
    private readonly background?: (index: SortIndex) => boolean,
    /** The fewest changed slots that make a re-sort ({@link MIN_REBUILD}; smaller in tests). */
    private readonly minRebuild = MIN_REBUILD,
  ) {
    this.path = field.split('.');
  }

  /** False only while a first build in steps runs ({@link beginSteps}): until then a walk or a top-n may not be asked for. */
  get ready(): boolean {
    return this.built || this.steps === undefined;
  }

  /** Records a write of the document in `slot` (`null`: deleted). */
  write(slot: number, doc: Doc | null): void {
    if (!doc) {
      this.keys[slot] = undefined;
      this.ids[slot] = undefined;
      this.multi.delete(slot);
    } else if (!this.setKey(slot, doc)) return;
    // the base holds the slot where its old key put it
    if (this.built) this.markChanged(slot);
    // and so will the base being built, when its key was read already
    const st = this.steps;
    if (st && slot < st.next) st.after.add(slot);
  }

  /** Sets the keys of the document in `slot`; false when they are the ones already there. */
  private setKey(slot: number, doc: Doc): boolean {
    const asc = sortKey(doc, this.path, 1);
    const before = this.keys[slot];
    if (this.ids[slot] === doc._id && before !== undefined && compareValues(before, asc) === 0 && !this.multi.has(slot)) return false;
    this.keys[slot] = asc;
    this.ids[slot] = doc._id;
    if (compareValues(asc, sortKey(doc, this.path, -1)) !== 0) this.multi.add(slot);
    else this.multi.delete(slot);
    return true;
  }

  /**
   * Starts building the base in steps instead of at the first read (a large collection: sorting a
   * million keys at once holds the event loop for a second or more); {@link buildStep} does the
   * work a slice at a time. A first build: until {@link ready}, callers sort their candidates
   * themselves. A re-sort (see {@link refresh}): readers keep the current base and its changed
   * slots meanwhile. Slots written after their key was read become the changed slots of the new
   * base: readers skip their positions and merge them in by their keys.
   */
  beginSteps(): void {
    this.steps = { next: 0, keys: [], ids: [], runs: [], after: new Set(), merge: undefined };
  }

  /**
   * One slice of a build begun by {@link beginSteps}: reads the keys of the next
   * `stepSize` ({@link SORT_BUILD_STEP}) slots of `docs` (the collection's documents by slot, new
   * ones included: reading resumes when slots were added) and sorts them into a run, or merges up
   * to that many slots of two runs; the last merge makes the base. Returns true
   * when the index is {@link ready}. Runs are ordered by the keys as read, never by keys changed
   * since (a changed slot is merged in at read time, see {@link write}).
   */
  buildStep(docs: ReadonlyArray<{ doc: Doc } | undefined>): boolean {
    const st = this.steps;
    if (!st) return true;
    const cmp = (a: number, b: number): number => {
      const c = compareValues(st.keys[a], st.keys[b]);
      if (c !== 0) return c;
      const x = st.ids[a]!;
      const y = st.ids[b]!;
      return x < y ? -1 : x > y ? 1 : 0;
    };
    if (st.next < docs.length) {
      const end = Math.min(docs.length, st.next + this.stepSize);
      const live: number[] = [];
      for (let slot = st.next; slot < end; slot++) {
        const entry = docs[slot];
        if (!entry) continue;
        if (!this.built) this.setKey(slot, entry.doc); // (a built index has every key current)
        st.keys[slot] = this.keys[slot];
        st.ids[slot] = this.ids[slot];
        live.push(slot);
      }
      live.sort(cmp);
      st.runs.push(Int32Array.from(live));
      st.next = end;
      return false;
    }
    if (!st.merge) {
      if (st.runs.length > 1) {
        const a = st.runs.shift()!;
        const b = st.runs.shift()!;
        st.merge = { a, b, out: new Int32Array(a.length + b.length), i: 0, j: 0 };
      } else {
        this.finishSteps(st.runs[0] ?? new Int32Array(0), st);
        return true;
      }
    }
    const m = st.merge;
    const { a, b, out } = m;
    let { i, j } = m;
    const stop = Math.min(out.length, i + j + this.stepSize);
    for (let k = i + j; k < stop; k++) {
      if (j >= b.length || (i < a.length && cmp(a[i]!, b[j]!) <= 0)) out[k] = a[i++]!;
      else out[k] = b[j++]!;
    }
    m.i = i;
    m.j = j;
    if (i + j === out.length) {
      st.runs.push(out);
      st.merge = undefined;
    }
    return false;
  }

  /** The last step: `base` (every slot read, ordered by its keys as read) becomes the index's base. */
  private finishSteps(base: Int32Array<ArrayBuffer>, st: Steps): void {
    this.setBase(base, st.keys, Math.max(this.ids.length, st.ids.length));
    this.steps = undefined;
    this.changedMark.fill(0);
    this.changed = [];
    for (const slot of st.after) this.markChanged(slot);
  }

  /**
   * Makes `base` (slots ordered by `keys`, then `_id`) the index's base: each slot's position and,
   * when keys repeat, each position's run of equal keys. `slots`: the slot count (positions array length).
   */
  private setBase(base: Int32Array<ArrayBuffer>, keys: readonly unknown[], slots: number): void {
    this.base = base;
    const posOf = new Int32Array(slots).fill(-1);
    let runs: Int32Array | undefined;
    for (let k = 0; k < base.length; k++) {
      posOf[base[k]!] = k;
      if (k > 0 && compareValues(keys[base[k]!], keys[base[k - 1]!]) === 0) {
        if (!runs) runs = Int32Array.from({ length: base.length }, (_, p) => p);
        runs[k] = runs[k - 1]!;
      }
    }
    this.posOf = posOf;
    this.runStart = runs;
    this.built = true;
  }

  private markChanged(slot: number): void {
    if (slot >= this.changedMark.length) {
      const grown = new Uint8Array(Math.max(slot + 1, this.changedMark.length * 2, 1_024));
      grown.set(this.changedMark);
      this.changedMark = grown;
    }
    if (this.changedMark[slot] === 1) return;
    this.changedMark[slot] = 1;
    this.changed.push(slot);
  }

  /**
   * Calls `visit` with live slots in `sort` order until it returns false. `sort` must be
   * `{[field]: ±1}` optionally followed by `{_id: ±1}` (see {@link SortIndex.serves}).
   */
  walk(sort: Sort, visit: (slot: number) => boolean): void {
    this.refresh();
    const [dir, idDir] = directions(sort);
    const base = this.base;
    if (this.changed.length === 0) {
      // nothing written since the build: the base is the order (runs of equal keys reversed when
      // `_id` runs against the walk)
      const runs = idDir === dir ? undefined : this.runStart;
      if (dir === 1) {
        for (let k = 0; k < base.length; ) {
          let end = k + 1;
          if (runs) while (end < base.length && runs[end] === k) end++;
          if (end === k + 1) {
            if (!visit(base[k]!)) return;
          } else for (let p = end - 1; p >= k; p--) if (!visit(base[p]!)) return;
          k = end;
        }
      } else {
        for (let k = base.length - 1; k >= 0; ) {
          const start = runs ? runs[k]! : k;
          if (start === k) {
            if (!visit(base[k]!)) return;
          } else for (let p = start; p <= k; p++) if (!visit(base[p]!)) return;
          k = start - 1;
        }
      }
      return;
    }
    const cmp = (a: number, b: number) => this.compare(a, b);
    const fresh = this.changed.filter((s) => this.ids[s] !== undefined).sort(cmp);
    const mark = this.changedMark;
    // One ascending (key, _id) stream: the base without changed slots, merged with the changed ones.
    let i = dir === 1 ? 0 : base.length - 1;
    let j = dir === 1 ? 0 : fresh.length - 1;
    const next = (): number => {
      while (i >= 0 && i < base.length && mark[base[i]!] === 1) i += dir;
      const b = i >= 0 && i < base.length ? base[i]! : -1;
      const f = j >= 0 && j < fresh.length ? fresh[j]! : -1;
      if (b < 0 && f < 0) return -1;
      if (f < 0 || (b >= 0 && cmp(b, f) * dir < 0)) {
        i += dir;
        return b;
      }
      j += dir;
      return f;
    };
    if (idDir === dir) {
      for (let s = next(); s >= 0; s = next()) if (!visit(s)) return;
      return;
    }
    // `_id` runs against the walk: emit each run of equal keys reversed.
    let group: number[] = [];
    for (let s = next(); ; s = next()) {
      if (group.length > 0 && (s < 0 || compareValues(this.keys[s], this.keys[group[0]!]) !== 0)) {
        for (let k = group.length - 1; k >= 0; k--) if (!visit(group[k]!)) return;
        group = [];
      }
      if (s < 0) return;
      group.push(s);
    }
  }

  /**
   * The first `n` of the `candidates` (live slots) in `sort` order that `accept` takes (all when
   * omitted; it is asked only about candidates that would make the first `n` so far): a top-`n`
   * selection by base position, without sort keys for the slots unchanged since the build (their
   * positions are their order), comparing the keys of the others. For a page of a candidate set too
   * sparse to walk. `sort` as for {@link walk}.
   */
  top(sort: Sort, candidates: Slots, n: number, accept?: (slot: number) => boolean): number[] {
    this.refresh();
    if (!(n > 0)) return [];
    const [dir, idDir] = directions(sort);
    if (this.changed.length === 0 && this.base.length < RANK_SPAN) return this.topByRank(dir, idDir, candidates, n, accept);
    const pos = this.posOf;
    const runs = this.runStart;
    const mark = this.changedMark;
    const keys = this.keys;
    const ids = this.ids;
    const cmp = (a: number, b: number): number => {
      if (mark[a] !== 1 && mark[b] !== 1) {
        // both unchanged since the build: their positions are their order
        const pa = pos[a]!;
        const pb = pos[b]!;
        const ga = runs ? runs[pa]! : pa;
        const gb = runs ? runs[pb]! : pb;
        return ga !== gb ? (ga - gb) * dir : (pa - pb) * idDir;
      }
      const c = compareValues(keys[a], keys[b]);
      if (c !== 0) return c * dir;
      const x = ids[a]!;
      const y = ids[b]!;
      return (x < y ? -1 : x > y ? 1 : 0) * idDir;
    };
    const best: number[] = [];
    forEachSlot(candidates, (slot) => {
      if (best.length === n && cmp(slot, best[n - 1]!) >= 0) return;
      if (accept && !accept(slot)) return;
      let lo = 0;
      let hi = best.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (cmp(slot, best[mid]!) < 0) hi = mid;
        else lo = mid + 1;
      }
      best.splice(lo, 0, slot);
      if (best.length > n) best.pop();
    });
    return best;
  }

  /**
   * {@link top} while nothing changed since the build: each slot's order is one number, its base
   * position (with its run of equal keys first when `_id` runs against the sort), compared as such.
   */
  private topByRank(dir: 1 | -1, idDir: 1 | -1, candidates: Slots, n: number, accept?: (slot: number) => boolean): number[] {
    const pos = this.posOf;
    const runs = idDir !== dir ? this.runStart : undefined;
    // the best so far in `best`, their ranks in `ranks` (ascending); once full, a candidate must beat `worst`
    const best: number[] = [];
    const ranks: number[] = [];
    let worst = Infinity;
    forEachSlot(candidates, (slot) => {
      const p = pos[slot]!;
      const r = runs ? runs[p]! * dir * RANK_SPAN + p * idDir : p * dir;
      if (r >= worst || (accept && !accept(slot))) return;
      let lo = 0;
      let hi = ranks.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (r < ranks[mid]!) hi = mid;
        else lo = mid + 1;
      }
      ranks.splice(lo, 0, r);
      best.splice(lo, 0, slot);
      if (best.length > n) {
        ranks.pop();
        best.pop();
      }
      if (best.length === n) worst = ranks[n - 1]!;
    });
    return best;
  }

  /** True when a walk can give `sort`'s order: this field, then at most `_id`; descending only without array values. */
  serves(sort: Sort): boolean {
    const keys = Object.keys(sort);
    if (keys[0] !== this.field || keys.length > 2 || (keys.length === 2 && keys[1] !== '_id')) return false;
    return sort[this.field] === 1 || this.multi.size === 0;
  }

  private compare(a: number, b: number): number {
    const c = compareValues(this.keys[a], this.keys[b]);
    if (c !== 0) return c;
    const x = this.ids[a]!;
    const y = this.ids[b]!;
    return x < y ? -1 : x > y ? 1 : 0;
  }

  /**
   * Rebuilds the base when it was never built or too many slots changed since (max(1,024, 1/16
   * of the base): readers merge the changed slots in, sorting them, on every read). With a
   * {@link background} that takes it, a re-sort starts in steps from max(1,024, 1/64 of the base)
   * changed slots and readers keep the current base meanwhile; at once only if the changed slots
   * still reach the 1/16 mark.
   */
  private refresh(): void {
    if (!this.built) return this.rebuild();
    const changed = this.changed.length;
    if (changed <= Math.max(this.minRebuild, this.base.length >> 6)) return;
    if (!this.steps && this.background) {
      this.beginSteps();
      if (!this.background(this)) this.steps = undefined;
    }
    if (changed <= Math.max(this.minRebuild, this.base.length >> 4)) return;
    this.rebuild();
  }

  private rebuild(): void {
    this.steps = undefined; // (a re-sort in steps still running is overtaken)
    const live: number[] = [];
    for (let s = 0; s < this.ids.length; s++) if (this.ids[s] !== undefined) live.push(s);
    live.sort((a, b) => this.compare(a, b));
    this.setBase(Int32Array.from(live), this.keys, this.ids.length);
    this.changed = [];
    this.changedMark.fill(0);
  }
}

/** Calls `visit` with each member of `s` in ascending order (for one caller's visitor: it stays inlined). */
function forEachSlot(s: Slots, visit: (slot: number) => void): void {
  if (s.arr) {
    const arr = s.arr;
    for (let i = 0; i < arr.length; i++) visit(arr[i]!);
    return;
  }
  const words = s.bits!;
  for (let w = 0; w < words.length; w++) {
    for (let x = words[w]!; x !== 0; ) {
      const low = x & -x;
      visit((w << 5) + 31 - Math.clz32(low));
      x ^= low;
    }
  }
}

/** The walk direction of a sort a {@link SortIndex} serves, and the direction of its `_id` tie-breaker. */
function directions(sort: Sort): [1 | -1, 1 | -1] {
  const [field, id] = Object.keys(sort);
  const dir = sort[field!]!;
  return [dir, id === undefined ? dir : sort[id]!];
}
