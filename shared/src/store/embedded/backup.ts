import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import Database from 'better-sqlite3';
import { AppError } from '../../errors/index.js';
import type { EmbeddedStore } from './embedded-store.js';

/**
 * Backup and restore of the embedded default's `DATA_DIR` (docs/store.md "Backup and restore").
 * A backup is ONE SQLite file: the copy of `store.sqlite` made with SQLite's online backup API
 * (by the running store, or from the file when no process holds it), plus the table
 * `backup_files` holding the other files of `DATA_DIR` (the generated `jwt-secret`) and the
 * table `backup_info` marking the file as a backup. A restore writes them back into an empty
 * `DATA_DIR` and removes both tables.
 */

/** The store's file in `DATA_DIR`. */
export const STORE_FILE = 'store.sqlite';
/** The marker a backup file carries (`backup_info.format`). */
export const BACKUP_FORMAT = 'board-task-service-backup/1';

/** What a backup or restore did: the file written, its size, and the other `DATA_DIR` files carried. */
export interface BackupResult {
  file: string;
  bytes: number;
  files: string[];
}

const failure = (message: string, cause?: unknown) => new AppError('STORE_UNAVAILABLE', { message, ...(cause ? { cause } : {}) });

/** The regular files of `dir` beside the store's (its `-wal`/`-shm` files and earlier temporary files excluded). */
function sideFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).filter((f) => !f.startsWith(STORE_FILE) && !f.endsWith('.tmp') && statSync(join(dir, f)).isFile());
}

/** Adds the side files and the marker to a fresh copy of the store at `file` and makes it one self-contained file (no WAL). */
function finishBackup(file: string, dataDir: string, at: Date): string[] {
  const files = sideFiles(dataDir);
  const db = new Database(file);
  try {
    db.pragma('journal_mode = DELETE');
    db.exec('CREATE TABLE backup_files (name TEXT PRIMARY KEY, content BLOB NOT NULL)');
    db.exec('CREATE TABLE backup_info (format TEXT NOT NULL, taken_at TEXT NOT NULL)');
    const put = db.prepare('INSERT INTO backup_files (name, content) VALUES (?, ?)');
    db.transaction(() => {
      for (const f of files) put.run(f, readFileSync(join(dataDir, f)));
      db.prepare('INSERT INTO backup_info (format, taken_at) VALUES (?, ?)').run(BACKUP_FORMAT, at.toISOString());
    })();
  } finally {
    db.close();
  }
  return files;
}

/** A temporary name beside `file` (renamed into place once complete, so a failed run leaves no half file under its name). */
const temporary = (file: string) => join(dirname(file), `.${basename(file)}.${process.pid}.tmp`);

/**
 * Backs up a RUNNING embedded store (the admin route, `POST /api/v1/admin/backup`): the store's
 * online copy (no write is refused meanwhile; every write acknowledged before the call is in it)
 * and `dataDir`'s side files, into `file` (replaced when it exists). Rejects with
 * `STORE_UNAVAILABLE` naming what failed; nothing is left under `file` then.
 */
export async function backupStore(store: EmbeddedStore, dataDir: string, file: string, now = new Date()): Promise<BackupResult> {
  const tmp = temporary(file);
  try {
    mkdirSync(dirname(file), { recursive: true });
    rmSync(tmp, { force: true });
    await store.backup(tmp);
    const files = finishBackup(tmp, dataDir, now);
    renameSync(tmp, file);
    return { file, bytes: statSync(file).size, files };
  } catch (e) {
    rmSync(tmp, { force: true });
    throw AppError.is(e) ? e : failure(`The backup could not be written to ${file}`, e);
  }
}

/** Thrown when `DATA_DIR`'s store is held by a running process: back it up through that process (the admin route). */
export class DataDirInUseError extends Error {
  constructor(readonly dataDir: string) {
    super(`DATA_DIR ${dataDir} is in use by a running service`);
  }
}

/**
 * Backs up the store of a `dataDir` that NO process holds (`npm run backup` while the service is
 * stopped): the online backup API from the file itself. Throws {@link DataDirInUseError} when a
 * process holds it, `STORE_UNAVAILABLE` when there is no store there or the copy fails.
 */
