import { randomUUID } from 'node:crypto';
import { AppError } from '../../errors/index.js';
import type { Doc, Filter, Sort, Update } from '../port.js';
import type { CollectionState, HashIndex, IndexKey } from './collection-state.js';
import type { HistoryCollection } from './history.js';
import { lazyMatcher, type Matcher } from './matcher.js';
import { eachSlot, hasSlot } from './slots.js';
import { applyUpdate, applyWithMingo } from './updater.js';
import { deepFreeze } from '../../util/index.js';
import { sortDocs, THROUGH_ARRAY, toStored, valueAt } from './values.js';
import { bsonSize, checkDocument, checkUpdate, describe, documentTooLarge, MAX_DOCUMENT_BYTES, notIncrementable, sizeBound } from '../rules.js';
import { examine } from './scan-clock.js';

/** What a {@link Txn} needs from its store. */
export interface TxnHost {
  state(collection: string): CollectionState;
  /** The history collection of that name (history.ts), or undefined for an in-memory one. */
  history(collection: string): HistoryCollection | undefined;
  /** The store's write version now (the last one given). */
  version(): number;
  readonly stats: { docsExamined: number };
}

/** One pending write: the new document, or `null` for a delete. */
export interface Change {
  collection: string;
  id: string;
  doc: Doc | null;
  /**
   * Set by the store's commit for a written document of a text collection: bit `i` set when
   * `TEXT_FIELDS[collection][i]` differs from the stored version (every bit for a new document);
   * 0 when the text is unchanged (the journal keeps its FTS rows). Undefined (a delete): every field.
   * The journal rewrites the FTS rows of the changed fields only (text-index.ts).
   */
  textChanged?: number;
  /**
   * Set by the store's commit (file-backed): the sqlite rowid of the document's row, which is also
   * its FTS key; a new document gets the next one from the store (the journal addresses rows by it).
   */
  rowid?: number;
  /** Set by the store's commit: no stored document had this id before (the journal inserts its row). */
  inserted?: boolean;
  /**
   * Set by the store's commit for a new document or new text of a text collection (the slot it
   * holds): a candidate of every text search until the journal has written it (text-index.ts `journaled`).
   */
  textSlot?: number;
}

/** Result of {@link Txn.update}. `before`/`after` are the last matched document (internal refs). */
export interface TxnUpdateResult {
  matchedCount: number;
  modifiedCount: number;
  upsertedId?: string;
  before: Doc | null;
  after: Doc | null;
}

function conflict(collection: string, fields: readonly string[]): AppError {
  return new AppError('CONFLICT', {
    message: `Duplicate key in ${collection} (${fields.join(', ')})`,
    details: { collection, fields: [...fields] },
  });
}

function mapFor<V>(maps: Map<string, Map<string, V>>, key: string): Map<string, V> {
  let m = maps.get(key);
  if (!m) maps.set(key, (m = new Map()));
  return m;
}

const NO_LITERAL = Symbol('no literal');

/**
 * A sort-index walk is taken when its expected length (`n × documents / candidates` slots) is at
 * most this many times the candidates, whose keys a sort would compute and compare.
 */
const WALK_PER_CANDIDATE = 4;

/**
 * Throws `PAYLOAD_TOO_LARGE` when `after` (a document an update made) is over MongoDB's document
 * limit: an upper bound of its size first ({@link sizeBound}, one pass without allocation; cheaper
 * than keeping a size per stored document), its exact BSON size only when that passes the limit.
 */
