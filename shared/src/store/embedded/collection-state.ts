import { AppError } from '../../errors/index.js';
import type { Doc, Filter, Sort } from '../port.js';
import { compileFilter, plainJson, type Matcher } from './matcher.js';
import { andAll, hasSlot, orSlots, Posting, slotsOf, type Slots } from './slots.js';
import { SortIndex } from './sort-index.js';
import type { TextCandidates } from './text-index.js';
import { hashKeysAt, isHashable, valueAt, valuesAt } from './values.js';
import { examine } from './scan-clock.js';

/**
 * A stored document, its version (a store-wide sequence number bumped on every write) and its
 * slot (its position in the collection, fixed for the document's life; see `slots.ts`).
 */
export interface Entry {
  doc: Doc;
  version: number;
  slot: number;
  /** The sqlite rowid of the document's journal row (0 in a store without a file). */
  rowid: number;
}

/** Key of a missing or null field in a compound unique index (MongoDB indexes both as null). */
const NULL_KEY = 'z';

/**
 * A key of a {@link HashIndex}. A single-field index is keyed by the field's scalar values
 * themselves (a string, number or boolean; `null` for a missing field in a unique index): a
 * `Map` tells `"1"` from `1` and `true` from `"true"` (SameValueZero), as {@link hashKey}'s
 * prefixes do, without building a key string per document and index. A compound (unique) index
 * is keyed by its fields' {@link hashKey}s joined.
 */
export type IndexKey = string | number | boolean | null;

const isScalar = (v: unknown): v is string | number | boolean => typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean';

/** The scalars at a path, each once: elements of leaf arrays one by one (as {@link hashKeysAt}). */
function scalarsAt(doc: Doc, path: readonly string[]): IndexKey[] {
  const one = valueAt(doc, path);
  if (one === undefined) return [];
  if (isScalar(one)) return [one];
  const keys = new Set<IndexKey>();
  for (const v of valuesAt(doc, path)) {
    if (Array.isArray(v)) {
      for (const el of v) if (isScalar(el)) keys.add(el);
    } else if (isScalar(v)) keys.add(v);
  }
  return [...keys];
}

/**
 * An in-memory hash index: key of a field value → slots of the documents holding it. Array fields
 * index each element. Single-field indexes answer equality and `$in` conditions (docs/store.md
 * "Indexes and plans"); a `unique` index also enforces uniqueness of its (possibly compound) key.
 */
export class HashIndex {
  /**
   * Key → its slots: a single slot as a plain number (most keys of a near-unique field such as
   * `created_at` hold one document: no Posting object for them), more as a {@link Posting}.
   */
  private readonly map = new Map<IndexKey, Posting | number>();
  private readonly paths: string[][];
  /** The path of a single-field index (its fast path: no key array per document). */
  private readonly path: string[] | undefined;
  /**
   * Slots below this one are indexed (`Infinity`: every slot, the index is filled). Lower while the
   * index is declared but not filled yet ({@link CollectionState.addIndex}: a near-unique index
   * left for its first use, or one being filled after the load, in steps): writes to slots at or
   * above it skip the index (the fill reads their documents as they are then), and the first lookup
   * fills the rest at once.
   */
  filledUpTo = Infinity;
  /** Filled by its first lookup only, never in the background (a near-unique index: {@link CollectionState.nearUnique}). */
  firstUse = false;

  /** True until every slot is indexed (see {@link filledUpTo}). */
  get unfilled(): boolean {
    return this.filledUpTo !== Infinity;
  }

  /** Whether the index holds `slot`'s document (a write to it must update the index). */
  covers(slot: number): boolean {
    return slot < this.filledUpTo;
  }

  constructor(
    readonly fields: readonly string[],
    readonly unique: boolean,
    /** A sparse index (IndexSpec.sparse): a document holding none of the fields has no key in it. */
    readonly sparse = false,
  ) {
    this.paths = fields.map((f) => f.split('.'));
    this.path = this.paths.length === 1 ? this.paths[0] : undefined;
  }

