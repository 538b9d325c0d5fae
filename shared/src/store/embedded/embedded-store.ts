import { AsyncLocalStorage } from 'node:async_hooks';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { AppError } from '../../errors/index.js';
import type { Collection, Doc, DocumentStore, IndexSpec, Session, StoreStats } from '../port.js';
import { EmbeddedCollection, type TxnRunner } from './collection.js';
import { CollectionState } from './collection-state.js';
import { Journal, type JournalSync } from './journal.js';
import { TEXT_FIELDS, TextCandidates } from './text-index.js';
import { Txn, type Change, type TxnHost } from './txn.js';
import { deepFreeze } from '../../util/index.js';

/** How often `withTransaction` runs `fn` before giving up with `CONFLICT`. */
export const MAX_TRANSACTION_ATTEMPTS = 5;

/** How often the expiry sweep of TTL indexes runs, in ms (MongoDB's TTL monitor runs every 60 s too). */
export const TTL_SWEEP_MS = 60_000;

/** Stats of the embedded store: round trips, and documents tested against a filter (index use). */
export interface EmbeddedStats extends StoreStats {
  docsExamined: number;
}

/** Options of {@link EmbeddedStore.open}. */
export interface EmbeddedStoreOptions {
  /** Folder of `store.sqlite`; created when missing. */
  dir: string;
  log?: Logger;
  /** Journal durability (issue 14; default `full`: a commit is synced before it is acknowledged). */
  sync?: JournalSync;
}

class EmbeddedSession implements Session {
  readonly __session = true as const;
  active = true;

  constructor(
    readonly store: EmbeddedStore,
    readonly txn: Txn,
  ) {}
}

/**
 * Set while a transaction's `fn` runs, to refuse nested transactions instead of deadlocking;
 * disabled again after each (see {@link EmbeddedStore.withTransaction}).
 */
const transactionScope = new AsyncLocalStorage<EmbeddedStore>();

/**
 * The embedded `DocumentStore` (DESIGN §2): documents in memory (one Map per collection),
 * filters and updates by mingo, MongoDB sort order, in-memory hash indexes as equality
 * prefilters, and durability through a better-sqlite3 table (`<dir>/store.sqlite`) loaded at open.
 *
 * Transactions are serialized by an in-process mutex; their writes stay in an overlay that only
 * their session sees, and are applied in one sqlite transaction at commit. A transaction whose
 * read or written documents were changed meanwhile by a non-transactional write is retried (up
 * to {@link MAX_TRANSACTION_ATTEMPTS} runs of `fn`), then fails with `CONFLICT`.
 * After {@link close}, every call rejects with `STORE_UNAVAILABLE`. See docs/store.md.
 */
export class EmbeddedStore implements DocumentStore {
  readonly stats: EmbeddedStats = { roundTrips: 0, docsExamined: 0 };
  private readonly host: TxnHost = { state: (name) => this.state(name), stats: this.stats };
  private readonly runner: TxnRunner = {
    run: (session, fn, awaitDurable) => this.run(session, fn, awaitDurable),
    state: (name) => this.state(name),
    stats: this.stats,
  };
  private readonly states = new Map<string, CollectionState>();
  private seq = 0;
  private closed = false;
  /** TTL indexes ensured: collection → field and seconds (swept by {@link sweepExpired}). */
  private readonly ttl = new Map<string, { field: string; seconds: number }>();
  private sweeper: ReturnType<typeof setInterval> | undefined;
  private queue: Promise<unknown> = Promise.resolve();
  /** Writes applied in memory and not journaled yet (see {@link commitLater}). */
  private deferred: Change[] = [];
  private deferredTimer: ReturnType<typeof setImmediate> | undefined;

  private constructor(
    private readonly journal: Journal | undefined,
    private readonly log: Logger | undefined,
  ) {}

  /**
   * Opens (or creates) the durable store in `<dir>/store.sqlite` and loads every document.
   * Rejects with `StoreInUseError` when another process has the file open, and with
   * `STORE_UNAVAILABLE` when the folder or file cannot be opened otherwise.
   */
  static async open(opts: EmbeddedStoreOptions): Promise<EmbeddedStore> {
    try {
      mkdirSync(opts.dir, { recursive: true });
    } catch (e) {
      throw new AppError('STORE_UNAVAILABLE', { message: `Cannot create the data folder ${opts.dir}`, cause: e });
    }
    const store = new EmbeddedStore(new Journal(join(opts.dir, 'store.sqlite'), opts.sync), opts.log);
    const started = Date.now();
    let count = 0;
    for (const row of store.journal!.rows()) {
      store.state(row.coll).apply(row.id, deepFreeze(JSON.parse(row.body) as Doc), ++store.seq, row.rowid);
      count++;
    }
    opts.log?.info({ file: store.journal!.file, documents: count, ms: Date.now() - started }, 'embedded store loaded');
    return store;
  }

