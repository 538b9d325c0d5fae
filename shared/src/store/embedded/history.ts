import type Database from 'better-sqlite3';
import type { Doc, Filter, Sort } from '../port.js';
import { HashIndex, pageKey } from './collection-state.js';
import { lazyMatcher, type Matcher } from './matcher.js';
import type { Change } from './txn.js';
import { freezeParsed, sortDocs, valueAt, THROUGH_ARRAY } from './values.js';
import { examine } from './scan-clock.js';

/**
 * History collections of the embedded store (docs/store.md "History collections"): collections
 * that are append-mostly with a retention (the events outbox, Idempotency-Key records, webhook
 * deliveries, the pending-events outbox) are kept in their own SQLite table, read through SQL, and
 * held in memory only as a bounded cache. Their memory, the store's start-up time and the write
 * speed then follow the live data, not the write history.
 */

/** What {@link HistoryCollection.undo} needs to take back one write. */
export interface HistoryUndo {
  id: string;
  pending: { doc: Doc | null; change: Change | undefined } | undefined;
  version: number | undefined;
}

/** The collections kept as history collections by default (see {@link EmbeddedStoreOptions.history}). */
export const HISTORY_COLLECTIONS: readonly string[] = ['events', 'outbox', 'idempotency', 'webhook_deliveries'];

/**
 * Parsed documents a history collection keeps in memory at most (the most recently written or
 * read; between half of it and all of it are kept: {@link RecentDocs}).
 */
export const HISTORY_CACHE_DOCS = 1_024;

/**
 * Documents a non-transactional `deleteMany` of a history collection deletes per unit of work; the
 * units are committed one after another, each its own sqlite transaction, with a turn of the event
 * loop between them (a retention sweep never holds the store for long).
 */
export const HISTORY_DELETE_BATCH = 200;

/**
 * Write versions kept for conflict detection before the ones no live transaction can need are
 * pruned (into a new map). Small, so the map's table stays small: a table above 128 KB (some 4,000
 * entries) is allocated straight in V8's old generation, and every rebuild of it adds to what the
 * next full GC has to reclaim.
 */
const VERSIONS_KEPT = 512;

/** Results a history collection keeps while it is unchanged (see {@link HistoryCollection.scan}). */
const KEPT_RESULTS = 64;

/** Largest result kept (documents). */
const KEPT_RESULT_DOCS = 500;

/** Prepared statements kept per table (one per distinct query shape). */
const STATEMENTS_KEPT = 64;

/** Most ids a paged read asks SQL for at once (see {@link HistoryCollection.readPage}). */
const MAX_BATCH = 4_096;

/**
 * A paged read whose batch missed more than one in this many documents in the cache reads the next
 * batch's rows with their bodies (see {@link HistoryCollection.readPage}).
 */
const COLD_SHARE = 4;

/** Most `$in` values pushed into SQL (longer lists are tested by the matcher only). */
const MAX_SQL_IN = 500;

/**
 * A string SQLite orders as the embedded store's sort does: without characters at or above
 * U+D800 (SQLite compares UTF-8 bytes, which order such characters otherwise than UTF-16 code units).
 */
const ORDERED_STRING = /^[^\ud800-\uffff]*$/;

const isPlainObject = (v: unknown): v is Filter => typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof RegExp);