  /** The index keys of a document (see {@link IndexKey}; compound keys: the cartesian product of field keys). */
  keys(doc: Doc): IndexKey[] {
    if (this.path) {
      const keys = scalarsAt(doc, this.path);
      return keys.length === 0 && this.unique && !this.sparse ? [null] : keys;
    }
    const held = this.paths.map((p) => hashKeysAt(doc, p));
    if (this.sparse && held.every((ks) => ks.length === 0)) return [];
    const perField = held.map((keys) => (keys.length === 0 && this.unique ? [NULL_KEY] : keys));
    return perField.reduce<string[]>((acc, ks) => acc.flatMap((a) => ks.map((k) => `${a}\u0000${k}`)), ['']);
  }

  /** The key a single-field index files `value` under (`undefined`: not indexable, no document holds it). */
  keyOf(value: unknown): IndexKey | undefined {
    return isScalar(value) ? value : undefined;
  }

  /** How many distinct keys the index holds. */
  get keyCount(): number {
    return this.map.size;
  }

  /** The slots holding `key` (live view, valid until the next write), or undefined for none. */
  slots(key: IndexKey): Slots | undefined {
    const held = this.map.get(key);
    return typeof held === 'number' ? { size: 1, arr: [held] } : held;
  }

  /** Indexes the document in `slot`; `slotCount` sizes bitmaps. */
  add(slot: number, doc: Doc, slotCount: number, keys?: readonly IndexKey[]): void {
    if (!keys && this.path) {
      // the common case without a key array: one scalar at the path
      const one = valueAt(doc, this.path);
      if (isScalar(one)) {
        this.addKey(one, slot, slotCount);
        return;
      }
      if (one === undefined && (!this.unique || this.sparse)) return;
    }
    for (const k of keys ?? this.keys(doc)) this.addKey(k, slot, slotCount);
  }

  private addKey(k: IndexKey, slot: number, slotCount: number): void {
    const held = this.map.get(k);
    if (held === undefined) this.map.set(k, slot);
    else if (typeof held !== 'number') held.add(slot, slotCount);
    else if (held !== slot) {
      const posting = new Posting();
      posting.add(Math.min(held, slot), slotCount);
      posting.add(Math.max(held, slot), slotCount);
      this.map.set(k, posting);
    }
  }

  /** Drops the document in `slot` from the keys `keys` (default: all of `doc`'s). */
  remove(slot: number, doc: Doc, keys: readonly IndexKey[] = this.keys(doc)): void {
    for (const k of keys) {
      const held = this.map.get(k);
      if (typeof held === 'number') {
        if (held === slot) this.map.delete(k);
        continue;
      }
      held?.remove(slot);
      if (held?.size === 0) this.map.delete(k);
    }
  }

  /**
   * Re-indexes a document whose content changed, touching only the keys that differ. Nothing to do
   * when every indexed field's top-level value is the same value or object in both (stored
   * documents are never changed, and updates share what they do not write).
   */
  replace(slot: number, before: Doc, after: Doc, slotCount: number): void {
    if (this.paths.every((p) => before[p[0]!] === after[p[0]!])) return;
    const old = this.keys(before);
    const next = this.keys(after);
    if (old.length === next.length && old.every((k, i) => k === next[i])) return;
    this.remove(slot, before, old.filter((k) => !next.includes(k)));
    this.add(slot, after, slotCount, next.filter((k) => !old.includes(k)));
  }
}

/**
 * The candidates of a filter: `slots` holds every match (`undefined`: every document), and when
 * `exact` the indexes answered the whole filter, so the slots are exactly the matches.
 */
export interface Plan {
  slots: Slots | undefined;
  exact: boolean;
}

const isPlainObject = (v: unknown): v is Filter => typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof RegExp);

/**
 * The equality values a filter condition pins a field to (`v`, `{$eq: v}`, `{$in: [...]}`), when
 * all are strings, numbers or booleans, and whether the condition is nothing but that equality;
 * `undefined` when an index cannot answer it.
 */
function equalityValues(cond: unknown): { values: unknown[]; only: boolean } | undefined {
  if (isHashable(cond)) return { values: [cond], only: true };
  if (!isPlainObject(cond)) return undefined;
  const keys = Object.keys(cond);
  if (!keys.every((k) => k.startsWith('$'))) return undefined;
  const only = keys.length === 1;
  if ('$eq' in cond && isHashable(cond.$eq)) return { values: [cond.$eq], only };
  if (Array.isArray(cond.$in) && cond.$in.every(isHashable)) return { values: cond.$in, only };
  return undefined;
}

