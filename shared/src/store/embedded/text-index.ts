/**
 * The embedded store's text index (docs/store.md "Text
 * search"): substring conditions (`$regex` filters, as the query language compiles `~`, LIKE and
 * ILIKE) on the text fields of {@link TEXT_FIELDS} are narrowed by an SQLite FTS5 table with the
 * `trigram` tokenizer, kept in the same sqlite transaction as the document write. The index only
 * ever narrows: every candidate is still tested against the whole filter, so results equal a scan.
 *
 * Case: the indexed text and the searched literals are both folded in JavaScript by
 * {@link foldText}, the very case folding of the store's case-insensitive matching (fold.ts, Unicode
 * simple case folding as MongoDB's), and the FTS table is case-sensitive (`trigram case_sensitive 1`). SQLite's own folding
 * (`case_sensitive 0`) differs from JavaScript's for some non-ASCII letters (σ/ς/Σ, the Kelvin sign,
 * …), which would drop matches; one folding on both sides cannot.
 */
import type Database from 'better-sqlite3';
import type { Doc, Filter } from '../port.js';
import { foldCase } from './fold.js';
import { compileFilter, type Matcher } from './matcher.js';
import { Posting, type Slots } from './slots.js';
import { valuesAt } from './values.js';

/** The fields the text index serves, per collection (top-level text fields). */
export const TEXT_FIELDS: Readonly<Record<string, readonly string[]>> = Object.freeze({ tasks: Object.freeze(['title', 'description']) });

/**
 * Version of the FTS tables' content (folding, fields). A data dir whose tables carry another
 * version, or none (written before the text index existed), is re-indexed at open.
 */
export const TEXT_INDEX_VERSION = 3;

/** Literal pieces shorter than this many characters (code points) cannot use trigrams. */
export const MIN_LITERAL = 3;

/** How many searches' candidate sets are kept in memory per collection (maintained on every write). */
const CACHED_SEARCHES = 64;

const REPLACEMENT = '\uFFFD';

/**
 * Text as the index holds it: every code point folded as the store's case-insensitive matching
 * folds it ({@link foldCase}: Unicode simple case folding, as MongoDB's PCRE2), so
 * `foldText(t).includes(foldText(p))` exactly when ILIKE or `~` finds p in t. NUL and lone
 * surrogates (which SQLite cannot hold as UTF-8) become U+FFFD; literals holding them are never
 * searched (see {@link requiredLiterals}).
 */
export function foldText(s: string): string {
  return foldCase(s).replace(/\0|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, REPLACEMENT);
}

const ESCAPABLE = '\\^$.*+?()[]{}|/-';
/** The end anchor the query compiler writes (patterns.ts): the very end of the text. */
const END = '(?![\\s\\S])';

/**
 * The literal pieces every string matching the regular expression `pattern` must contain, folded
 * ({@link foldText}) and at least {@link MIN_LITERAL} characters long; `undefined` when the pattern
 * is not of the understood shape or has no such piece (the caller then scans).
 *
 * Understood: a concatenation of literal characters (plain or backslash-escaped metacharacters),
 * `[\s\S]` and `.` (any one character, optionally followed by `*` or `*?`), `^` at the start, `$`
 * or `(?![\s\S])` at the end, lookaheads `(?=(…))`, back-references `\1`…`\9` and `\x00`: exactly what the query
 * compiler makes of `~` (an escaped literal) and LIKE/ILIKE (`shared/src/query/patterns.ts`).
 * Anything else (alternation, other quantifiers, classes, other escapes) answers `undefined`.
 * Sound because, without alternation or optional parts, every run of literal characters is matched
 * as it is, somewhere in the string. Pieces are cut at NUL and lone surrogates.
 */
