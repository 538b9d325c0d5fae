import Database from 'better-sqlite3';
import { AppError } from '../../errors/index.js';
import { TextTables } from './text-index.js';
import type { Change } from './txn.js';

/** One stored row: a document of a collection as JSON text. */
export interface JournalRow {
  coll: string;
  id: string;
  body: string;
  /** The row's sqlite rowid (the text index's key, text-index.ts). */
  rowid: number;
}

function unavailable(message: string, cause: unknown): AppError {
  return new AppError('STORE_UNAVAILABLE', { message, cause });
}

/**
 * Durability of the embedded store (DESIGN §2): one better-sqlite3 table
 * `docs(coll, id, body)` in WAL mode with `synchronous=NORMAL`. Each {@link write} is one sqlite
 * transaction (upsert or delete per document), so a call, a bulk write or a transaction commit
 * is on disk entirely or not at all; the FTS5 text index of a text collection's documents
 * ({@link TextTables}) is written in the same sqlite transaction. The file is locked exclusively while open: memory is the
 * source of truth, so a second process on the same file is refused. SQLite faults become
 * `STORE_UNAVAILABLE`.
 */
export class Journal {
  private readonly db: Database.Database;
  private readonly writeAll: (changes: Change[]) => void;
  /** The FTS5 text index, written in the same sqlite transaction as the documents (text-index.ts). */
  readonly text: TextTables;

  constructor(readonly file: string) {
    try {
      this.db = new Database(file, { timeout: 200 });
      this.db.pragma('locking_mode = EXCLUSIVE');
      this.db.pragma('journal_mode = WAL');
      this.db.pragma('synchronous = NORMAL');
      this.db.exec('CREATE TABLE IF NOT EXISTS docs (coll TEXT NOT NULL, id TEXT NOT NULL, body TEXT NOT NULL, PRIMARY KEY (coll, id))');
    } catch (e) {
      throw unavailable(`Cannot open the embedded store at ${file} (is another process using it?)`, e);
    }
    try {
      this.text = new TextTables(this.db);
    } catch (e) {
      this.db.close();
      throw unavailable(`Cannot build the text index of the embedded store at ${file}`, e);
    }
    const text = this.text;
    const upsert = this.db.prepare('INSERT INTO docs (coll, id, body) VALUES (?, ?, ?) ON CONFLICT (coll, id) DO UPDATE SET body = excluded.body');
    const remove = this.db.prepare('DELETE FROM docs WHERE coll = ? AND id = ?');
    // a text collection's write whose text is unchanged is the plain upsert (its FTS row and rowid stay)
    const oneStatement = (c: Change) => !text.has(c.collection) || (c.doc !== null && c.textSame === true);
    const apply = (c: Change) => {
      if (text.has(c.collection) && !oneStatement(c)) text.write(c);
      else if (c.doc) upsert.run(c.collection, c.id, JSON.stringify(c.doc));
      else remove.run(c.collection, c.id);
    };
    const many = this.db.transaction((changes: Change[]) => changes.forEach(apply));
    // One statement is atomic on its own (autocommit): no BEGIN/COMMIT round for a single change.
    // (a text collection's other writes are several statements: in a transaction)
    this.writeAll = (changes) => (changes.length === 1 && oneStatement(changes[0]!) ? apply(changes[0]!) : many(changes));
  }

  /** Every stored document, in first-insert order. */
  rows(): IterableIterator<JournalRow> {
    return this.db.prepare('SELECT rowid, coll, id, body FROM docs ORDER BY rowid').iterate() as IterableIterator<JournalRow>;
  }

  /** Writes the changes in one sqlite transaction. */
  write(changes: Change[]): void {
    try {
      this.writeAll(changes);
    } catch (e) {
      throw unavailable('The embedded store could not write to disk', e);
    }
  }

  close(): void {
    this.db.close();
  }
}