/** Most `_id` values a filter may pin for {@link CollectionState} to plan just those documents. */
const PINNED_IDS = 16;

/** The `_id` condition `filter` pins (at its top level or in its `$and` items, at any depth), if few ids. */
function pinnedId(filter: Filter): unknown {
  if ('_id' in filter) {
    const cond = filter._id;
    // a long `$in` pins too many ids whatever its values: not checked here (a list of 200 ids, twice, was a tenth of its read)
    if (isPlainObject(cond) && Array.isArray(cond.$in) && cond.$in.length > PINNED_IDS) return undefined;
    const eq = equalityValues(cond);
    if (eq) return eq.values.length <= PINNED_IDS ? cond : undefined;
  }
  const and = filter.$and;
  if (!Array.isArray(and)) return undefined;
  for (const item of and) {
    const cond = isPlainObject(item) ? pinnedId(item) : undefined;
    if (cond !== undefined) return cond;
  }
  return undefined;
}

/**
 * A sorted page walks the sort index when its expected walk (`n × documents / candidates` slots)
 * is at most this many times the candidates; otherwise the candidates are selected by their sort
 * index positions (see {@link CollectionState.sortedPage}). A walk step reads the next slot in
 * order and tests set membership; a selection step reads the position of a slot anywhere in the
 * collection (a cache miss, mostly): about 4 walk steps per selection step, measured at 110,000
 * documents.
 */
const WALK_PER_CANDIDATE = 4;

/** How many sorted pages a collection keeps while it is unchanged (see {@link CollectionState.sortedPage}). */
export const KEPT_PAGES = 64;

/** Filters with more values than this are not kept (their key would cost more than it saves). */
const MAX_KEPT_FILTER_VALUES = 512;

/**
 * The key of a sorted page request: the filter's and sort's JSON text and `n`, or `undefined` when
 * the filter holds anything but JSON data (a RegExp, a Date, `undefined`), whose text would not
 * tell two filters apart, or more than {@link MAX_KEPT_FILTER_VALUES} values (a long `$in`).
 */
export function pageKey(filter: Filter, sort: Sort, n: number): string | undefined {
  return plainJson(filter, { left: MAX_KEPT_FILTER_VALUES }) ? `${n}\u0000${JSON.stringify(sort)}\u0000${JSON.stringify(filter)}` : undefined;
}

/**
 * When a hash index declared at open gets filled ({@link CollectionState.addIndex}): `'now'` (as it
 * is declared: by the load pass at open), `'after-load'` ({@link CollectionState.fillAfterLoad}),
 * `'first-use'` (by its first lookup).
 */
export type IndexFill = 'now' | 'after-load' | 'first-use';

/**
 * Slots per step of a hash-index fill in the background ({@link CollectionState.fillAfterLoad}):
 * about 20 ms of CPU for the task collection's six indexes filled after the load (≈ 2.5 µs per
 * document, measured at 1,000,000 tasks), so a request arriving meanwhile waits at most that long.
 */
export const HASH_FILL_STEP = 8_192;

/** An index declared `'after-load'` and not filled yet ({@link CollectionState.fillAfterLoad}). */
const pendingAfterLoad = (ix: HashIndex): boolean => ix.unfilled && !ix.firstUse;

/** Collections holding a last plan, forgotten together once the current synchronous run ends. */
let remembering: CollectionState[] = [];

function forgetAfterThisRun(state: CollectionState): void {
  if (remembering.push(state) > 1) return;
  queueMicrotask(() => {
    for (const s of remembering) s.lastPlan = undefined;
    remembering = [];
  });
}

/**
 * A step of a commit that updates a derived structure, where a test may inject a fault
 * (`EmbeddedStoreOptions.faults`): the hash indexes, the sort indexes, the text index's kept
 * searches, a history collection's pending writes, the journal write.
 */
export type CommitStep = 'index' | 'sort-index' | 'text' | 'history' | 'journal';

/** What {@link CollectionState.undo} needs to put back the document one {@link CollectionState.apply} replaced. */
export interface Undo {
  id: string;
  /** The entry before (undefined: none). */
  old: Entry | undefined;
}