function checkGrowth(collection: string, after: Doc): void {
  if (sizeBound(after) <= MAX_DOCUMENT_BYTES) return;
  const bytes = bsonSize(after);
  if (bytes > MAX_DOCUMENT_BYTES) throw documentTooLarge(collection, bytes);
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Throws `VALIDATION_FAILED` when an `$inc` path of `doc` holds something other than a number (MongoDB TypeMismatch). */
function checkIncrementable(collection: string, doc: Doc, increments: Record<string, unknown>): void {
  for (const path in increments) {
    let v: unknown = doc;
    for (const seg of path.split('.')) {
      if (Array.isArray(v)) v = /^\d+$/.test(seg) ? v[Number(seg)] : undefined;
      else v = isPlainObject(v) ? v[seg] : undefined;
      if (v === undefined) break;
    }
    if (v !== undefined && typeof v !== 'number') throw notIncrementable(collection, path, describe(v));
  }
}

/** The value an upsert takes from one filter condition: a literal or `{$eq: v}` (MongoDB rules). */
function literal(cond: unknown): unknown {
  if (typeof cond !== 'object' || cond === null || Array.isArray(cond)) return cond;
  if (cond instanceof RegExp) return NO_LITERAL;
  const keys = Object.keys(cond);
  if (!keys.some((k) => k.startsWith('$'))) return cond;
  return '$eq' in cond ? (cond as { $eq: unknown }).$eq : NO_LITERAL;
}

/** The fields an upserted document starts with: the equality conditions of the filter. */
function equalityFields(filter: Filter, out: Record<string, unknown> = {}): Record<string, unknown> {
  for (const [key, cond] of Object.entries(filter)) {
    if (key === '$and' && Array.isArray(cond)) for (const sub of cond) equalityFields(sub as Filter, out);
    else if (!key.startsWith('$') && literal(cond) !== NO_LITERAL) out[key] = literal(cond);
  }
  return out;
}

/**
 * A unit of work over the embedded store: writes collect in an overlay (collection → id → new
 * document or `null`), reads see the stored documents with the overlay on top. A non-transactional
 * call uses a fresh Txn and commits it at once; `withTransaction` keeps one per attempt. With
 * `tracksReads`, the version of every document first read or written is remembered so the commit
 * can detect writes made meanwhile by others (docs/architecture.md §2, docs/store.md).
 */
export class Txn {
  /** Made on the first write (most units only read). */
  private writes: Map<string, Map<string, Doc | null>> | undefined;
  /** Made on the first read of a transaction's unit. */
  private seen: Map<string, Map<string, number>> | undefined;

  /** The store version when this unit started (history collections' conflict check: {@link isCurrent}). */
  private readonly startedAt: number;

  constructor(
    private readonly host: TxnHost,
    private readonly tracksReads: boolean,
  ) {
    this.startedAt = tracksReads ? host.version() : 0;
  }

  /**
   * The matches of `filter` in a history collection (history.ts) as seen by this unit: the
   * committed ones (SQL and the pending writes) not overridden by this unit, then its own writes;
   * in `sort` order and at most `n` when sorted, else the first `n`.
   */
  matchHistory(history: HistoryCollection, collection: string, filter: Filter, sort: Sort | undefined, n: number): Doc[] {
    if (n <= 0) return [];
    const writes = this.writes?.get(collection);
    const out = history.scan(filter, sort, n, writes, this.host.stats);
    if (writes) {
      let matches: Matcher | undefined;
      for (const doc of writes.values()) if (doc && (matches ??= lazyMatcher(filter))(doc)) out.push(doc);
    }
    const page = sort && writes ? sortDocs(out, sort, n) : out.length > n ? out.slice(0, n) : out;
    for (const doc of page) this.observe(collection, doc._id);
    return page;
  }

  /**
   * Documents matching `filter` (at most `limit`), as seen by this unit: internal refs, never hand
   * out. Candidates are the stored documents of the filter's plan (in slot order) not overridden by
   * this unit, then the unit's own writes; a candidate is tested against the filter unless the plan
   * is exact (docs/store.md "Indexes and plans").
   */
  match(collection: string, filter: Filter, limit = Infinity): Doc[] {
    const history = this.host.history(collection);
    if (history) return this.matchHistory(history, collection, filter, undefined, limit);
    const state = this.host.state(collection);
    const writes = this.writes?.get(collection);
    const { slots, exact } = state.plan(filter);
    const out: Doc[] = [];
    if (limit <= 0) return out;
    const take = this.collector(collection, filter, exact, limit, out);
    const visit = (slot: number): boolean => {
      const entry = state.bySlot[slot];
      return !entry || writes?.has(entry.doc._id) === true || take(entry.doc);
    };
    if (slots) {
      if (!eachSlot(slots, visit)) return out;
    } else {
      for (let slot = 0; slot < state.bySlot.length; slot++) if (!visit(slot)) return out;
    }
    // the unit's own writes are always tested against the filter
    const takeWritten = this.collector(collection, filter, false, limit, out);
    for (const doc of writes?.values() ?? []) if (doc && !takeWritten(doc)) break;
    return out;
  }

  /**
   * The first `n` matches of `filter` in `sort` order, walked from a sort index (docs/store.md
   * "Indexes and plans"); `undefined` when this unit has pending writes to the collection, no
   * sort index serves `sort`, or sorting the plan's candidates is expected to be cheaper (the walk
   * visits about `n × documents / candidates` slots).
   */
  matchSorted(collection: string, filter: Filter, sort: Sort, n: number): Doc[] | undefined {
    if (this.writes?.has(collection) || !(n > 0) || !Number.isFinite(n) || this.host.history(collection)) return undefined;
    const state = this.host.state(collection);
    const { slots, exact } = state.plan(filter);
    const candidates = slots ? slots.size : state.entries.size;
    if (candidates === 0) return [];
    if ((n * state.entries.size) / candidates > WALK_PER_CANDIDATE * candidates) return undefined;
    const index = state.sortIndex(sort);
    if (!index) return undefined;
    const out: Doc[] = [];
    const take = this.collector(collection, filter, exact, n, out);
    index.walk(sort, (slot) => (slots !== undefined && !hasSlot(slots, slot)) || take(state.bySlot[slot]!.doc));
    return out;
  }

  /**
   * A visitor that appends each document passing `filter` (untested when `exact`) to `out` and
   * records it as read; it returns false once `out` holds `limit` documents.
   */
  private collector(collection: string, filter: Filter, exact: boolean, limit: number, out: Doc[]): (doc: Doc) => boolean {
    let matches: Matcher | undefined;
    const stats = this.host.stats;
    return (doc) => {
      examine(stats);
      if (!exact && !(matches ??= lazyMatcher(filter))(doc)) return true;
      out.push(doc);
      this.observe(collection, doc._id);
      return out.length < limit;
    };
  }

  /**
   * The number of documents matching `filter`, as seen by this unit. An exact plan outside a
   * transaction, with no pending writes to the collection, is counted from the index sets alone.
   */
  count(collection: string, filter: Filter): number {
    if (!this.tracksReads && !this.writes?.has(collection) && !this.host.history(collection)) {
      const state = this.host.state(collection);
      const { slots, exact } = state.plan(filter);
      if (exact) return slots ? slots.size : state.entries.size;
    }
    return this.match(collection, filter).length;
  }

  /**
   * Inserts a copy of `doc`; `CONFLICT` when its `_id` or a unique key is taken; the store's rules
   * (`rules.ts`: field names, size) refuse it with `VALIDATION_FAILED` or `PAYLOAD_TOO_LARGE`.
   */
  insert(collection: string, doc: Doc): Doc {
    const stored = toStored(doc, true);
    checkDocument(collection, stored);
    if (this.get(collection, stored._id)) throw conflict(collection, ['_id']);
    this.put(collection, stored._id, stored);
    return stored;
  }

  /**
   * Applies update operators to the first (or every, `multi`) match; upserts like MongoDB. The
   * store's rules (`rules.ts`) refuse, with nothing written: a refused field path or stored field
   * name, an `$inc` of a stored non-number or by one (`VALIDATION_FAILED`), a document grown past
   * 16 MiB (`PAYLOAD_TOO_LARGE`).
   */
  update(collection: string, filter: Filter, spec: Update, opts: { multi: boolean; upsert?: boolean }): TxnUpdateResult {
    const added = checkUpdate(collection, spec);
    const matches = this.match(collection, filter, opts.multi ? Infinity : 1);
    const result: TxnUpdateResult = { matchedCount: matches.length, modifiedCount: 0, before: null, after: null };
    const increments = spec.$inc as Record<string, unknown> | undefined;
    for (const doc of matches) {
      result.before = result.after = doc;
      if (increments) checkIncrementable(collection, doc, increments);
      const { after, modified } = applyUpdate(doc, spec);
      if (!modified) continue;
      if (after._id !== doc._id) throw new AppError('INTERNAL', { message: 'An update may not change _id' });
      if (added > 0) checkGrowth(collection, after);
      result.after = after;
      this.put(collection, doc._id, after);
      result.modifiedCount++;
    }
    if (matches.length === 0 && opts.upsert) {
      const { _id, ...fields } = equalityFields(filter);
      const seed = (_id === undefined ? {} : { _id }) as Doc;
      applyWithMingo(seed, { $set: fields });
      applyWithMingo(seed, spec);
      if (typeof seed._id !== 'string') seed._id = randomUUID();
      result.after = this.insert(collection, seed);
      result.upsertedId = seed._id;
    }
    return result;
  }

  /** Deletes the first (or every, `multi`: at most `limit`) match; returns how many. */
  remove(collection: string, filter: Filter, multi: boolean, limit = Infinity): number {
    const matches = this.match(collection, filter, multi ? limit : 1);
    for (const doc of matches) this.put(collection, doc._id, null);
    return matches.length;
  }

  /**
   * Throws `CONFLICT` when `doc` shares a unique-index key with another visible document: a stored
   * one, or (unless `storedOnly`: the commit's re-check, the unit's own writes were checked against
   * each other as they were made) another write of this unit.
   */
  assertUnique(collection: string, doc: Doc, storedOnly = false): void {
    const history = this.host.history(collection);
    if (history) {
      this.assertUniqueHistory(history, collection, doc, storedOnly);
      return;
    }
    const state = this.host.state(collection);
    for (const index of state.uniqueIndexes()) {
      for (const key of index.keys(doc)) {
        const clashes = (id: string, other: Doc | undefined | null) =>
          id !== doc._id && !!other && index.keys(other).includes(key);
        const held = index.slots(key);
        if (held) {
          eachSlot(held, (slot) => {
            const id = state.bySlot[slot]?.doc._id;
            if (id !== undefined && clashes(id, this.get(collection, id))) throw conflict(collection, index.fields);
            return true;
          });
        }
        if (storedOnly) continue;
        // the last write of this unit that held the key: any other write holding it now would have clashed with it
        const holder = this.keyHolders?.get(index)?.get(key);
        if (holder !== undefined && clashes(holder, this.writes?.get(collection)?.get(holder))) throw conflict(collection, index.fields);
      }
    }
  }

  /**
   * {@link assertUnique} in a history collection: the committed documents holding the key are
   * found by a filter on the index's first field (SQL), the unit's own writes as in memory.
   */
  private assertUniqueHistory(history: HistoryCollection, collection: string, doc: Doc, storedOnly: boolean): void {
    for (const index of history.uniqueIndexes()) {
      const keys = index.keys(doc);
      if (keys.length === 0) continue; // not in a sparse index
      const first = index.fields[0]!;
      const at = valueAt(doc, first.split('.'));
      const values = Array.isArray(at) ? at : at === undefined || at === THROUGH_ARRAY ? [null] : [at];
      const filter: Filter = values.length === 1 ? { [first]: values[0] } : { [first]: { $in: values } };
      const writes = this.writes?.get(collection);
      for (const other of history.scan(filter, undefined, Infinity, writes, this.host.stats)) {
        if (other._id !== doc._id && index.keys(other).some((k) => keys.includes(k))) throw conflict(collection, index.fields);
      }
      if (storedOnly) continue;
      for (const key of keys) {
        const holder = this.keyHolders?.get(index)?.get(key);
        if (holder !== undefined && holder !== doc._id) {
          const held = writes?.get(holder);
          if (held && index.keys(held).includes(key)) throw conflict(collection, index.fields);
        }
      }
    }
  }

  /** Per unique index: key → id of the last write of this unit holding it (see {@link assertUnique}). */
  private keyHolders: Map<object, Map<IndexKey, string>> | undefined;

  private uniqueIndexes(collection: string): HashIndex[] {
    return (this.host.history(collection) ?? this.host.state(collection)).uniqueIndexes();
  }

  private holdKeys(collection: string, doc: Doc): void {
    for (const index of this.uniqueIndexes(collection)) {
      let holders = (this.keyHolders ??= new Map()).get(index);
      if (!holders) this.keyHolders.set(index, (holders = new Map()));
      for (const key of index.keys(doc)) holders.set(key, doc._id);
    }
  }

  /** The pending writes, in order of first write per document. */
  changes(): Change[] {
    const out: Change[] = [];
    if (this.writes) for (const [collection, docs] of this.writes) for (const [id, doc] of docs) out.push({ collection, id, doc });
    return out;
  }

  /** True when no document this unit read or wrote has been written by someone else since. */
  isCurrent(): boolean {
    for (const [collection, versions] of this.seen ?? []) {
      const history = this.host.history(collection);
      if (history) {
        // a version older than this unit is pruned to 0 (history.ts): only later writes count
        for (const [id, version] of versions) {
          const now = history.versionOf(id);
          if (now !== version && now > this.startedAt) return false;
        }
        continue;
      }
      const entries = this.host.state(collection).entries;
      for (const [id, version] of versions) if ((entries.get(id)?.version ?? 0) !== version) return false;
    }
    return true;
  }

  private get(collection: string, id: string): Doc | undefined {
    const writes = this.writes?.get(collection);
    if (writes?.has(id)) return writes.get(id) ?? undefined;
    const history = this.host.history(collection);
    if (history) return history.get(id);
    return this.host.state(collection).entries.get(id)?.doc;
  }

  /** Records a write; the new document is frozen from here on (reads hand it out as it is). */
  private put(collection: string, id: string, doc: Doc | null): void {
    if (doc) {
      this.assertUnique(collection, deepFreeze(doc));
      this.holdKeys(collection, doc);
    }
    this.observe(collection, id);
    mapFor((this.writes ??= new Map()), collection).set(id, doc);
  }

  private observe(collection: string, id: string): void {
    if (!this.tracksReads) return;
    const seen = mapFor((this.seen ??= new Map()), collection);
    if (seen.has(id)) return;
    const history = this.host.history(collection);
    seen.set(id, history ? history.versionOf(id) : (this.host.state(collection).entries.get(id)?.version ?? 0));
  }
}