export function requiredLiterals(pattern: string): string[] | undefined {
  const runs: string[] = [];
  let run = '';
  let prev = 'other' as 'lit' | 'any' | 'other';
  let depth = 0;
  const cut = (kind: 'any' | 'other') => {
    if (run) runs.push(run);
    run = '';
    prev = kind;
  };
  for (let i = 0; i < pattern.length; ) {
    const c = pattern[i]!;
    if (c === '\\') {
      const n = pattern[i + 1];
      if (n !== undefined && ESCAPABLE.includes(n)) {
        run += n;
        prev = 'lit';
        i += 2;
      } else if (pattern.startsWith('x00', i + 1)) {
        cut('any');
        i += 4;
      } else if (n !== undefined && n >= '1' && n <= '9') {
        cut('other');
        i += 2;
      } else return undefined;
    } else if (c === '^' && i === 0) {
      i++;
    } else if (c === '$' && i === pattern.length - 1) {
      i++;
    } else if (pattern.startsWith(END, i) && i + END.length === pattern.length) {
      i += END.length;
    } else if (c === '[') {
      if (!pattern.startsWith('[\\s\\S]', i)) return undefined;
      cut('any');
      i += 6;
    } else if (c === '.') {
      cut('any');
      i++;
    } else if (c === '*') {
      if (prev !== 'any') return undefined;
      cut('other');
      i += pattern[i + 1] === '?' ? 2 : 1;
    } else if (c === '(') {
      if (!pattern.startsWith('(?=(', i)) return undefined;
      cut('other');
      depth += 2;
      i += 4;
    } else if (c === ')') {
      if (--depth < 0) return undefined;
      cut('other');
      i++;
    } else if ('^$+?{}]|'.includes(c)) {
      return undefined;
    } else {
      run += c;
      prev = 'lit';
      i++;
    }
  }
  cut('other');
  if (depth !== 0) return undefined;
  const pieces = runs
    .flatMap((r) => r.split(/\0|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/))
    .filter((r) => [...r].length >= MIN_LITERAL)
    .map(foldText);
  return pieces.length > 0 ? [...new Set(pieces)] : undefined;
}

/** The literals of a `{$regex: string, $options?: 'ims'…}` condition (see {@link requiredLiterals}). */
export function regexLiterals(cond: unknown): string[] | undefined {
  if (typeof cond !== 'object' || cond === null || Array.isArray(cond) || cond instanceof RegExp) return undefined;
  const c = cond as Filter;
  const keys = Object.keys(c);
  if (typeof c.$regex !== 'string' || !keys.every((k) => k === '$regex' || k === '$options')) return undefined;
  if (c.$options !== undefined && !(typeof c.$options === 'string' && /^[ims]*$/.test(c.$options))) return undefined;
  return requiredLiterals(c.$regex);
}

/** Every text field of a collection, as a {@link changedTextFields} mask (all bits set). */
export const ALL_TEXT_FIELDS = -1;

/**
 * Which of `fields` (a collection's {@link TEXT_FIELDS}) `doc` changes against `before` (undefined:
 * a new document): bit `i` set when `fields[i]` differs (compared as stored: strings by value,
 * arrays by identity, as frozen documents are rewritten); 0 when the text is unchanged.
 */
export function changedTextFields(fields: readonly string[], before: Doc | undefined, doc: Doc): number {
  if (!before) return ALL_TEXT_FIELDS;
  let mask = 0;
  for (let i = 0; i < fields.length; i++) if (before[fields[i]!] !== doc[fields[i]!]) mask |= 1 << i;
  return mask;
}

/** The union of two {@link changedTextFields} masks; undefined (every field) on either side is every field. */
export function unionOfFields(a: number | undefined, b: number | undefined): number {
  return a === undefined || b === undefined ? ALL_TEXT_FIELDS : a | b;
}

/**
 * The text of `field` the index holds for `doc`: its string, or the strings of an array (one per
 * line), folded; `''` for anything else ($regex only ever matches strings).
 */