/** One collection of the embedded store: its documents (by id and by slot) and its indexes. */
export class CollectionState {
  readonly entries = new Map<string, Entry>();
  /** Entries by slot; a deleted document leaves its slot empty (slots are never reused). */
  readonly bySlot: Array<Entry | undefined> = [];
  private readonly indexes: HashIndex[] = [];
  /** The single-field indexes by field (the ones plans use). */
  private readonly single = new Map<string, HashIndex>();
  /** Bumped by every write and index change; cached plans of an older count are stale. */
  private changes = 0;
  /** The last plan made, reused for the same filter object while nothing changed (a page, then its count). */
  lastPlan: { filter: Filter; changes: number; plan: Plan } | undefined;
  /** Sort indexes by field, built on the first sorted read of an indexed field. */
  private readonly sortIndexes = new Map<string, SortIndex>();
  /** Sorted pages by {@link pageKey}, all made at {@link keptAt} changes (see {@link sortedPage}). */
  private keptPages = new Map<string, { plan: Plan; slots: number[] }>();
  private keptAt = -1;

  /**
   * `text`: the text index's match sets for this collection's text fields (file-backed stores;
   * docs/store.md "Text search"), used by plans for `$regex` conditions on those fields.
   */
  constructor(
    readonly name: string,
    private readonly text?: TextCandidates,
    /**
     * Collection size from which a sort index is built in steps, in the background (see
     * {@link sortIndex}), and the hash indexes declared `'after-load'` are filled so ({@link fillAfterLoad}).
     */
    private readonly sortInStepsFrom = Infinity,
    /** Called before each derived structure a write updates (tests' fault injection: {@link CommitStep}); may throw. */
    private readonly fault?: (step: CommitStep) => void,
  ) {}

  /** Unique indexes, for the uniqueness checks of writes. */
  uniqueIndexes(): HashIndex[] {
    return this.indexes.filter((ix) => ix.unique);
  }

  /**
   * Adds an index unless an equal or stronger one exists; builds it from the stored documents.
   * Returns whether it added one. Throws `CONFLICT` when a unique index meets duplicate keys (the
   * index is then not added). `fill` (a non-unique single-field index only: any other is filled
   * now whatever it says; the store's open uses it for the indexes recorded in the journal,
   * docs/store.md "Indexes and plans"):
   * - `'now'` (default): filled from the stored documents before this returns;
   * - `'first-use'`: declared unfilled, filled by the first plan that looks a key up in it (one
   *   pass over the documents then), so loading and writing skip it until then (an index the last
   *   close found near-unique, see {@link nearUnique});
   * - `'after-load'`: declared unfilled, then filled by {@link fillAfterLoad} (at once in a small
   *   collection, in steps in the background in a large one), or by its first lookup if that
   *   comes first.
   */
  addIndex(fields: readonly string[], unique: boolean, fill: IndexFill = 'now', sparse = false): boolean {
    const same = this.indexes.findIndex((ix) => ix.fields.join() === fields.join());
    const kept = this.indexes[same];
    if (kept && (!unique || (kept.unique && (!kept.sparse || sparse)))) return false;
    const index = new HashIndex(fields, unique, unique && sparse);
    this.changes++;
    if (fill !== 'now' && !unique && fields.length === 1 && same < 0) {
      index.filledUpTo = 0;
      index.firstUse = fill === 'first-use';
      this.indexes.push(index);
      this.single.set(fields[0]!, index);
      return true;
    }
    for (const { doc, slot } of this.entries.values()) {
      if (unique && index.keys(doc).some((k) => index.slots(k)?.size)) {
        throw new AppError('CONFLICT', {
          message: `Duplicate keys prevent a unique index on ${this.name} (${fields.join(', ')})`,
          details: { collection: this.name, fields: [...fields] },
        });
      }
      index.add(slot, doc, this.bySlot.length);
    }
    if (same >= 0) this.indexes[same] = index;
    else this.indexes.push(index);
    if (fields.length === 1) this.single.set(fields[0]!, index);
    return true;
  }

  /** Fills the rest of an index not filled yet (see {@link addIndex}) from the stored documents. */
  private fill(index: HashIndex): void {
    this.fillSlots([index], this.bySlot.length);
  }