/** A field path SQLite can address: segments without quotes or backslashes. */
const sqlPath = (field: string): string | undefined => {
  const parts = field.split('.');
  if (parts.some((p) => p === '' || /["'\\]/.test(p))) return undefined;
  return `$${parts.map((p) => `."${p}"`).join('')}`;
};

/** The SQL expression of a field (the `_id` column, or the JSON value at the field's path). */
function column(field: string): string | undefined {
  if (field === '_id') return 'id';
  const path = sqlPath(field);
  return path && `json_extract(body, '${path}')`;
}

/** A value SQL compares as the store does: a finite number, or a string ordered alike. */
function sqlValue(v: unknown): v is number | string {
  return (typeof v === 'number' && Number.isFinite(v)) || (typeof v === 'string' && ORDERED_STRING.test(v));
}

/**
 * True when the value at `path` of `doc` is one SQL compares and orders as the store does: missing,
 * null, a finite number or an ordered string, reached through no array.
 */
export function plainAt(doc: Doc, path: readonly string[]): boolean {
  const v = valueAt(doc, path);
  return v === undefined || v === null || (v !== THROUGH_ARRAY && sqlValue(v));
}

const quoteIdent = (name: string) => `"${name.replace(/"/g, '""')}"`;

/**
 * The SQLite side of one history collection: table `hist:<name>(id, body)` (`id` unique), one
 * expression index per declared index (`json_extract` of each field), statements cached by shape.
 * Every statement runs on the journal's connection, so its writes are part of the journal's
 * transactions (journal.ts `write`).
 */
export class HistoryTable {
  readonly table: string;
  private readonly getStmt: Database.Statement;
  private readonly upsertStmt: Database.Statement;
  private readonly deleteStmt: Database.Statement;
  private readonly statements = new Map<string, Database.Statement>();

  constructor(
    private readonly db: Database.Database,
    readonly collection: string,
  ) {
    this.table = quoteIdent(`hist:${collection}`);
    db.exec(`CREATE TABLE IF NOT EXISTS ${this.table} (id TEXT NOT NULL UNIQUE, body TEXT NOT NULL)`);
    this.getStmt = db.prepare(`SELECT body FROM ${this.table} WHERE id = ?`).pluck();
    this.upsertStmt = db.prepare(`INSERT INTO ${this.table} (id, body) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET body = excluded.body`);
    this.deleteStmt = db.prepare(`DELETE FROM ${this.table} WHERE id = ?`);
  }

  /** Creates the expression index of `fields` when missing (never UNIQUE: the store checks unique keys itself). */
  createIndex(fields: readonly string[]): boolean {
    const cols = fields.map(column);
    if (cols.some((c) => c === undefined) || fields.includes('_id')) return false;
    const name = quoteIdent(`hist:${this.collection}:${fields.join(',')}`);
    this.db.exec(`CREATE INDEX IF NOT EXISTS ${name} ON ${this.table} (${cols.join(', ')})`);
    return true;
  }

  /** True when some stored document holds, at `field`, a value SQL does not compare as the store does. */
  holdsUnplain(field: string): boolean {
    const parts = field.split('.');
    const prefixes = parts.map((_, i) => sqlPath(parts.slice(0, i + 1).join('.'))!);
    const last = prefixes[prefixes.length - 1]!;
    const arrays = prefixes.map((p) => `json_type(body, '${p}') = 'array'`).join(' OR ');
    const sql = `SELECT 1 FROM ${this.table} WHERE ${arrays} OR json_type(body, '${last}') IN ('object', 'true', 'false') OR (json_type(body, '${last}') = 'text' AND hist_unordered(json_extract(body, '${last}'))) LIMIT 1`;
    return this.db.prepare(sql).pluck().get() !== undefined;
  }

  /** The stored document's JSON text, if any. */
  body(id: string): string | undefined {
    return this.getStmt.get(id) as string | undefined;
  }

  /** Writes (or with `null` deletes) a document's row; runs inside the journal's transaction. */
  write(id: string, doc: Doc | null): void {
    if (doc) this.upsertStmt.run(id, JSON.stringify(doc));
    else this.deleteStmt.run(id);
  }

  /** The prepared statement of `sql` (kept by text, at most {@link STATEMENTS_KEPT}). */
  private statement(sql: string, prepare: (sql: string) => Database.Statement): Database.Statement {
    let stmt = this.statements.get(sql);
    if (!stmt) {
      stmt = prepare(sql);
      if (this.statements.size >= STATEMENTS_KEPT) this.statements.delete(this.statements.keys().next().value!);
      this.statements.set(sql, stmt);
    }
    return stmt;
  }

  /** Rows `[id, body]` of `sql`'s shape (`WHERE`/`ORDER BY` text), lazily. */
  rows(where: string, orderBy: string, params: readonly unknown[]): IterableIterator<[string, string]> {
    const sql = `SELECT id, body FROM ${this.table}${where ? ` WHERE ${where}` : ''}${orderBy ? ` ORDER BY ${orderBy}` : ''}`;
    return this.statement(sql, (text) => this.db.prepare(text).raw(true)).iterate(...params) as IterableIterator<[string, string]>;
  }

  /**
   * Rows `offset + 1 … offset + limit` of `sql`'s shape (`WHERE`/`ORDER BY` text), in one call (one
   * `all()` costs less than a step of an iterator per row): their ids only (a reader finds most of
   * the documents it pages through in the cache: no body is copied out of SQLite), or with
   * `bodies`, `[id, body]` rows.
   */
  page(where: string, orderBy: string, params: readonly unknown[], limit: number, offset: number, bodies: true): [string, string][];
  page(where: string, orderBy: string, params: readonly unknown[], limit: number, offset: number, bodies: false): string[];
  page(where: string, orderBy: string, params: readonly unknown[], limit: number, offset: number, bodies: boolean): string[] | [string, string][] {
    const sql = `SELECT ${bodies ? 'id, body' : 'id'} FROM ${this.table}${where ? ` WHERE ${where}` : ''}${orderBy ? ` ORDER BY ${orderBy}` : ''} LIMIT ? OFFSET ?`;
    const stmt = this.statement(sql, (text) => (bodies ? this.db.prepare(text).raw(true) : this.db.prepare(text).pluck()));
    return stmt.all(...params, limit, offset) as string[] | [string, string][];
  }

  /** The bodies of the rows of `ids` that exist, by id (one statement for any number of ids). */
  bodies(ids: readonly string[]): Map<string, string> {
    if (ids.length === 1) {
      const body = this.body(ids[0]!);
      return new Map(body === undefined ? [] : [[ids[0]!, body]]);
    }
    this.bodiesStmt ??= this.db.prepare(`SELECT id, body FROM ${this.table} WHERE id IN (SELECT value FROM json_each(?))`).raw(true);
    return new Map(this.bodiesStmt.all(JSON.stringify(ids)) as [string, string][]);
  }

  private bodiesStmt: Database.Statement | undefined;

  /** How many rows the table holds. */
  count(): number {
    return this.db.prepare(`SELECT count(*) FROM ${this.table}`).pluck().get() as number;
  }
}

/**
 * The parsed documents a history collection keeps: the most recently written or read, at most
 * `limit`, in two generations. A document goes into the young generation; after `limit / 2`
 * documents, the old generation is dropped whole and the young one becomes the old one.
 *
 * Why generations and not one `Map` trimmed by its oldest entry: a V8 `Map` that lives long and
 * has entries deleted and added all the time rebuilds its hash table every so often, and an old
 * table keeps a link to its successor. Once one table has moved to the old generation of the
 * heap, the scavenger keeps every later table and everything they held (here: every document
 * ever cached) alive until the next full collection, so all of it is promoted and the old
 * generation grows with the write rate (docs/store.md "Memory and garbage collection"). A
 * generation that is dropped whole ends its chain.
 */
class RecentDocs {
  private young = new Map<string, Doc>();
  private old = new Map<string, Doc>();
  /** Documents set into {@link young} (counted, not its size: a collection whose documents are deleted soon after, like the outbox, would otherwise keep one map forever). */
  private added = 0;

  constructor(private readonly limit: number) {}

  get(id: string): Doc | undefined {
    return this.young.get(id) ?? this.old.get(id);
  }

  set(id: string, doc: Doc): void {
    this.young.set(id, doc);
    if (++this.added >= this.limit / 2) {
      this.old = this.young;
      this.young = new Map();
      this.added = 0;
    }
  }

  delete(id: string): void {
    this.young.delete(id);
    this.old.delete(id);
  }
}

/** SQL conditions and their parameters, ANDed. */
interface SqlWhere {
  terms: string[];
  params: unknown[];
  /** Fields with a range condition among the terms. */
  ranged: Set<string>;
}

/**
 * One history collection as the store sees it: the committed documents are the table's rows with
 * the {@link pending} writes on top (committed in memory, not journaled yet: the store's group
 * commit, embedded-store.ts), a bounded cache of parsed documents, and the write versions the
 * conflict check of transactions needs. Readers never see a transaction's own writes before it
 * commits (those stay in its overlay, txn.ts), nor a deleted document (a delete is pending at
 * once, and leaves the cache).
 *
 * Filters: the conditions on `_id` and on indexed fields whose stored values SQL compares as the
 * store does (missing, null, finite numbers, strings; no arrays) go to SQL (equality, `$in`,
 * `$gt`/`$gte`/`$lt`/`$lte`, at the top level or in `$and`), and every row is tested against the
 * whole filter. A sort on such fields is SQL's `ORDER BY`, read lazily until the page is full.
 */
export class HistoryCollection {
  /**
   * Committed writes not in the table yet: id → the new document (`null`: deleted) and its change.
   * A new map once emptied (each group commit empties it), so no long-lived map is rebuilt by
   * every write (see {@link RecentDocs} for why that matters).
   */
  private pending = new Map<string, { doc: Doc | null; change: Change | undefined }>();
  /** Parsed documents as they are in the table, the most recently written or read. */
  private readonly cache = new RecentDocs(HISTORY_CACHE_DOCS);
  /** id → version of its last write, for the conflict check of transactions (pruned: {@link apply}). */
  private versions = new Map<string, number>();
  private versionsKeptUpTo = VERSIONS_KEPT;
  /** Bumped by every committed write; kept results of an older count are stale. */
  private changes = 0;
  /** Results of {@link scan} by filter, sort and `n` (pageKey), all made at {@link keptAt} changes. */
  private kept = new Map<string, Doc[]>();
  private keptAt = 0;
  /** Declared indexes: fields, and whether unique (a {@link HashIndex} computes their keys; it holds none). */
  private readonly declared: { fields: string[]; index: HashIndex }[] = [];
  /** The last paged read found most of its documents missing from the cache (see {@link readPage}). */
  private coldPages = false;
  /** Fields with an SQL index whose stored values SQL compares as the store does. */
  private readonly plain = new Set<string>();
  /** Fields with an SQL index, some of whose stored values SQL does not compare as the store does. */
  private readonly unplain = new Set<string>();

  constructor(
    readonly table: HistoryTable,
    /** The store version from which transactions may still check versions (Infinity: none runs). */
    private readonly liveFrom: () => number,
    /** Records whether a field is plain (kept in the journal, so the check is made once per field). */
    private readonly recordField: (field: string, plain: boolean) => void,
    known: ReadonlyMap<string, boolean>,
  ) {
    for (const [field, plain] of known) (plain ? this.plain : this.unplain).add(field);
  }

  /**
   * Declares an index: an SQL expression index on its fields (a compound one as one), and, when
   * `unique`, a key the store's writes check. A field seen for the first time is checked once
   * against the stored rows (are its values all ones SQL compares as the store does?).
   */
  declare(fields: string[], unique: boolean, sparse = false): void {
    const created = this.table.createIndex(fields);
    const known = this.declared.find((d) => d.fields.join() === fields.join());
    if (known) {
      if (unique && (!known.index.unique || (known.index.sparse && !sparse))) known.index = new HashIndex(fields, true, sparse);
    } else this.declared.push({ fields, index: new HashIndex(fields, unique, unique && sparse) });
    if (!created) return;
    for (const field of fields) {
      if (this.plain.has(field) || this.unplain.has(field)) continue;
      if (this.table.holdsUnplain(field)) this.markUnplain(field);
      else {
        this.plain.add(field);
        this.recordField(field, true);
      }
    }
  }

  /** Unique keys to check on write (a HashIndex computes a document's keys). */
  uniqueIndexes(): HashIndex[] {
    return this.declared.filter((d) => d.index.unique).map((d) => d.index);
  }

  private markUnplain(field: string): void {
    this.plain.delete(field);
    this.unplain.add(field);
    this.recordField(field, false);
  }

  /**
   * Notes a document about to be committed: an indexed field holding a value SQL would not compare
   * as the store does is no longer pushed into SQL (recorded before the document is journaled).
   */
  admit(doc: Doc): void {
    for (const field of this.plain) if (!plainAt(doc, field.split('.'))) this.markUnplain(field);
  }

  /** The write version of `id` (0: not written while a transaction could need it). */
  versionOf(id: string): number {
    return this.versions.get(id) ?? 0;
  }

  /**
   * A committed write (`null`: delete), pending until {@link journaled}; `change` is what the journal
   * writes. Take {@link undoOf} first to be able to take it back.
   */
  apply(id: string, doc: Doc | null, version: number, change: Change | undefined): void {
    this.changes++;
    this.pending.set(id, { doc, change });
    this.cache.delete(id);
    this.versions.set(id, version);
    if (this.versions.size > this.versionsKeptUpTo) {
      // pruned into a new map (not deleted from this one: see RecentDocs)
      const floor = this.liveFrom();
      const kept = new Map<string, number>();
      for (const [key, v] of this.versions) if (v >= floor) kept.set(key, v);
      this.versions = kept;
      this.versionsKeptUpTo = Math.max(VERSIONS_KEPT, kept.size * 2);
    }
  }

  /** What {@link undo} needs to take back a write of `id` made from now on. */
  undoOf(id: string): HistoryUndo {
    return { id, pending: this.pending.get(id), version: this.versions.get(id) };
  }

  /** Takes back a write of a failed commit ({@link apply}'s answer; newest first). Cannot throw. */
  undo(u: HistoryUndo): void {
    this.changes++;
    this.cache.delete(u.id);
    if (u.pending) this.pending.set(u.id, u.pending);
    else this.pending.delete(u.id);
    if (u.version === undefined) this.versions.delete(u.id);
    else this.versions.set(u.id, u.version);
    this.kept = new Map();
  }

  /** The journal wrote `change`: unless written again since, its document is read from the table (and the cache) now. */
  journaled(change: Change): void {
    const p = this.pending.get(change.id);
    if (!p || p.change !== change) return;
    this.pending.delete(change.id);
    if (this.pending.size === 0) this.pending = new Map();
    if (p.doc) this.cache.set(change.id, p.doc);
  }

  /** A store without a file commits nothing to a table: the writes stay pending (tests only). */
  get pendingCount(): number {
    return this.pending.size;
  }

  /** The parsed document of a row (from the cache when there). */
  private parse(id: string, body: string): Doc {
    const known = this.cache.get(id);
    if (known) return known;
    const doc = JSON.parse(body) as Doc;
    freezeParsed(doc);
    this.cache.set(id, doc);
    return doc;
  }

  /** The committed document with `_id` = `id`. */
  get(id: string): Doc | undefined {
    const p = this.pending.get(id);
    if (p) return p.doc ?? undefined;
    const known = this.cache.get(id);
    if (known) return known;
    const body = this.table.body(id);
    return body === undefined ? undefined : this.parse(id, body);
  }

  /**
   * The committed documents matching `filter`, the ids in `skip` left out (a transaction's own
   * writes, which it tests itself): in `sort` order and at most `n` when sorted, else the first
   * `n` found. `examined` counts the documents tested.
   */
  scan(filter: Filter, sort: Sort | undefined, n: number, skip: ReadonlyMap<string, unknown> | undefined, stats: { docsExamined: number }): Doc[] {
    if (n <= 0) return [];
    // a read by `_id` (an Idempotency-Key record's claim and finish, a delivery's update) is one lookup
    const id = filter._id;
    if (typeof id === 'string') {
      const doc = skip?.has(id) ? undefined : this.get(id);
      if (!doc) return [];
      examine(stats);
      return lazyMatcher(filter)(doc) ? [doc] : [];
    }
    // the same read of an unchanged collection (a feed page, a poll finding nothing new) is answered
    // from the result kept for it (filters of plain JSON data only: pageKey)
    if (skip && skip.size > 0) return this.read(filter, sort, n, skip, stats);
    if (this.keptAt !== this.changes) {
      if (this.kept.size > 0) this.kept = new Map(); // a new map, not clear(): see RecentDocs
      this.keptAt = this.changes;
    }
    const key = pageKey(filter, sort ?? {}, n);
    const known = key === undefined ? undefined : this.kept.get(key);
    if (known) return known.slice();
    const docs = this.read(filter, sort, n, undefined, stats);
    if (key !== undefined && docs.length <= KEPT_RESULT_DOCS) {
      if (this.kept.size >= KEPT_RESULTS) this.kept.delete(this.kept.keys().next().value!);
      this.kept.set(key, docs.slice());
    }
    return docs;
  }

  /** {@link scan} without the kept results. */
  private read(filter: Filter, sort: Sort | undefined, n: number, skip: ReadonlyMap<string, unknown> | undefined, stats: { docsExamined: number }): Doc[] {
    let matches: Matcher | undefined;
    const test = (doc: Doc) => {
      examine(stats);
      return (matches ??= lazyMatcher(filter))(doc);
    };
    const out: Doc[] = [];
    for (const [id, p] of this.pending) {
      if (p.doc && !skip?.has(id) && test(p.doc)) out.push(p.doc);
    }
    const fromMemory = out.length;
    const where: SqlWhere = { terms: [], params: [], ranged: new Set() };
    this.conditions(filter, where);
    const orderBy = sort ? this.orderBy(sort, where) : '';
    const ordered = !sort || orderBy !== undefined;
    const whereSql = where.terms.join(' AND ');
    if (ordered && Number.isFinite(n)) {
      this.readPage(whereSql, orderBy ?? '', where.params, n, skip, test, out);
      // rows alone come in the sort's order already (of plain fields; `_id` may hold any string)
      if (fromMemory === 0 && !(sort && '_id' in sort)) return out;
    } else {
      // every match (no page, or a sort SQL does not make): the rows one by one
      for (const [id, body] of this.table.rows(whereSql, orderBy ?? '', where.params)) {
        if (this.pending.has(id) || skip?.has(id)) continue;
        const doc = this.parse(id, body);
        if (test(doc)) out.push(doc);
      }
    }
    if (sort) return sortDocs(out, sort, n);
    return out.length > n ? out.slice(0, n) : out;
  }

  /**
   * Adds to `out` the first `n` matches among the table's rows in SQL's order (the sort's, or any
   * without a sort), skipping the ids pending or in `skip` (those are read from memory). Rows come
   * in batches of about the page's size (a batch is what the page needs unless the matcher turns
   * rows down: then the next, twice as large), each in one statement, and a document is parsed
   * only when the cache does not hold it. A batch reads the ids alone while the cache held most of
   * the last batch's documents (the newest events, which the feed's first pages and the stream
   * read: a page is then one index range read of 100 ids, with no JSON), and the bodies of the
   * few it lacks by id; otherwise (older pages, after a restart) the rows with their bodies.
   */
  private readPage(where: string, orderBy: string, params: readonly unknown[], n: number, skip: ReadonlyMap<string, unknown> | undefined, test: (doc: Doc) => boolean, out: Doc[]): void {
    let found = 0;
    let offset = 0;
    let batch = n + this.pending.size + (skip?.size ?? 0);
    const take = (doc: Doc): boolean => {
      if (!test(doc)) return false;
      out.push(doc);
      return ++found >= n;
    };
    for (;;) {
      let count: number;
      let missed = 0;
      if (this.coldPages) {
        const rows = this.table.page(where, orderBy, params, batch, offset, true);
        count = rows.length;
        for (const [id, body] of rows) {
          if (this.pending.has(id) || skip?.has(id)) continue;
          if (this.cache.get(id) === undefined) missed++;
          if (take(this.parse(id, body))) break;
        }
      } else {
        const ids = this.table.page(where, orderBy, params, batch, offset, false);
        count = ids.length;
        // the batch's documents: the cached ones taken before any parse below may evict them
        const docs = ids.map((id) => (this.pending.has(id) || skip?.has(id) ? null : this.cache.get(id)));
        const missing = ids.filter((_, i) => docs[i] === undefined);
        missed = missing.length;
        const bodies = missed > 0 ? this.table.bodies(missing) : undefined;
        for (let i = 0; i < ids.length; i++) {
          let doc = docs[i];
          if (doc === null) continue;
          if (doc === undefined) {
            const body = bodies?.get(ids[i]!);
            if (body === undefined) continue;
            doc = this.parse(ids[i]!, body);
          }
          if (take(doc)) break;
        }
      }
      // reading ids first pays while the cache holds most of what a batch reads
      this.coldPages = missed * COLD_SHARE > count;
      if (found >= n || count < batch) return;
      offset += count;
      batch = Math.min(batch * 2, MAX_BATCH);
    }
  }

  /**
   * The `ORDER BY` of `sort` when SQL orders its every field as the store does, else `undefined`.
   * With a range condition on another field than the sort's first (the retention sweep's newest
   * expired event: `occurred_at < cutoff`, by `seq` descending), the sort columns are written `+col`,
   * which no index serves: SQLite then reads the range from its index and sorts those rows, a cost
   * that follows the matches, instead of walking the sort field's index past every row that does
   * not match (all of them when nothing has expired).
   */
  private orderBy(sort: Sort, where: SqlWhere): string | undefined {
    const fields = Object.keys(sort);
    const sortOnly = [...where.ranged].some((f) => f !== fields[0]) ? '+' : '';
    const terms: string[] = [];
    for (const field of fields) {
      if (field !== '_id' && !this.plain.has(field)) return undefined;
      terms.push(`${sortOnly}${column(field)!} ${sort[field] === -1 ? 'DESC' : 'ASC'}`);
    }
    return terms.join(', ');
  }

  /** Pushes the SQL conditions every match of `filter` meets (a superset: the matcher decides). */
  private conditions(filter: Filter, out: SqlWhere): void {
    for (const key of Object.keys(filter)) {
      const cond = filter[key];
      if (key === '$and') {
        if (Array.isArray(cond)) for (const sub of cond) if (isPlainObject(sub)) this.conditions(sub, out);
        continue;
      }
      if (key.startsWith('$') || (key !== '_id' && !this.plain.has(key))) continue;
      const col = column(key)!;
      if (sqlValue(cond)) {
        out.terms.push(`${col} = ?`);
        out.params.push(cond);
        continue;
      }
      if (!isPlainObject(cond) || !Object.keys(cond).every((k) => k.startsWith('$'))) continue;
      for (const [op, v] of Object.entries(cond)) {
        const cmp = op === '$eq' ? '=' : op === '$gt' ? '>' : op === '$gte' ? '>=' : op === '$lt' ? '<' : op === '$lte' ? '<=' : undefined;
        if (cmp && sqlValue(v)) {
          out.terms.push(`${col} ${cmp} ?`);
          out.params.push(v);
          if (cmp !== '=') out.ranged.add(key);
        } else if (op === '$in' && Array.isArray(v) && v.length > 0 && v.length <= MAX_SQL_IN && v.every(sqlValue)) {
          out.terms.push(`${col} IN (${v.map(() => '?').join(', ')})`);
          out.params.push(...v);
        } else if (op === '$in' && Array.isArray(v) && v.length === 0) {
          out.terms.push('0');
        }
      }
    }
  }
}