export function indexedText(doc: Doc, field: string): string {
  const texts: string[] = [];
  for (const v of valuesAt(doc, [field])) {
    if (typeof v === 'string') texts.push(v);
    else if (Array.isArray(v)) for (const x of v) if (typeof x === 'string') texts.push(x);
  }
  return texts.length === 0 ? '' : foldText(texts.join('\n'));
}

/** The FTS table of one text field of a collection (`text_tasks_title`). */
const tableOf = (collection: string, field: string) => `text_${collection}_${field}`;
/** The one two-column FTS table per collection of {@link TEXT_INDEX_VERSION} 1 (`text_tasks`), dropped at the rebuild. */
const legacyTableOf = (collection: string) => `text_${collection}`;
const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

/**
 * FTS5 `automerge` of the text tables (SQLite's default is 4): how many segments of one level
 * wait before they are merged into one. A flush writes a new segment, so merging is part of every
 * flush's cost; at 8, about 13–18 % less CPU per indexed document (a bare better-sqlite3 loop
 * over varied titles and descriptions, 100 documents per transaction: docs/bench.md "Ninth
 * session"), and a search reads a few more segments (no measurable change: its cost is its
 * matches). Set at open on every text table (docs/store.md "Text search").
 */
export const FTS_AUTOMERGE = 8;

/** How long a written document's FTS row may wait to be written with others (ms; {@link TextTables}). */
export const TEXT_FLUSH_MS = 10;

/** At most this many distinct trigrams of a literal are looked up (the rest only narrow further; the exact test follows). */
export const MAX_QUERY_TRIGRAMS = 24;

/**
 * The FTS5 MATCH expression of rows holding every literal (folded, ≥ 3 code points): each literal's
 * distinct trigrams, AND-ed, as quoted single-token strings (`"WEB" AND "EBH" AND …`). A table
 * with `detail=none` keeps no positions, so a phrase query cannot run on it; the AND of a literal's
 * trigrams finds a superset of the rows containing it, which the caller narrows with the exact
 * test. At most {@link MAX_QUERY_TRIGRAMS} per literal, spread over it.
 */
export function trigramQuery(literals: readonly string[]): string {
  const terms = new Set<string>();
  for (const literal of literals) {
    const cps = Array.from(literal);
    const grams: string[] = [];
    for (let i = 0; i + 3 <= cps.length; i++) grams.push(cps[i]! + cps[i + 1]! + cps[i + 2]!);
    const distinct = [...new Set(grams)];
    const step = Math.max(1, distinct.length / MAX_QUERY_TRIGRAMS);
    for (let i = 0; i < distinct.length && terms.size < MAX_QUERY_TRIGRAMS * literals.length; i += step) terms.add(distinct[Math.floor(i)]!);
  }
  return [...terms].map((t) => `"${t.replace(/"/g, '""')}"`).join(' AND ');
}

/** The statements of one text field's FTS table. */
interface FieldTable {
  field: string;
  insert: Database.Statement;
  drop: Database.Statement;
  search: Database.Statement;
}

/**
 * A pending document: its text to index (null: deleted), whether it never had FTS rows (a new
 * document: no delete first, every field inserted) and which fields' rows to rewrite
 * ({@link changedTextFields} mask; a deleted document's rows are all dropped).
 */
interface PendingRow {
  doc: Doc | null;
  fresh: boolean;
  fields: number;
  /** It has a `text_pending` row to clear (a new document above the watermark has none). */
  marked: boolean;
}