  /**
   * Indexes the documents of the slots from each index's {@link HashIndex.filledUpTo} up to `end`
   * (exclusive); an index reaching the last slot is filled.
   */
  private fillSlots(indexes: readonly HashIndex[], end: number): void {
    const slotCount = this.bySlot.length;
    for (const index of indexes) {
      for (let slot = index.filledUpTo; slot < end; slot++) {
        const entry = this.bySlot[slot];
        if (entry) index.add(slot, entry.doc, slotCount);
      }
      if (end >= slotCount) index.filledUpTo = Infinity;
      else if (end > index.filledUpTo) index.filledUpTo = end;
    }
  }

  /**
   * Fills the indexes declared `'after-load'` ({@link addIndex}): at once in a collection of fewer
   * than `sortInStepsFrom` documents (the store's `deferIndexesFrom`), otherwise in steps of
   * {@link HASH_FILL_STEP} slots ({@link fillStep}), one per turn of the event loop, in the
   * background: the store answers meanwhile, and a lookup in an index still filling fills its rest
   * first. `onFilled` is called once the background fill is done (not for a fill at once). At
   * 1,000,000 tasks this takes the hash indexes' ~2.5 s out of the start-up (docs/store.md
   * "Indexes and plans").
   */
  fillAfterLoad(onFilled?: () => void): void {
    if (!this.indexes.some(pendingAfterLoad)) return;
    if (this.bySlot.length < this.sortInStepsFrom) {
      this.fillStep(Infinity);
      return;
    }
    const step = () => {
      if (this.fillStep(HASH_FILL_STEP)) onFilled?.();
      else setImmediate(step).unref();
    };
    setImmediate(step).unref();
  }

  /**
   * One step of {@link fillAfterLoad}: indexes the next `slots` slots (from the least filled
   * index's {@link HashIndex.filledUpTo}) into every index declared `'after-load'` and not filled
   * yet. Returns true once none is left to fill.
   */
  fillStep(slots: number): boolean {
    const indexes = this.indexes.filter(pendingAfterLoad); // (a lookup may have filled some meanwhile)
    if (indexes.length === 0) return true;
    const from = Math.min(...indexes.map((ix) => ix.filledUpTo));
    this.fillSlots(indexes, Math.min(from + slots, this.bySlot.length));
    return !indexes.some(pendingAfterLoad);
  }

  /**
   * The fields of the filled non-unique single-field indexes whose keys are nearly unique (more
   * keys than half the documents: timestamps, orders), when the collection holds at least
   * `minDocs` documents; with their state for the others: `true` near-unique, `false` not.
   * Unfilled indexes are left out (nothing known about them since the open).
   */
  nearUnique(minDocs: number): Map<string, boolean> {
    const out = new Map<string, boolean>();
    const docs = this.entries.size;
    for (const ix of this.indexes) {
      if (ix.unique || ix.unfilled || ix.fields.length !== 1) continue;
      out.set(ix.fields[0]!, docs >= minDocs && ix.keyCount * 2 > docs);
    }
    return out;
  }

  /**
   * Adds a document read from the journal at open ({@link apply} for a new id: every index is
   * filled as it comes; no sort index exists yet). Each id is loaded once (rows are unique by id).
   */
  load(id: string, doc: Doc, version: number, rowid: number): void {
    const slot = this.bySlot.length;
    const entry: Entry = { doc, version, slot, rowid };
    this.bySlot.push(entry);
    this.entries.set(id, entry);
    const slotCount = slot + 1;
    for (let i = 0; i < this.indexes.length; i++) {
      const ix = this.indexes[i]!;
      if (ix.covers(slot)) ix.add(slot, doc, slotCount);
    }
    this.text?.write(slot, undefined, doc, slotCount, rowid);
  }

