import Database from 'better-sqlite3';
import { AppError } from '../../errors/index.js';
import { HistoryTable } from './history.js';
import { TextTables, unionOfFields } from './text-index.js';
import type { Change } from './txn.js';
import { WalSync } from './wal-sync.js';

/**
 * One stored row, as read at open (a raw row: no object per row): the row's sqlite rowid (the text
 * index's key, text-index.ts), the collection and the document as JSON text (its `_id` is the
 * row's id).
 */
export type JournalRow = [rowid: number, coll: string, body: string];

/** An index declared on the store (`ensureIndexes`), kept in the journal to be built while loading. */
export interface StoredIndex {
  collection: string;
  fields: string[];
  unique: boolean;
  /** Found near-unique at the last close: filled on first use instead of while loading. */
  deferred?: boolean;
}

function unavailable(message: string, cause: unknown): AppError {
  return new AppError('STORE_UNAVAILABLE', { message, cause });
}

/**
 * How far a commit is on disk before the write is acknowledged (docs/store.md
 * "Durability"): `full` (the default) acknowledges a write only once the WAL holding it is synced
 * (fsync, shared by concurrent commits: {@link WalSync}), so an acknowledged write survives an OS
 * crash or power loss; `normal` syncs only at checkpoints, so a process crash keeps every
 * acknowledged write but an OS crash may drop the last ones.
 */
export type JournalSync = 'full' | 'normal';

/**
 * SQLite's automatic checkpoint threshold, in WAL pages (4 KiB): ~40 MB of WAL. SQLite's default
 * (1,000) checkpoints every ~250 writes of a task and its event, and each checkpoint copies and
 * syncs pages on the event loop; a larger WAL also merges the many writes of one hot page (the
 * events counter, the last leaf of a table) into one copy. Durability is unchanged: an
 * acknowledged write is in the synced WAL (docs/store.md "Durability").
 */
export const WAL_AUTOCHECKPOINT_PAGES = 10_000;
/** The WAL file is truncated to this size after a checkpoint (bytes). */
export const WAL_SIZE_LIMIT_BYTES = 64 * 1024 * 1024;
/** A journal with no write for this long (ms) checkpoints the WAL into the database file. */
export const IDLE_CHECKPOINT_MS = 1_000;

/**
 * Thrown when the journal file is locked by another process (SQLite `SQLITE_BUSY` at open): the
 * embedded store is single-process. A `STORE_UNAVAILABLE` AppError like every other open
 * failure; entry points recognise it and turn it into one line naming `DATA_DIR`.
 */
export class StoreInUseError extends AppError {
  constructor(readonly file: string, cause?: unknown) {
    super('STORE_UNAVAILABLE', { message: `The embedded store ${file} is in use by another process`, cause });
    this.name = 'StoreInUseError';
  }
}

/**
 * `changes` with each row's last change only, in order: a document written twice in one group (an
 * Idempotency-Key claim and its finished record, a card moved twice) is written once, as its last
 * version. The survivor is an insert when an earlier one was, and its text fields to index are
 * its own changed fields and every earlier one's (its `textChanged` compares with a version never written).
 * Rowids are unique across the store's collections, so a row is its rowid; a change without one (a
 * history collection's, whose table row is written by `_id`: history.ts) is its collection and id.
 */
export function lastPerRow(changes: Change[]): Change[] {
  if (changes.length < 2) return changes;
  const last = new Map<number | string, Change>();
  const rowOf = (c: Change): number | string => c.rowid ?? `${c.collection}\u0000${c.id}`;
  let superseded = false;
  for (const c of changes) {
    const row = rowOf(c);
    const earlier = last.get(row);
    if (earlier) {
      superseded = true;
      if (earlier.inserted) c.inserted = true;
      if (earlier.doc === null && c.doc !== null) c.textChanged = undefined; // a new row: every field
      else if (earlier.textChanged !== 0) c.textChanged = unionOfFields(earlier.textChanged, c.textChanged);
    }
    last.set(row, c);
  }
  return superseded ? changes.filter((c) => last.get(rowOf(c)) === c) : changes;
}