/**
 * The FTS5 tables of the journal's sqlite database: one per text field of each collection of
 * {@link TEXT_FIELDS} (`text_<coll>_<field>`, contentless, `detail=none`, `rowid` = the document's
 * `docs.rowid`), a `text_meta(coll, version)` table and a `text_pending(coll, rowid)` table.
 * Constructed on the open database: tables missing or of another {@link TEXT_INDEX_VERSION} are
 * (re)built from the stored documents in one transaction. Errors propagate (the journal maps them).
 *
 * `detail=none` (no token positions): an FTS row costs about a third less to write than with
 * `detail=full` (11 vs 17 µs per task, bare better-sqlite3, docs/bench.md), and a search looks up
 * the AND of each literal's trigrams ({@link trigramQuery}) instead of a phrase: a superset, which
 * the exact test narrows as it always did. One table per field, since `detail=none` has no column filters.
 *
 * Deferred FTS rows (docs/store.md "Text search"): an FTS5 write costs ~110 µs per sqlite
 * transaction whatever its size, so a document write does not write its FTS row. It writes its
 * `docs` row and, for a change of an existing document, a `text_pending` row in its own sqlite
 * transaction (durable with it), and the FTS rows of the pending documents are written together
 * by {@link flushPending}, at most {@link TEXT_FLUSH_MS} later (or at close), in one transaction
 * that also clears their `text_pending` rows and raises the watermark `text_watermark.rowid`:
 * every text document at or below it has its FTS rows or a `text_pending` row, so a NEW document
 * (its rowid, given in increasing order, above the watermark) needs no mark. Until the flush every
 * pending rowid is a candidate of every search (the caller tests each candidate against the
 * condition, so results are unchanged). At open, the documents in `text_pending` and those above
 * the watermark (a crash before the flush) are indexed first.
 */
export class TextTables {
  private readonly tables = new Map<string, FieldTable[]>();
  private readonly markPending: Database.Statement;
  private readonly clearPending: Database.Statement;
  private readonly setWatermark: Database.Statement;
  /** `text_watermark.rowid` as stored: text documents at or below it are indexed or marked. */
  private watermark: number;
  /** The largest rowid of a text document journaled (committed) so far, and staged in the sqlite transaction in progress. */
  private journaledUpTo: number;
  private stagedUpTo = 0;
  /** Written and committed, FTS rows not yet written: collection → rowid → the document. */
  private pending = new Map<string, Map<number, PendingRow>>();
  /** Marked by the sqlite transaction in progress (pending once it commits: {@link committed}). */
  private staged: { collection: string; rowid: number; doc: Doc | null; inserted: boolean; fields: number; marked: boolean }[] = [];
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly writePending: () => void;
  /** Documents indexed at open because the tables were missing or stale, per collection. */
  readonly rebuilt = new Map<string, number>();