export async function backupDataDir(dataDir: string, file: string, now = new Date()): Promise<BackupResult> {
  const source = join(dataDir, STORE_FILE);
  if (!existsSync(source)) throw failure(`There is no embedded store in ${dataDir} (no ${STORE_FILE})`);
  let db: Database.Database;
  try {
    db = new Database(source, { timeout: 200, fileMustExist: true });
    // the running store holds its file with an exclusive lock: a read tells whether it is free
    db.prepare('SELECT count(*) FROM sqlite_master').get();
  } catch (e) {
    if ((e as { code?: string }).code === 'SQLITE_BUSY') throw new DataDirInUseError(dataDir);
    throw failure(`The embedded store in ${dataDir} cannot be opened`, e);
  }
  const tmp = temporary(file);
  try {
    mkdirSync(dirname(file), { recursive: true });
    rmSync(tmp, { force: true });
    await db.backup(tmp);
    db.close();
    const files = finishBackup(tmp, dataDir, now);
    renameSync(tmp, file);
    return { file, bytes: statSync(file).size, files };
  } catch (e) {
    if (db.open) db.close();
    rmSync(tmp, { force: true });
    if ((e as { code?: string }).code === 'SQLITE_BUSY') throw new DataDirInUseError(dataDir);
    throw failure(`The backup could not be written to ${file}`, e);
  }
}

/**
 * Restores the backup `file` into `dataDir` (`npm run restore`): refused (400 `VALIDATION_FAILED`
 * naming the place) when `file` is not a backup, when `dataDir` already holds a store (in use or
 * not: a restore never overwrites one; move it away first) or other files. Writes the store file
 * and the side files; the restored store opens like any other (`npm start` with that `DATA_DIR`).
 */
export function restoreDataDir(file: string, dataDir: string): BackupResult {
  if (!existsSync(file)) throw new AppError('VALIDATION_FAILED', { message: `No backup file ${file}`, validationErrors: [{ field: 'file', code: 'not_found', message: `${file} does not exist` }] });
  const present = existsSync(dataDir) ? readdirSync(dataDir) : [];
  if (present.length > 0) {
    const inUse = present.includes(STORE_FILE) && storeInUse(join(dataDir, STORE_FILE));
    throw new AppError('VALIDATION_FAILED', {
      message: inUse ? `DATA_DIR ${dataDir} is in use by a running service; a restore never overwrites it` : `DATA_DIR ${dataDir} is not empty (${present.join(', ')}); restore into an empty folder`,
      validationErrors: [{ field: 'DATA_DIR', code: inUse ? 'in_use' : 'not_empty', message: inUse ? 'in use' : 'not empty' }],
    });
  }
  mkdirSync(dataDir, { recursive: true });
  const target = join(dataDir, STORE_FILE);
  const tmp = `${target}.tmp`;
  copyFileSync(file, tmp);
  let files: string[] = [];
  try {
    const db = new Database(tmp);
    try {
      const info = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'backup_info'").get() as { name: string } | undefined;
      const format = info ? (db.prepare('SELECT format FROM backup_info').get() as { format: string } | undefined)?.format : undefined;
      if (format !== BACKUP_FORMAT) throw new AppError('VALIDATION_FAILED', { message: `${file} is not a backup of this service`, validationErrors: [{ field: 'file', code: 'format', message: 'not a backup' }] });
      const rows = db.prepare('SELECT name, content FROM backup_files').all() as Array<{ name: string; content: Buffer }>;
      for (const r of rows) writeFileSync(join(dataDir, basename(r.name)), r.content, { mode: 0o600 });
      files = rows.map((r) => r.name);
      db.exec('DROP TABLE backup_files; DROP TABLE backup_info');
    } finally {
      db.close();
    }
    renameSync(tmp, target);
  } catch (e) {
    rmSync(tmp, { force: true });
    for (const f of files) rmSync(join(dataDir, f), { force: true });
    throw AppError.is(e) ? e : new AppError('VALIDATION_FAILED', { message: `${file} cannot be read as a backup: ${(e as Error).message}`, validationErrors: [{ field: 'file', code: 'format', message: 'unreadable' }] });
  }
  return { file: target, bytes: statSync(target).size, files };
}

/** True when a process holds the store file (its exclusive lock refuses a read). */
function storeInUse(file: string): boolean {
  try {
    const db = new Database(file, { timeout: 100, fileMustExist: true, readonly: true });
    try {
      db.prepare('SELECT count(*) FROM sqlite_master').get();
      return false;
    } finally {
      db.close();
    }
  } catch (e) {
    return (e as { code?: string }).code === 'SQLITE_BUSY';
  }
}