  /**
   * Stores (or with `null` removes) a document under a new version, maintaining the indexes.
   * `rowid`: the sqlite rowid of its journal row (the text index's key; undefined without a file).
   * Take {@link undoOf} first: when a derived structure (hash, sort or text index) throws, the
   * document itself is already stored, and the caller undoes the commit and calls {@link resetDerived}.
   */
  apply(id: string, doc: Doc | null, version: number, rowid: number | undefined): void {
    const old = this.entries.get(id);
    this.changes++;
    if (!doc) {
      if (!old) return;
      this.bySlot[old.slot] = undefined;
      this.entries.delete(id);
      this.fault?.('index');
      for (const ix of this.indexes) if (ix.covers(old.slot)) ix.remove(old.slot, old.doc);
      this.fault?.('sort-index');
      for (const sx of this.sortIndexes.values()) sx.write(old.slot, null);
      this.fault?.('text');
      this.text?.write(old.slot, old.doc, null, this.bySlot.length, rowid);
      return;
    }
    const slot = old ? old.slot : this.bySlot.length;
    const entry: Entry = { doc, version, slot, rowid: rowid ?? 0 };
    this.bySlot[slot] = entry;
    this.entries.set(id, entry);
    this.fault?.('index');
    for (const ix of this.indexes) {
      if (!ix.covers(slot)) continue; // (a new document's slot is past every index still filling)
      if (old) ix.replace(slot, old.doc, doc, this.bySlot.length);
      else ix.add(slot, doc, this.bySlot.length);
    }
    this.fault?.('sort-index');
    for (const sx of this.sortIndexes.values()) sx.write(slot, doc);
    this.fault?.('text');
    this.text?.write(slot, old?.doc, doc, this.bySlot.length, rowid);
  }

  /** What {@link undo} needs to put back the document of `id` as it is now (take it before {@link apply}). */
  undoOf(id: string): Undo {
    return { id, old: this.entries.get(id) };
  }

  /**
   * Puts back the document {@link apply} replaced (the documents only: call {@link resetDerived}
   * after undoing a commit's writes, newest first). A new document's slot stays empty (slots are
   * never reused). Cannot throw.
   */
  undo(u: Undo): void {
    this.changes++;
    const now = this.entries.get(u.id);
    if (now && now !== u.old) this.bySlot[now.slot] = undefined;
    if (u.old) {
      this.entries.set(u.id, u.old);
      this.bySlot[u.old.slot] = u.old;
    } else this.entries.delete(u.id);
  }

  /**
   * Drops everything derived from the documents and rebuilds it from them, never trusting what a
   * failed commit left (docs/store.md "All or nothing"): unique (and compound) hash indexes are
   * rebuilt now (writes check them), the other hash indexes are emptied and filled again by their
   * first lookup, sort indexes and kept pages are dropped (rebuilt on first use), and the text
   * index forgets its kept searches and re-reads its rowid map.
   */
  resetDerived(): void {
    this.changes++;
    this.lastPlan = undefined;
    this.keptPages = new Map();
    this.keptAt = -1;
    this.sortIndexes.clear();
    for (let i = 0; i < this.indexes.length; i++) {
      const old = this.indexes[i]!;
      const index = new HashIndex(old.fields, old.unique, old.sparse);
      if (!old.unique && old.fields.length === 1) {
        index.filledUpTo = 0;
        index.firstUse = true;
      } else {
        for (const { doc, slot } of this.entries.values()) index.add(slot, doc, this.bySlot.length);
      }
      this.indexes[i] = index;
      if (old.fields.length === 1) this.single.set(old.fields[0]!, index);
    }
    this.text?.reset(this.bySlot);
  }

  /**
   * The sort index that walks `sort`'s order: for a sort on a field with a single-field index
   * (then at most `_id`), built from the stored documents on first use; `undefined` otherwise.
   * In a collection of at least `sortInStepsFrom` documents the first use starts the build in the
   * background instead, in slices of the event loop (`SortIndex.buildStep`: at 1M tasks a build at
   * once held every request for 1–2 s), and answers `undefined` until it is done: the caller sorts
   * its candidates meanwhile. Its later re-sorts (after many writes) run the same way, readers
   * keeping the current order meanwhile.
   */
  sortIndex(sort: Sort): SortIndex | undefined {
    const field = Object.keys(sort)[0];
    if (field === undefined || !this.single.has(field)) return undefined;
    let index = this.sortIndexes.get(field);
    if (!index) {
      // a large collection re-sorts its sort indexes in the background too (SortIndex.refresh)
      index = new SortIndex(field, undefined, (ix) => this.bySlot.length >= this.sortInStepsFrom && (this.buildInSteps(ix), true));
      this.sortIndexes.set(field, index); // from here on every write reaches it
      if (this.bySlot.length >= this.sortInStepsFrom) {
        index.beginSteps();
        this.buildInSteps(index);
      } else {
        for (const entry of this.bySlot) if (entry) index.write(entry.slot, entry.doc);
      }
    }
    return index.ready && index.serves(sort) ? index : undefined;
  }