  constructor(private readonly db: Database.Database) {
    db.exec('CREATE TABLE IF NOT EXISTS text_meta (coll TEXT PRIMARY KEY, version INTEGER NOT NULL)');
    db.exec('CREATE TABLE IF NOT EXISTS text_pending (coll TEXT NOT NULL, rowid INTEGER NOT NULL, PRIMARY KEY (coll, rowid)) WITHOUT ROWID');
    this.markPending = db.prepare('INSERT OR IGNORE INTO text_pending (coll, rowid) VALUES (?, ?)');
    this.clearPending = db.prepare('DELETE FROM text_pending WHERE coll = ? AND rowid = ?');
    // every stored document is indexed or marked as the table is made (a data dir from before the
    // watermark marked every change): it starts at the largest rowid
    const lastRowid = db.prepare('SELECT coalesce(max(rowid), 0) FROM docs').pluck().get() as number;
    db.exec('CREATE TABLE IF NOT EXISTS text_watermark (id INTEGER PRIMARY KEY CHECK (id = 1), rowid INTEGER NOT NULL)');
    db.prepare('INSERT OR IGNORE INTO text_watermark (id, rowid) VALUES (1, ?)').run(lastRowid);
    this.setWatermark = db.prepare('UPDATE text_watermark SET rowid = ? WHERE id = 1');
    this.watermark = db.prepare('SELECT rowid FROM text_watermark WHERE id = 1').pluck().get() as number;
    this.journaledUpTo = lastRowid;
    const versionOf = db.prepare('SELECT version FROM text_meta WHERE coll = ?').pluck();
    for (const [coll, fields] of Object.entries(TEXT_FIELDS)) {
      if (versionOf.get(coll) !== TEXT_INDEX_VERSION) {
        this.rebuild(coll, fields);
        db.prepare('DELETE FROM text_pending WHERE coll = ?').run(coll);
      }
      this.tables.set(coll, fields.map((field) => {
        const table = quote(tableOf(coll, field));
        const automerge = db.prepare(`SELECT v FROM ${quote(`${tableOf(coll, field)}_config`)} WHERE k = 'automerge'`).pluck().get();
        // (FTS5 takes a configuration value as a literal, not a bound parameter)
        if (automerge !== FTS_AUTOMERGE) db.exec(`INSERT INTO ${table} (${table}, rank) VALUES ('automerge', ${Number(FTS_AUTOMERGE)})`);
        return {
          field,
          insert: db.prepare(`INSERT INTO ${table} (rowid, text) VALUES (?, ?)`),
          drop: db.prepare(`DELETE FROM ${table} WHERE rowid = ?`),
          search: db.prepare(`SELECT rowid FROM ${table} WHERE ${table} MATCH ?`).pluck(),
        };
      }));
    }
    const bodyOf = db.prepare('SELECT body FROM docs WHERE coll = ? AND rowid = ?').pluck();
    this.writePending = db.transaction(() => {
      for (const [coll, rows] of this.pending) {
        const tables = this.tables.get(coll);
        for (const [rowid, { doc, fresh, fields, marked }] of rows) {
          if (tables) {
            for (let i = 0; i < tables.length; i++) {
              const t = tables[i]!;
              if (fresh) {
                if (doc) t.insert.run(rowid, indexedText(doc, t.field));
              } else if (!doc) t.drop.run(rowid);
              else if (fields & (1 << i)) {
                // only a changed field's rows are rewritten (a title edit leaves the description's)
                t.drop.run(rowid);
                t.insert.run(rowid, indexedText(doc, t.field));
              }
            }
          }
          if (marked) this.clearPending.run(coll, rowid);
        }
      }
      // every text document journaled so far is indexed now (or still marked)
      if (this.journaledUpTo > this.watermark) this.setWatermark.run(this.journaledUpTo);
    });
    // rows left pending by a crash before their flush: indexed from the stored documents now (the
    // marked ones, and the text documents above the watermark; either may have FTS rows already)
    for (const [coll, rowid] of db.prepare('SELECT coll, rowid FROM text_pending').raw().all() as [string, number][]) {
      const body = bodyOf.get(coll, rowid) as string | undefined;
      this.pendingOf(coll).set(rowid, { doc: body === undefined ? null : (JSON.parse(body) as Doc), fresh: false, fields: ALL_TEXT_FIELDS, marked: true });
    }
    const above = db.prepare('SELECT rowid, body FROM docs WHERE rowid > ? AND coll = ?').raw();
    for (const coll of this.tables.keys()) {
      if (this.rebuilt.has(coll)) continue; // indexed whole just now
      for (const [rowid, body] of above.all(this.watermark, coll) as [number, string][]) {
        const rows = this.pendingOf(coll);
        if (!rows.has(rowid)) rows.set(rowid, { doc: JSON.parse(body) as Doc, fresh: false, fields: ALL_TEXT_FIELDS, marked: false });
      }
    }
    this.flushPending();
  }

  private pendingOf(collection: string): Map<number, PendingRow> {
    let rows = this.pending.get(collection);
    if (!rows) this.pending.set(collection, (rows = new Map()));
    return rows;
  }

  /**
   * Writes the FTS rows of every pending document in one sqlite transaction and clears their
   * `text_pending` rows. Throws what sqlite throws; the documents then stay pending (and remain
   * candidates of every search).
   */
  flushPending(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (![...this.pending.values()].some((rows) => rows.size > 0)) return;
    this.writePending();
    // a new map, not clear(): a cleared map links its old table to the new one, which would keep
    // every pending document since the map was promoted alive until a full GC (history.ts RecentDocs)
    this.pending = new Map();
  }