  /** The same store without a file (tests): nothing survives {@link close}. */
  static memory(opts: { log?: Logger } = {}): EmbeddedStore {
    return new EmbeddedStore(undefined, opts.log);
  }

  collection<T extends Doc = Doc>(name: string): Collection<T> {
    return new EmbeddedCollection<T>(name, this.runner);
  }

  /** The state of one collection, created on first use. */
  private state(name: string): CollectionState {
    let s = this.states.get(name);
    if (!s) {
      const fields = TEXT_FIELDS[name];
      const text = this.journal && fields ? new TextCandidates(fields, (field, literals) => this.journal!.text.search(name, field, literals)) : undefined;
      this.states.set(name, (s = new CollectionState(name, text)));
    }
    return s;
  }

  /**
   * One collection call: in the session's overlay, or applied at once (partial on error) and
   * answered once durable (unless `awaitDurable` is false: port `WriteOptions`).
   */
  private run<R>(session: Session | undefined, fn: (txn: Txn) => R, awaitDurable = true): Promise<R> {
    // Synchronous work settled as a promise (no async function: one promise per call, not three).
    try {
      this.assertOpen();
      this.stats.roundTrips++;
      if (session) return Promise.resolve(fn(this.txnOf(session)));
      const txn = new Txn(this.host, false);
      let result: R;
      let failed: { error: unknown } | undefined;
      try {
        result = fn(txn);
      } catch (error) {
        failed = { error };
      }
      // what was written stays written, also when fn failed half-way; the caller hears back once it is durable
      const durable = awaitDurable ? this.commit(txn) : this.commitLater(txn);
      const settle = () => (failed ? Promise.reject(failed.error) : Promise.resolve(result));
      return durable ? durable.then(settle) : settle();
    } catch (e) {
      return Promise.reject(e);
    }
  }

  async withTransaction<R>(fn: (session: Session) => Promise<R>): Promise<R> {
    this.assertOpen();
    if (transactionScope.getStore() === this) {
      throw new AppError('INTERNAL', { message: 'withTransaction cannot be nested on the embedded store' });
    }
    // the next transaction may start while this one's commit is being synced (group commit)
    const [result, durable] = await this.serialized(async () => {
      try {
        return await transactionScope.run(this, () => this.attempt(fn, 1));
      } finally {
        // Off between transactions: an enabled AsyncLocalStorage installs promise hooks that tax
        // every promise of the process (≈ 7 % of the CPU of a detail read, measured). The mutex runs one `fn` at a time.
        transactionScope.disable();
      }
    });
    if (durable) await durable;
    return result;
  }

  /** Runs `fn` until it commits (or gives up); the result and, in `full` durability, the commit's sync. */
  private async attempt<R>(fn: (session: Session) => Promise<R>, attempt: number): Promise<[R, Promise<void> | undefined]> {
    const session = new EmbeddedSession(this, new Txn(this.host, true));
    let result: R;
    try {
      result = await fn(session);
    } finally {
      session.active = false;
    }
    this.assertOpen();
    this.stats.roundTrips++;
    if (session.txn.isCurrent()) return [result, this.commit(session.txn)];
    if (attempt >= MAX_TRANSACTION_ATTEMPTS) {
      throw new AppError('CONFLICT', { message: 'The transaction kept conflicting with concurrent writes', details: { attempts: attempt } });
    }
    this.log?.debug({ attempt }, 'embedded store: transaction conflict, retrying');
    return this.attempt(fn, attempt + 1);
  }

  /**
   * Builds the in-memory hash indexes: every field of a non-unique key as its own single-field
   * index (plans intersect them, which answers what a compound key would), and unique keys as
   * constraints (`CONFLICT` when existing documents break one). Wildcard keys (`metadata.$**`) and
   * `_id` are accepted and need nothing here. Indexes are not persisted: the services declare them
   * at every start-up (docs/store.md "Indexes and plans"). A TTL index (`expireAfterSeconds`)
   * also starts the expiry sweep: every {@link TTL_SWEEP_MS} (timer unref'd) {@link sweepExpired}.
   */
  async ensureIndexes(specs: IndexSpec[]): Promise<void> {
    this.assertOpen();
    for (const spec of specs) {
      const fields = Object.keys(spec.keys);
      if (spec.expireAfterSeconds !== undefined && fields[0] !== undefined) {
        this.ttl.set(spec.collection, { field: fields[0], seconds: spec.expireAfterSeconds });
        if (!this.sweeper) {
          this.sweeper = setInterval(() => void this.sweepExpired().catch((err: unknown) => this.log?.warn({ err }, 'embedded store: expiry sweep failed')), TTL_SWEEP_MS);
          this.sweeper.unref();
        }
      }
      if (fields.length === 0 || fields.some((f) => f.endsWith('$**'))) continue;
      const state = this.state(spec.collection);
      if (spec.unique) state.addIndex(fields, true);
      for (const field of spec.unique ? fields.slice(0, 1) : fields) if (field !== '_id') state.addIndex([field], false);
    }
  }