  /**
   * Whether a sorted page of `sort` is normally read from a sort index ({@link sortIndex}: one
   * field with a single-field index, then at most `_id`), whose ties go by `_id`.
   */
  sortsByIndex(sort: Sort): boolean {
    const keys = Object.keys(sort);
    return keys.length > 0 && this.single.has(keys[0]!) && (keys.length === 1 || (keys.length === 2 && keys[1] === '_id'));
  }

  /** Runs the steps of `index`'s build, one per turn of the event loop (not keeping the process alive). */
  private buildInSteps(index: SortIndex): void {
    const step = () => {
      if (!index.buildStep(this.bySlot)) setImmediate(step).unref();
    };
    setImmediate(step).unref();
  }

  /**
   * The first `n` matches of `filter` in `sort` order, from the committed documents (a read outside
   * a transaction; docs/store.md "Indexes and plans"), or `undefined` when no sort index serves
   * `sort` (the caller sorts the matches). With few candidates per document the sort index is
   * walked until `n` matches are met; with more scattered ones, the candidates are ranked by their
   * sort index positions and only the best `n` kept (no sort keys computed, no documents collected).
   * A plan that is not exact has each candidate it keeps tested against `filter`. `stats` counts
   * the documents examined. The last {@link KEPT_PAGES} pages (by filter, sort and `n`, for
   * filters of plain JSON data) are kept until the collection changes: the same page asked again
   * of an unchanged collection (a board or a query polled by many clients) is handed out from its
   * kept slots, with its plan kept for the count asked with it (nothing examined).
   */
  sortedPage(filter: Filter, sort: Sort, n: number, stats: { docsExamined: number }): Doc[] | undefined {
    if (!(n > 0) || !Number.isFinite(n)) return undefined;
    if (this.keptAt !== this.changes) {
      // a new map, not clear(): a cleared map links its old table to the new one (history.ts RecentDocs)
      if (this.keptPages.size > 0) this.keptPages = new Map();
      this.keptAt = this.changes;
    }
    const key = pageKey(filter, sort, n);
    const kept = key === undefined ? undefined : this.keptPages.get(key);
    if (kept) {
      // the same page of the same unchanged collection: its plan serves the count asked with it
      if (!this.lastPlan) forgetAfterThisRun(this);
      this.lastPlan = { filter, changes: this.changes, plan: kept.plan };
      return kept.slots.map((slot) => this.bySlot[slot]!.doc);
    }
    const page = this.pageOf(filter, sort, n, stats);
    if (page && key !== undefined) {
      this.keptPages.set(key, { plan: this.plan(filter), slots: page });
      if (this.keptPages.size > KEPT_PAGES) this.keptPages.delete(this.keptPages.keys().next().value!);
    }
    return page?.map((slot) => this.bySlot[slot]!.doc);
  }

  /** The slots of {@link sortedPage}'s page, in order (`undefined`: no sort index serves `sort`). */
  private pageOf(filter: Filter, sort: Sort, n: number, stats: { docsExamined: number }): number[] | undefined {
    const { slots, exact } = this.plan(filter);
    const candidates = slots ? slots.size : this.entries.size;
    if (candidates === 0) return [];
    const index = this.sortIndex(sort);
    if (!index) return undefined;
    let matches: Matcher | undefined;
    const test = (slot: number): boolean => {
      examine(stats);
      const entry = this.bySlot[slot];
      return entry !== undefined && (exact || (matches ??= compileFilter(filter))(entry.doc));
    };
    const walk = (n * this.entries.size) / candidates;
    if (!slots || walk <= WALK_PER_CANDIDATE * candidates) {
      const out: number[] = [];
      index.walk(sort, (slot) => {
        if ((slots && !hasSlot(slots, slot)) || !test(slot)) return true;
        out.push(slot);
        return out.length < n;
      });
      return out;
    }
    let picked: number[];
    if (exact) {
      picked = index.top(sort, slots, n);
      examine(stats, picked.length);
    } else picked = index.top(sort, slots, n, test);
    // (plan sets hold live slots only; a missing entry would be skipped, never handed out)
    return picked.filter((slot) => this.bySlot[slot] !== undefined);
  }