/**
 * Durability of the embedded store (docs/architecture.md §2): one better-sqlite3 table
 * `docs(coll, id, body)` in WAL mode with `synchronous=NORMAL`, each row addressed by the rowid the
 * store gave its document ({@link Change.rowid}; memory is the source of truth, so no id key is kept), plus, for `full` durability
 * ({@link JournalSync}), a group fsync of the WAL before each write is acknowledged ({@link flush}).
 * Each {@link write} is one sqlite transaction (an insert, update or delete by rowid per document), so a call, a bulk
 * write or a transaction commit is on disk entirely or not at all; a text collection's document is
 * marked for the FTS5 text index in the same sqlite transaction, and its FTS row is written
 * shortly after with others ({@link TextTables}). The file is locked
 * exclusively while open: memory is the source of truth, so a second process on the same file is
 * refused with {@link StoreInUseError}. Other SQLite faults become `STORE_UNAVAILABLE`.
 */
export class Journal {
  private readonly db: Database.Database;
  private readonly writeAll: (changes: Change[]) => void;
  private readonly walSync: WalSync | undefined;
  /** The FTS5 text index: marked in the same sqlite transaction as the documents, rows written shortly after (text-index.ts). */
  readonly text: TextTables;

  constructor(readonly file: string, sync: JournalSync = 'full') {
    try {
      this.db = new Database(file, { timeout: 200 });
      this.db.pragma('locking_mode = EXCLUSIVE');
      this.db.pragma('journal_mode = WAL');
      // `full` is reached by WalSync's group fsync; SQLite's per-commit sync would cost one fsync per write
      this.db.pragma('synchronous = NORMAL');
      // checkpoints: rarely under load (each copies the WAL's pages into the file and syncs it, on
      // the event loop), and when the journal has been idle for a while (see checkpointWhenIdle)
      this.db.pragma(`wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}`);
      this.db.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
      this.db.exec('CREATE TABLE IF NOT EXISTS docs (coll TEXT NOT NULL, id TEXT NOT NULL, body TEXT NOT NULL)');
      this.dropIdKey();
      // the hash indexes declared so far (fields: a JSON array), built in the load pass at open
      this.db.exec('CREATE TABLE IF NOT EXISTS doc_indexes (coll TEXT NOT NULL, fields TEXT NOT NULL, is_unique INTEGER NOT NULL, deferred INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (coll, fields))');
      // history collections (history.ts): whether each indexed field holds only values SQL
      // compares as the store does (plain = 1)
      this.db.exec('CREATE TABLE IF NOT EXISTS hist_fields (coll TEXT NOT NULL, field TEXT NOT NULL, plain INTEGER NOT NULL, PRIMARY KEY (coll, field))');
      this.db.function('hist_unordered', { deterministic: true }, (v: unknown) => (typeof v === 'string' && /[\ud800-\uffff]/.test(v) ? 1 : 0));
    } catch (e) {
      if ((e as { code?: unknown }).code === 'SQLITE_BUSY') throw new StoreInUseError(file, e);
      throw unavailable(`Cannot open the embedded store at ${file}`, e);
    }
    try {
      this.text = new TextTables(this.db);
    } catch (e) {
      this.db.close();
      throw unavailable(`Cannot build the text index of the embedded store at ${file}`, e);
    }
    const text = this.text;
    // rows are addressed by the rowid the store gave them (Change.rowid): no (coll, id) key to keep
    const insert = this.db.prepare('INSERT INTO docs (rowid, coll, id, body) VALUES (?, ?, ?, ?)');
    const update = this.db.prepare('UPDATE docs SET body = ? WHERE rowid = ?');
    const remove = this.db.prepare('DELETE FROM docs WHERE rowid = ?');
    // a text collection's write whose text is unchanged is the row alone (its FTS row stays)
    const oneStatement = (c: Change) => !text.has(c.collection) || (c.doc !== null && c.textChanged === 0);
    const history = this.history;
    const apply = (c: Change) => {
      const table = history.get(c.collection);
      if (table) {
        table.write(c.id, c.doc);
        return;
      }
      const rowid = c.rowid;
      if (rowid === undefined) return; // a delete of a document that was never stored
      let inserted = false;
      if (!c.doc) remove.run(rowid);
      else {
        // one text for the update and, when it finds no row, the insert
        const body = JSON.stringify(c.doc);
        if (c.inserted || update.run(body, rowid).changes === 0) {
          insert.run(rowid, c.collection, c.id, body);
          inserted = true;
        }
      }
      if (!oneStatement(c)) text.mark(c.collection, rowid, c.doc, inserted, c.textChanged);
    };
    const many = this.db.transaction((changes: Change[]) => changes.forEach(apply));
    // One statement is atomic on its own (autocommit): no BEGIN/COMMIT round for a single change.
    // (a text change is two statements, the row and its text_pending mark: in a transaction)
    this.writeAll = (changes) => (changes.length === 1 && oneStatement(changes[0]!) ? apply(changes[0]!) : many(changes));
    this.walSync = sync === 'normal' ? undefined : new WalSync(`${file}-wal`, (synced) => this.beforeSync?.(synced));
    this.idle = setInterval(() => this.checkpointWhenIdle(), IDLE_CHECKPOINT_MS);
    this.idle.unref();
  }

