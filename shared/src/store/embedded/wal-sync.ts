import { closeSync, fsync, fsyncSync, openSync } from 'node:fs';
import { dirname } from 'node:path';
import { AppError } from '../../errors/index.js';

interface Batch {
  promise: Promise<void>;
  resolve(): void;
  reject(e: unknown): void;
}

function batch(): Batch {
  let resolve!: () => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/**
 * Group commit for the embedded journal's `full` durability (docs/store.md
 * "Durability"). SQLite runs with `synchronous=NORMAL`, so a commit only hands its WAL frames to
 * the OS; {@link flush} then resolves once an fsync of the WAL file that started after the call
 * has completed. Commits that arrive while one fsync runs share the next one, so N concurrent
 * writes cost about one fsync instead of N, and a write is acknowledged only when it is on disk.
 * The fsync runs on libuv's thread pool: reads keep being served meanwhile. The first sync also
 * syncs the folder, so the WAL file's own directory entry is durable.
 *
 * `beforeSync`, when given, runs on the event loop right before each fsync starts, with the
 * promise that fsync settles: the journal writes the commits grouped for it there (one sqlite
 * transaction for all the commits that waited for this sync; embedded-store.ts). It must not
 * throw (its own failures are its own to report).
 */
export class WalSync {
  private fd: number | undefined;
  private running = false;
  private next: Batch | undefined;
  private closed = false;

  constructor(
    private readonly walFile: string,
    private readonly beforeSync?: (synced: Promise<void>) => void,
  ) {}

  /**
   * Resolves when every write handed to SQLite before this call is on disk; rejects with
   * `STORE_UNAVAILABLE` when the fsync fails (the write's outcome is then unknown, as after a
   * timeout).
   */
  flush(): Promise<void> {
    if (this.closed) return Promise.resolve(); // closing checkpoints and syncs everything
    if (!this.next) {
      this.next = batch();
      // let the writes of this turn of the event loop join before the fsync starts
      if (!this.running) setImmediate(() => this.start());
    }
    return this.next.promise;
  }

  private start(): void {
    if (this.running || !this.next) return;
    const current = this.next;
    this.next = undefined;
    this.running = true;
    this.beforeSync?.(current.promise);
    let fd: number;
    try {
      fd = this.open();
    } catch (e) {
      this.running = false;
      current.reject(new AppError('STORE_UNAVAILABLE', { message: 'The embedded store could not sync its journal to disk', cause: e }));
      return;
    }
    fsync(fd, (err) => {
      this.running = false;
      if (err) current.reject(new AppError('STORE_UNAVAILABLE', { message: 'The embedded store could not sync its journal to disk', cause: err }));
      else current.resolve();
      if (this.closed) this.release();
      else this.start();
    });
  }

  private open(): number {
    if (this.fd === undefined) {
      this.fd = openSync(this.walFile, 'r');
      const dir = openSync(dirname(this.walFile), 'r');
      try {
        fsyncSync(dir);
      } finally {
        closeSync(dir);
      }
    }
    return this.fd;
  }

  /**
   * Stops syncing: call after SQLite has closed (its final checkpoint syncs the database file,
   * so waiting writes are durable then and are resolved).
   */
  close(): void {
    this.closed = true;
    this.next?.resolve();
    this.next = undefined;
    if (!this.running) this.release();
  }

  private release(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}