  /** Documents journaled whose FTS rows are still to be written by {@link flushPending}. */
  get pendingCount(): number {
    let n = 0;
    for (const rows of this.pending.values()) n += rows.size;
    return n;
  }

  /** The sqlite transaction of the marks staged since the last call committed: they are pending now. */
  committed(): void {
    if (this.staged.length === 0) return;
    for (const { collection, rowid, doc, inserted, fields, marked } of this.staged) {
      const rows = this.pendingOf(collection);
      const earlier = rows.get(rowid);
      // a document inserted and changed again before its flush still has no FTS rows; one changed
      // twice rewrites the fields of both changes
      rows.set(rowid, earlier ? { doc, fresh: earlier.fresh, fields: earlier.fields | fields, marked: earlier.marked || marked } : { doc, fresh: inserted, fields, marked });
    }
    this.staged = [];
    if (this.stagedUpTo > this.journaledUpTo) this.journaledUpTo = this.stagedUpTo;
    // a failed flush is retried by the next write's timer (the rows stay pending meanwhile)
    this.timer ??= setTimeout(() => {
      try {
        this.flushPending();
      } catch {
        this.timer = undefined;
      }
    }, TEXT_FLUSH_MS);
    this.timer.unref?.();
  }

  /** The sqlite transaction of the staged marks rolled back: forget them. */
  discarded(): void {
    this.staged = [];
    this.stagedUpTo = this.journaledUpTo;
  }

  /** True when `collection` has text fields (its text changes are marked through {@link mark}). */
  has(collection: string): boolean {
    return this.tables.has(collection);
  }

  /**
   * Marks the document of `rowid` in a text collection (its `docs` row just written with `doc`, or
   * deleted: `doc` null; `inserted`: the row is new, so it has no FTS rows yet; `fields`: the
   * {@link changedTextFields} mask of the fields whose rows to rewrite, undefined for all) in
   * `text_pending`; its FTS rows follow in {@link flushPending}. (A write whose text fields are
   * unchanged is not marked: its FTS rows stay; nor is a new document above the watermark: the
   * documents above it are indexed at open.) Call inside the journal's sqlite transaction, after
   * the row's write, then {@link committed} or {@link discarded}.
   */
  mark(collection: string, rowid: number, doc: Doc | null, inserted: boolean, fields: number = ALL_TEXT_FIELDS): void {
    // the FTS rows follow later (flushPending); the mark is durable with the document
    const marked = !inserted || rowid <= this.watermark;
    if (marked) this.markPending.run(collection, rowid);
    if (rowid > this.stagedUpTo) this.stagedUpTo = rowid;
    this.staged.push({ collection, rowid, doc, inserted, fields, marked });
  }

  /**
   * Rowids of the documents whose folded `field` contains every one of `literals` (folded, ≥ 3
   * characters), plus every pending rowid of the collection (a superset: see the class comment).
   */
  search(collection: string, field: string, literals: readonly string[]): number[] {
    const table = this.tables.get(collection)?.find((t) => t.field === field);
    if (!table) throw new Error(`no text index on ${collection}.${field}`);
    const found = table.search.all(trigramQuery(literals)) as number[];
    const pending = this.pending.get(collection);
    if (!pending || pending.size === 0) return found;
    const all = new Set(found);
    for (const rowid of pending.keys()) all.add(rowid);
    return [...all];
  }