  /**
   * The expiry sweep of TTL indexes (as MongoDB's TTL monitor): deletes the documents whose TTL
   * field (an ISO 8601 UTC string) plus the index's seconds is before `now`. Returns how many.
   */
  async sweepExpired(now: Date = new Date()): Promise<number> {
    let removed = 0;
    for (const [collection, { field, seconds }] of this.ttl) {
      const before = new Date(now.getTime() - seconds * 1000).toISOString();
      removed += (await this.collection(collection).deleteMany({ [field]: { $lt: before } })).deletedCount;
    }
    return removed;
  }

  async ping(): Promise<void> {
    this.assertOpen();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    clearImmediate(this.deferredTimer);
    this.writeDeferred();
    this.closed = true;
    clearInterval(this.sweeper);
    this.journal?.close();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /**
   * Applies a unit of work: unique keys re-checked, then sqlite (one transaction), then memory.
   * Returns the journal's sync to wait for before acknowledging (`full` durability), if any.
   */
  private commit(txn: Txn): Promise<void> | undefined {
    const own = txn.changes();
    if (own.length === 0) return undefined;
    for (const c of own) if (c.doc) txn.assertUnique(c.collection, c.doc, true);
    // the writes applied without waiting (commitLater) go first, in this one sqlite transaction
    const changes = this.deferred.length > 0 ? [...this.deferred, ...own] : own;
    if (this.journal) {
      for (const c of changes) {
        const fields = c.doc ? TEXT_FIELDS[c.collection] : undefined;
        const before = fields ? this.state(c.collection).entries.get(c.id)?.doc : undefined;
        if (before) c.textSame = fields!.every((f) => before[f] === c.doc![f]);
      }
      this.journal.write(changes);
      this.deferred = [];
    }
    for (const c of own) this.state(c.collection).apply(c.id, c.doc, ++this.seq, c.rowid);
    return this.journal?.flush();
  }

  /**
   * A write call with `awaitDurable: false` (port `WriteOptions`): applied in memory at once, and
   * journaled with the next commit's sqlite transaction (or on the next turn of the event loop),
   * which saves one sqlite commit; nothing is waited for. A text collection's write needs its
   * sqlite rowid when applied, so it is committed at once (its sync still not waited for).
   */
  private commitLater(txn: Txn): undefined {
    const changes = txn.changes();
    if (changes.length === 0) return undefined;
    if (!this.journal || changes.some((c) => TEXT_FIELDS[c.collection])) {
      // a failed sync also fails the next durable write's sync, which is answered
      void this.commit(txn)?.catch(() => undefined);
      return undefined;
    }
    for (const c of changes) if (c.doc) txn.assertUnique(c.collection, c.doc, true);
    for (const c of changes) this.state(c.collection).apply(c.id, c.doc, ++this.seq, undefined);
    this.deferred.push(...changes);
    if (!this.deferredTimer) {
      this.deferredTimer = setImmediate(() => {
        this.deferredTimer = undefined;
        this.writeDeferred();
      });
    }
    return undefined;
  }

  /** Journals the deferred writes now; a failure leaves them for the next commit (they are in memory). */
  private writeDeferred(): void {
    if (this.deferred.length === 0 || !this.journal || this.closed) return;
    try {
      this.journal.write(this.deferred);
      this.deferred = [];
      void this.journal.flush()?.catch(() => undefined);
    } catch (err) {
      this.log?.warn({ err }, 'embedded store: deferred writes not journaled yet');
    }
  }

  private txnOf(session: Session): Txn {
    if (session instanceof EmbeddedSession && session.store === this && session.active) return session.txn;
    throw new AppError('INTERNAL', { message: 'The session is not an active transaction of this store' });
  }

  private serialized<R>(fn: () => Promise<R>): Promise<R> {
    const result = this.queue.then(fn);
    this.queue = result.catch(() => undefined);
    return result;
  }

  private assertOpen(): void {
    if (this.closed) throw new AppError('STORE_UNAVAILABLE', { message: 'The embedded store is closed' });
  }
}