  /** The tables of the history collections opened so far (history.ts), by collection. */
  private readonly history = new Map<string, HistoryTable>();

  /**
   * The table of history collection `collection`, created when missing. With `moveRows` (the
   * open found documents of the collection in `docs`: a data folder written before it was a
   * history collection) they are moved into it, in one sqlite transaction; their free pages are
   * reused by later writes (the file is not compacted). Throws `STORE_UNAVAILABLE` on a SQLite fault.
   */
  historyTable(collection: string, moveRows = false): HistoryTable {
    let table = this.history.get(collection);
    if (table && !moveRows) return table;
    try {
      this.db.transaction(() => {
        table ??= new HistoryTable(this.db, collection);
        if (moveRows) {
          this.db.prepare(`INSERT OR REPLACE INTO ${table.table} (id, body) SELECT id, body FROM docs WHERE coll = ? ORDER BY rowid`).run(collection);
          this.db.prepare('DELETE FROM docs WHERE coll = ?').run(collection);
        }
      })();
    } catch (e) {
      throw unavailable(`The embedded store could not open the table of ${collection}`, e);
    }
    this.history.set(collection, table!);
    this.uncheckpointed = true;
    return table!;
  }

  /** The indexed fields of history collection `collection` recorded by {@link recordField}: field → plain. */
  historyFields(collection: string): Map<string, boolean> {
    const rows = this.db.prepare('SELECT field, plain FROM hist_fields WHERE coll = ?').raw(true).all(collection) as [string, number][];
    return new Map(rows.map(([field, plain]) => [field, plain === 1]));
  }

  /**
   * Records whether an indexed field of a history collection holds only values SQL compares as the
   * store does (`plain`: pushed into SQL; history.ts). A field found not plain is recorded at once,
   * before the document that holds such a value is journaled. Throws `STORE_UNAVAILABLE` on a
   * write failure.
   */
  recordField(collection: string, field: string, plain: boolean): void {
    try {
      this.db.prepare('INSERT INTO hist_fields (coll, field, plain) VALUES (?, ?, ?) ON CONFLICT (coll, field) DO UPDATE SET plain = excluded.plain').run(collection, field, plain ? 1 : 0);
    } catch (e) {
      throw unavailable('The embedded store could not record an index field', e);
    }
    this.uncheckpointed = true;
  }

  private readonly idle: ReturnType<typeof setInterval>;
  /** Writes since the last tick of {@link idle} / since the last checkpoint. */
  private writesSinceTick = 0;
  private uncheckpointed = false;

  /**
   * Every {@link IDLE_CHECKPOINT_MS}: when nothing was written during the last interval but
   * something since the last checkpoint, a PASSIVE checkpoint copies the WAL into the database
   * file (off the request path: nothing is being written). A failure is left to the next one.
   */
  private checkpointWhenIdle(): void {
    const busy = this.writesSinceTick > 0;
    this.writesSinceTick = 0;
    if (busy || !this.uncheckpointed) return;
    try {
      this.text.flushPending();
      this.db.pragma('wal_checkpoint(PASSIVE)');
      this.uncheckpointed = false;
    } catch {
      // retried at the next idle tick; the WAL keeps every write meanwhile
    }
  }

  /**
   * `full` durability only: called on the event loop right before each WAL fsync starts, with the
   * promise that fsync settles; what it writes (the store's grouped commits) is covered by that
   * fsync. It must not throw.
   */
  beforeSync: ((synced: Promise<void>) => void) | undefined;

  /** True in `full` durability: {@link flush} waits for an fsync (and {@link beforeSync} runs before each). */
  get syncs(): boolean {
    return this.walSync !== undefined;
  }

  /**
   * `full`: a promise that resolves when everything written so far, and whatever {@link beforeSync}
   * writes before the sync it waits for, is on disk (rejects with `STORE_UNAVAILABLE` when the
   * sync fails); `normal`: undefined (nothing to wait for).
   */
  flush(): Promise<void> | undefined {
    return this.walSync?.flush();
  }