  private rebuild(coll: string, fields: readonly string[]): void {
    const build = this.db.transaction(() => {
      this.db.exec(`DROP TABLE IF EXISTS ${quote(legacyTableOf(coll))}`);
      const inserts = fields.map((field) => {
        const table = quote(tableOf(coll, field));
        this.db.exec(`DROP TABLE IF EXISTS ${table}`);
        this.db.exec(`CREATE VIRTUAL TABLE ${table} USING fts5(text, tokenize = 'trigram case_sensitive 1', content = '', contentless_delete = 1, detail = none)`);
        return { field, insert: this.db.prepare(`INSERT INTO ${table} (rowid, text) VALUES (?, ?)`) };
      });
      // in batches: better-sqlite3 cannot write while a read's iterator is open
      const batch = this.db.prepare('SELECT rowid, body FROM docs WHERE coll = ? AND rowid > ? ORDER BY rowid LIMIT 5000').raw();
      let n = 0;
      for (let last = -Infinity; ; ) {
        const rows = batch.all(coll, last) as [number, string][];
        if (rows.length === 0) break;
        for (const [rowid, body] of rows) {
          const doc = JSON.parse(body) as Doc;
          for (const { field, insert } of inserts) insert.run(rowid, indexedText(doc, field));
        }
        n += rows.length;
        last = rows[rows.length - 1]![0];
      }
      this.db.prepare('INSERT INTO text_meta (coll, version) VALUES (?, ?) ON CONFLICT (coll) DO UPDATE SET version = excluded.version').run(coll, TEXT_INDEX_VERSION);
      this.rebuilt.set(coll, n);
    });
    build();
  }
}

/** Finds the rowids of a collection's documents whose `field` contains all `literals` (an FTS query). */
export type TextSearch = (field: string, literals: readonly string[]) => number[];

interface CachedSearch {
  field: string;
  /** The search's condition on `field`, compiled (the exact test). */
  matches: Matcher;
  /** Exactly the documents matching the condition. */
  slots: Posting;
}

/**
 * The match sets of substring conditions for one collection. A condition seen for the first time
 * is answered by the FTS table (a superset: the documents holding every literal piece), and each
 * of those candidates is tested against the condition itself, so the set holds exactly the
 * matches, like an equality index's set of a value. The sets of the last {@link CACHED_SEARCHES}
 * conditions are kept and maintained on every write (a written document is tested against each),
 * so a repeated search costs no sqlite query and no regex test.
 */
export class TextCandidates {
  private readonly cache = new Map<string, CachedSearch>();
  /** Slot + 1 of each document by its sqlite rowid (0: none); 4 bytes per rowid ever given. */
  private slotOfRow = new Int32Array(1024);

  constructor(
    readonly fields: readonly string[],
    private readonly search: TextSearch,
  ) {}

  /**
   * The slots of exactly the documents whose `field` matches `cond`, or `undefined` when the index
   * cannot answer (not a text field, not a `$regex` of the understood shape, no literal piece of
   * ≥ 3 characters, or an sqlite failure): the caller then tests every candidate.
   * `bySlot`: the collection's documents by slot (committed state, which the FTS table mirrors).
   */
  matches(field: string, cond: unknown, bySlot: ReadonlyArray<{ doc: Doc } | undefined>): Slots | undefined {
    if (!this.fields.includes(field)) return undefined;
    const c = cond as { $regex?: unknown; $options?: unknown } | null;
    // a kept search is found before its pattern is parsed again (only an answerable one is kept)
    const key = typeof c === 'object' && c !== null && typeof c.$regex === 'string' && (c.$options === undefined || typeof c.$options === 'string') && Object.keys(c).every((k) => k === '$regex' || k === '$options')
      ? `${field}\u0000${c.$options ?? ''}\u0000${c.$regex}` : undefined;
    const hit = key === undefined ? undefined : this.cache.get(key);
    if (hit) {
      this.cache.delete(key!); // most recently used last
      this.cache.set(key!, hit);
      return hit.slots;
    }
    const literals = regexLiterals(cond);
    if (!literals || key === undefined) return undefined;
    let rowids: number[];
    try {
      rowids = this.search(field, literals);
    } catch {
      return undefined;
    }
    const matches = compileFilter({ [field]: { $regex: c!.$regex, ...(c!.$options === undefined ? {} : { $options: c!.$options }) } });
    const slots = new Int32Array(rowids.length + this.unjournaled.size);
    let n = 0;
    const take = (slot: number) => {
      const doc = slot >= 0 ? bySlot[slot]?.doc : undefined;
      if (doc && matches(doc)) slots[n++] = slot;
    };
    for (const rowid of rowids) take(rowid < this.slotOfRow.length ? this.slotOfRow[rowid]! - 1 : -1);
    // documents whose new text is in memory and not marked pending in the journal yet
    for (const slot of this.unjournaled.keys()) take(slot);
    slots.subarray(0, n).sort();
    const posting = new Posting();
    for (let i = 0; i < n; i++) if (i === 0 || slots[i] !== slots[i - 1]) posting.add(slots[i]!, bySlot.length);
    this.cache.set(key, { field, matches, slots: posting });
    if (this.cache.size > CACHED_SEARCHES) this.cache.delete(this.cache.keys().next().value!);
    return posting;
  }