  /**
   * The plan of a filter: the intersection of the index sets of its conditions. Answered by an
   * index: equality or `$in` on `_id` or an indexed field, at the top level or inside `$and`, and a
   * `$or` whose every branch has a set (their union). The plan is exact when every condition was
   * answered that way; otherwise callers test each candidate against the whole filter. The last
   * plan is reused for the same filter object within one synchronous run while the collection is
   * unchanged (a page and its count, asked together, are planned once).
   */
  plan(filter: Filter): Plan {
    const last = this.lastPlan;
    if (last && last.filter === filter && last.changes === this.changes) return last.plan;
    const plan = this.pinnedPlan(filter) ?? this.indexPlan(filter);
    // kept for the calls made in the same synchronous run only (a page and its count started together)
    if (!this.lastPlan) forgetAfterThisRun(this);
    this.lastPlan = { filter, changes: this.changes, plan };
    return plan;
  }

  private indexPlan(filter: Filter): Plan {
    const sets: Slots[] = [];
    const exact = this.collect(filter, sets);
    return { slots: andAll(sets), exact };
  }

  /**
   * The plan of a filter that pins `_id` (equality, or `$in` of at most {@link PINNED_IDS} values,
   * at the top level or inside `$and`, at any depth): those documents only, without looking up the
   * other conditions, which the candidates are tested against instead. Exact when `_id` is the
   * whole filter. `undefined` for other filters.
   */
  private pinnedPlan(filter: Filter): Plan | undefined {
    const cond = pinnedId(filter);
    if (cond === undefined) return undefined;
    const { slots, exact } = this.lookup('_id', cond)!;
    return { slots, exact: exact && filter._id === cond && Object.keys(filter).length === 1 };
  }

  /** Pushes the sets every match of `filter` is in; returns whether they answer it exactly. */
  private collect(filter: Filter, sets: Slots[]): boolean {
    let exact = true;
    for (const key of Object.keys(filter)) {
      const cond = filter[key];
      if (key === '$and' && Array.isArray(cond) && cond.length > 0 && cond.every(isPlainObject)) {
        for (const sub of cond as Filter[]) exact = this.collect(sub, sets) && exact;
      } else if (key === '$or' && Array.isArray(cond) && cond.length > 0 && cond.every(isPlainObject)) {
        const branches = (cond as Filter[]).map((b) => {
          const own: Slots[] = [];
          const branchExact = this.collect(b, own);
          return { slots: andAll(own), exact: branchExact };
        });
        if (branches.every((b) => b.slots)) sets.push(orSlots(branches.map((b) => b.slots!)));
        exact &&= branches.every((b) => b.slots && b.exact);
      } else {
        const set = key.startsWith('$') ? undefined : this.lookup(key, cond);
        if (set) sets.push(set.slots);
        exact &&= set?.exact ?? false;
      }
    }
    return exact;
  }

  private lookup(field: string, cond: unknown): { slots: Slots; exact: boolean } | undefined {
    const eq = equalityValues(cond);
    if (!eq && this.text) {
      // a substring condition on a text field: its exact match set, from the text index
      const slots = this.text.matches(field, cond, this.bySlot);
      return slots && { slots, exact: true };
    }
    if (!eq) return undefined;
    if (field === '_id') return { slots: this.idSlots(eq.values), exact: eq.only };
    const index = this.single.get(field);
    if (!index) return undefined;
    if (index.unfilled) this.fill(index);
    const sets: Slots[] = [];
    for (const v of eq.values) {
      const set = index.slots(index.keyOf(v)!);
      if (set) sets.push(set);
    }
    return { slots: orSlots(sets), exact: eq.only };
  }

  /** The set of the stored documents whose `_id` is one of `ids`. */
  private idSlots(ids: readonly unknown[]): Slots {
    const found: number[] = [];
    for (const id of ids) {
      const slot = typeof id === 'string' ? this.entries.get(id)?.slot : undefined;
      if (slot !== undefined) found.push(slot);
    }
    return slotsOf(found);
  }

}