  /**
   * Journals written before rows were addressed by rowid had a `(coll, id)` primary key on `docs`
   * (one more b-tree written per write, a random page of it for a random id). The table is copied
   * once, rowids kept (the text index's keys), without it, and the file is compacted (`VACUUM`:
   * the old table's pages would stay in it as free pages). At 1M tasks that first open took 19.6 s
   * instead of 6.6 s, once.
   */
  private dropIdKey(): void {
    const sql = this.db.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'docs'").pluck().get() as string | undefined;
    if (!sql?.includes('PRIMARY KEY')) return;
    this.db.transaction(() => {
      this.db.exec('CREATE TABLE docs_by_rowid (coll TEXT NOT NULL, id TEXT NOT NULL, body TEXT NOT NULL)');
      this.db.exec('INSERT INTO docs_by_rowid (rowid, coll, id, body) SELECT rowid, coll, id, body FROM docs ORDER BY rowid');
      this.db.exec('DROP TABLE docs');
      this.db.exec('ALTER TABLE docs_by_rowid RENAME TO docs');
    })();
    this.db.exec('VACUUM');
  }

  /** Every stored document, in rowid order (first-insert order), as raw rows. */
  rows(): IterableIterator<JournalRow> {
    return this.db.prepare('SELECT rowid, coll, body FROM docs ORDER BY rowid').raw(true).iterate() as IterableIterator<JournalRow>;
  }

  /** The indexes recorded by {@link saveIndex}, in the order first recorded. */
  indexes(): StoredIndex[] {
    const rows = this.db.prepare('SELECT coll, fields, is_unique, deferred FROM doc_indexes ORDER BY rowid').raw(true).all() as [string, string, number, number][];
    return rows.map(([collection, fields, unique, deferred]) => ({ collection, fields: JSON.parse(fields) as string[], unique: unique === 1, deferred: deferred === 1 }));
  }

  /** Marks recorded single-field indexes deferred or not ({@link StoredIndex.deferred}); best effort (a failure changes nothing). */
  deferIndexes(marks: { collection: string; field: string; deferred: boolean }[]): void {
    try {
      const mark = this.db.prepare('UPDATE doc_indexes SET deferred = ? WHERE coll = ? AND fields = ? AND deferred <> ?');
      this.db.transaction(() => {
        for (const m of marks) mark.run(m.deferred ? 1 : 0, m.collection, JSON.stringify([m.field]), m.deferred ? 1 : 0);
      })();
    } catch {
      // a hint only: the indexes are filled while loading as before
    }
  }

  /**
   * Records an index built on the store (a unique one replaces a non-unique record of the same
   * fields), to be built in the load pass of the next open. Throws `STORE_UNAVAILABLE` on a
   * write failure.
   */
  saveIndex(index: StoredIndex): void {
    try {
      this.db
        .prepare('INSERT INTO doc_indexes (coll, fields, is_unique) VALUES (?, ?, ?) ON CONFLICT (coll, fields) DO UPDATE SET is_unique = max(is_unique, excluded.is_unique)')
        .run(index.collection, JSON.stringify(index.fields), index.unique ? 1 : 0);
    } catch (e) {
      throw unavailable('The embedded store could not record an index', e);
    }
    this.uncheckpointed = true;
  }

  /** Writes the changes in one sqlite transaction. */
  write(changes: Change[]): void {
    try {
      this.writeAll(lastPerRow(changes));
    } catch (e) {
      this.text.discarded();
      throw unavailable('The embedded store could not write to disk', e);
    }
    this.writesSinceTick++;
    this.uncheckpointed = true;
    this.text.committed();
  }

  /**
   * Copies the journal into the new file `destination` with SQLite's online backup API (through
   * this connection, which holds the file's exclusive lock): writes go on meanwhile, and the copy
   * holds every transaction committed before it ends. Rejects with `STORE_UNAVAILABLE`.
   */
  async backup(destination: string): Promise<void> {
    try {
      await this.db.backup(destination);
    } catch (e) {
      throw unavailable(`The embedded store could not be copied to ${destination}`, e);
    }
  }

  close(): void {
    clearInterval(this.idle);
    try {
      this.text.flushPending();
    } catch {
      // the rows stay in text_pending: indexed at the next open
    }
    this.db.close();
    this.walSync?.close();
  }
}