  /**
   * Forgets every kept search and rebuilds the rowid → slot map from `bySlot` (the committed
   * documents): after a failed commit nothing derived is trusted (docs/store.md "All or nothing").
   */
  reset(bySlot: ReadonlyArray<{ rowid: number } | undefined>): void {
    this.cache.clear();
    let top = 0;
    for (const entry of bySlot) if (entry && entry.rowid > top) top = entry.rowid;
    this.slotOfRow = new Int32Array(Math.max(1024, this.slotOfRow.length, top + 1));
    for (let slot = 0; slot < bySlot.length; slot++) {
      const rowid = bySlot[slot]?.rowid;
      if (rowid !== undefined && rowid > 0) this.slotOfRow[rowid] = slot + 1;
    }
  }

  /**
   * Slots whose text a grouped commit changed in memory while its journal write (which marks the
   * document pending for the FTS table) is still to come, with how many such writes are waiting:
   * candidates of every new search until then (docs/store.md "Group commit").
   */
  private unjournaled = new Map<number, number>();

  /** A grouped commit changed the text of the document in `slot`; see {@link journaled}. */
  textChangeGrouped(slot: number): void {
    this.unjournaled.set(slot, (this.unjournaled.get(slot) ?? 0) + 1);
  }

  /** The journal wrote one grouped text change of `slot` (its document is pending in the journal now). */
  journaled(slot: number): void {
    const n = this.unjournaled.get(slot) ?? 0;
    if (n > 1) this.unjournaled.set(slot, n - 1);
    else if (this.unjournaled.delete(slot) && this.unjournaled.size === 0) this.unjournaled = new Map(); // see history.ts RecentDocs
  }

  /**
   * Keeps the rowid map and the kept sets current: `slot` now holds `doc` (null: deleted), it
   * held `before`; `rowid` is the document's sqlite rowid (given at load and on every write).
   */
  write(slot: number, before: Doc | undefined, doc: Doc | null, slotCount: number, rowid: number | undefined): void {
    if (rowid !== undefined) {
      if (rowid >= this.slotOfRow.length) {
        const grown = new Int32Array(Math.max(rowid + 1, this.slotOfRow.length * 2));
        grown.set(this.slotOfRow);
        this.slotOfRow = grown;
      }
      this.slotOfRow[rowid] = doc ? slot + 1 : 0;
    }
    for (const [key, c] of this.cache) {
      if (!doc) c.slots.remove(slot);
      else if (before && before[c.field] === doc[c.field]) continue;
      else {
        let matches: boolean;
        try {
          matches = c.matches(doc);
        } catch {
          // a kept set that cannot be maintained is dropped (the next such search is answered afresh), never trusted
          this.cache.delete(key);
          continue;
        }
        if (matches) c.slots.add(slot, slotCount);
        else c.slots.remove(slot);
      }
    }
  }
}
