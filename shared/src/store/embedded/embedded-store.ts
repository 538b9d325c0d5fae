import { AsyncResource } from 'node:async_hooks';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { AppError } from '../../errors/index.js';
import type { Collection, Doc, DocumentStore, IndexSpec, Session, StoreStats } from '../port.js';
import { QUERY_TIME_LIMIT_MS, TRANSACTION_DEADLINE_MS } from '../port.js';
import { EmbeddedCollection, type TxnRunner } from './collection.js';
import { CollectionState, type CommitStep } from './collection-state.js';
import { HISTORY_COLLECTIONS, HistoryCollection } from './history.js';
import { Journal, type JournalSync } from './journal.js';
import { changedTextFields, TEXT_FIELDS, TextCandidates } from './text-index.js';
import { Txn, type Change, type TxnHost } from './txn.js';
import { freezeParsed } from './values.js';

/** How often `withTransaction` runs `fn` before giving up with `CONFLICT`. */
export const MAX_TRANSACTION_ATTEMPTS = 5;

/**
 * How long (ms) a write made with `awaitDurable: false` waits in memory for a durable write to be
 * journaled with before it is journaled on its own ({@link EmbeddedStore}'s `commitLater`).
 */
export const LAZY_JOURNAL_MS = 100;

/** How often the expiry sweep of TTL indexes runs, in ms (MongoDB's TTL monitor runs every 60 s too). */
export const TTL_SWEEP_MS = 60_000;

/**
 * A recorded non-unique single-field index found near-unique at close (more keys than half the
 * documents: `created_at`, `updated_at`, `metadata.order`) in a collection of at least this many
 * documents is not filled while the next open loads, but by the first query that looks a key up
 * in it (equality or `$in`; their sort indexes and range conditions do not use it). At 1,000,000
 * tasks each such index costs about 0.5–1 s of start-up (a million-key Map). The other
 * non-unique indexes of a collection this large are filled after the load, in the background
 * (`CollectionState.fillAfterLoad`); its sort indexes are built so too.
 */
export const DEFERRED_INDEX_MIN_DOCS = 100_000;

/** Stats of the embedded store: round trips, and documents tested against a filter (index use). */
export interface EmbeddedStats extends StoreStats {
  docsExamined: number;
}

/** Options of {@link EmbeddedStore.open}. */
export interface EmbeddedStoreOptions {
  /** Folder of `store.sqlite`; created when missing. */
  dir: string;
  log?: Logger;
  /** Journal durability (default `full`: a commit is synced before it is acknowledged). */
  sync?: JournalSync;
  /**
   * Collection size from which near-unique indexes are filled on first use and sort indexes built
   * in the background (default {@link DEFERRED_INDEX_MIN_DOCS}).
   */
  deferIndexesFrom?: number;
  /**
   * How long (ms) a transaction waits for the transaction before it to end before it is refused
   * with `STORE_UNAVAILABLE` (default {@link LOCK_WAIT_MS}): a transaction started inside another's
   * `fn` (which the embedded store cannot run: transactions run one at a time), or one whose `fn`
   * never settles, then fails instead of holding every later write forever.
   */
  lockWaitMs?: number;
  /**
   * Which collections are history collections (docs/store.md "History collections"): kept in SQLite
   * tables and read through SQL, with a bounded cache in memory, instead of wholly in memory.
   * Default: {@link HISTORY_COLLECTIONS}. A store without a file keeps every collection in memory.
   */
  history?: (collection: string) => boolean;
  /** A read's time limit in ms (default `QUERY_TIME_LIMIT_MS`): a longer scan stops with `QUERY_TIMEOUT`. */
  queryTimeLimitMs?: number;
  /**
   * Tests only: called at each step of a commit that updates something derived from the documents
   * ({@link CommitStep}: hash, sort and text indexes, history collections, the journal write); a
   * throw there is a fault of that step, which the commit must survive all or nothing.
   */
  faults?: (step: CommitStep) => void;
}

const defaultHistory = (collection: string): boolean => HISTORY_COLLECTIONS.includes(collection);

class EmbeddedSession implements Session {
  readonly __session = true as const;
  active = true;

  constructor(
    readonly store: EmbeddedStore,
    readonly txn: Txn,
  ) {}
}

/** Acknowledgements waiting together for one outcome. */
interface Waiter {
  promise: Promise<void>;
  /** Settles the promise as `outcome` does (undefined: resolved now). */
  settle(outcome: Promise<void> | undefined): void;
}

function waiter(): Waiter {
  let settle!: (outcome: Promise<void> | undefined) => void;
  const promise = new Promise<void>((resolve) => {
    settle = (outcome) => resolve(outcome);
  });
  return { promise, settle };
}

/**
 * Default of {@link EmbeddedStoreOptions.lockWaitMs}: how long a transaction waits for the one
 * before it to end before it is refused: the transaction deadline of the port (shorter than every
 * write op's bus timeout; docs/concurrency.md "Deadlines").
 */
export const LOCK_WAIT_MS = TRANSACTION_DEADLINE_MS;

/** A transaction waiting for the store's transaction lock (see {@link EmbeddedStore.withTransaction}). */
interface LockWaiter {
  run(): void;
  refuse(e: AppError): void;
  since: number;
}

/**
 * The embedded `DocumentStore` (docs/architecture.md §2, docs/store.md) on `<dir>/store.sqlite`
 * (better-sqlite3, WAL; one process holds it, locked exclusively):
 * - a plain collection is held in memory as a {@link CollectionState} (documents in slots, hash,
 *   sort and, for tasks, text indexes), loaded from its journal rows at open, near-unique and sort
 *   indexes of a large collection filled after the load or on first use
 *   ({@link DEFERRED_INDEX_MIN_DOCS});
 * - a history collection (the events outbox, Idempotency-Key records, webhook deliveries;
 *   {@link HISTORY_COLLECTIONS}) stays in its own SQLite table, read through SQL with a bounded
 *   cache ({@link HistoryCollection});
 * - filters run as compiled matchers where they can and through mingo otherwise, updates through
 *   mingo, sorts in MongoDB order;
 * - a write is journaled (group commit) and acknowledged once its WAL is synced (`sync: 'full'`).
 *
 * Transactions are serialized by an in-process mutex; their writes stay in an overlay that only
 * their session sees, and are applied in one sqlite transaction at commit. A transaction whose
 * read or written documents were changed meanwhile by a non-transactional write is retried (up
 * to {@link MAX_TRANSACTION_ATTEMPTS} runs of `fn`), then fails with `CONFLICT`.
 * After {@link close}, every call rejects with `STORE_UNAVAILABLE`. See docs/store.md.
 */
export class EmbeddedStore implements DocumentStore {
  readonly stats: EmbeddedStats = { roundTrips: 0, docsExamined: 0 };
  private readonly host: TxnHost = { state: (name) => this.state(name), history: (name) => this.history(name), version: () => this.seq, stats: this.stats };
  private readonly runner: TxnRunner = {
    run: (session, fn, awaitDurable) => this.run(session, fn, awaitDurable),
    state: (name) => this.state(name),
    history: (name) => this.history(name),
    stats: this.stats,
    readLimitMs: () => this.queryTimeLimitMs,
  };
  /** History collections by name (`null`: an in-memory collection), decided on first use. */
  private readonly histories = new Map<string, HistoryCollection | null>();
  /** The store version when the running transaction attempt started (Infinity: none runs). */
  private txnStart = Infinity;
  private readonly states = new Map<string, CollectionState>();
  private seq = 0;
  /** The largest sqlite rowid loaded or given to a new document (file-backed; see {@link commit}). */
  private lastRowid = 0;
  private closed = false;
  /** TTL indexes ensured: collection → field and seconds (swept by {@link sweepExpired}). */
  private readonly ttl = new Map<string, { field: string; seconds: number }>();
  private sweeper: ReturnType<typeof setInterval> | undefined;
  /** True while a transaction holds the lock; the ones waiting for it, in arrival order. */
  private locked = false;
  private readonly lockWaiters: LockWaiter[] = [];
  private lockWatch: ReturnType<typeof setInterval> | undefined;
  /** Writes applied in memory and not journaled yet, in commit order (see {@link commit} and {@link commitLater}). */
  private deferred: Change[] = [];
  /** The undos of {@link deferred}'s writes, in the same order (a failed journal write takes them back). */
  private deferredUndos: Array<() => void> = [];
  /** The acknowledgements of the deferred commits: settled once they are journaled (and, `full`, synced). */
  private deferredAcks: Waiter | undefined;
  private deferredTimer: ReturnType<typeof setImmediate> | undefined;
  /** Set while non-durable writes wait for a durable one to be journaled with ({@link commitLater}). */
  private lazyTimer: ReturnType<typeof setTimeout> | undefined;

  private constructor(
    private readonly journal: Journal | undefined,
    private readonly log: Logger | undefined,
    private readonly deferIndexesFrom = DEFERRED_INDEX_MIN_DOCS,
    private readonly lockWaitMs = LOCK_WAIT_MS,
    private readonly isHistory: (collection: string) => boolean = defaultHistory,
    private readonly queryTimeLimitMs = QUERY_TIME_LIMIT_MS,
    private readonly faults?: (step: CommitStep) => void,
  ) {
    // `full`: the grouped commits are journaled right before the WAL fsync that acknowledges them
    if (journal) journal.beforeSync = (synced) => this.writeDeferred(synced);
  }

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
    const journal = new Journal(join(opts.dir, 'store.sqlite'), opts.sync);
    const store = new EmbeddedStore(journal, opts.log, opts.deferIndexesFrom ?? DEFERRED_INDEX_MIN_DOCS, opts.lockWaitMs ?? LOCK_WAIT_MS, opts.history ?? defaultHistory, opts.queryTimeLimitMs, opts.faults);
    const started = Date.now();
    let count = 0;
    // the indexes declared before (ensureIndexes) are there before the services declare them again:
    // unique and compound ones filled in the load pass (addIndex fills them now: writes check
    // them), the others after it — at once in a small collection, in the background in a large one
    // (DEFERRED_INDEX_MIN_DOCS: the store answers meanwhile) — and near-unique ones as found at the
    // last close on first use only
    // (history collections are not read: their tables are read by the queries that need them)
    const unloaded = new Set<string>();
    /** History collections with documents in `docs` (a folder written before they were history collections). */
    const toMove = new Set<string>();
    for (const ix of journal.indexes()) {
      if (store.isHistory(ix.collection)) unloaded.add(ix.collection);
      else store.state(ix.collection).addIndex(ix.fields, ix.unique, ix.deferred ? 'first-use' : 'after-load');
    }
    let lastColl: string | undefined;
    let state: CollectionState | undefined;
    for (const [rowid, coll, body] of journal.rows()) {
      if (coll !== lastColl) {
        lastColl = coll;
        state = store.isHistory(coll) ? undefined : store.state(coll);
        if (!state) toMove.add(coll);
      }
      if (!state) continue; // a history collection's document in an older layout: moved to its table below
      const doc = JSON.parse(body) as Doc;
      freezeParsed(doc);
      // (a row's id is its document's _id: every write journals doc._id as the id)
      state!.load(doc._id as string, doc, ++store.seq, rowid);
      store.lastRowid = rowid; // rows come in rowid order: the last is the largest
      count++;
    }
    for (const name of toMove) journal.historyTable(name, true); // moves the older layout's rows into the table, once
    for (const name of unloaded) store.history(name); // opens its table and declares its recorded indexes
    for (const [name, loaded] of store.states) {
      loaded.fillAfterLoad(() => opts.log?.info({ collection: name, ms: Date.now() - started }, 'embedded store: indexes filled'));
    }
    opts.log?.info({ file: journal.file, documents: count, ms: Date.now() - started }, 'embedded store loaded');
    return store;
  }

  /** The same store without a file (tests): nothing survives {@link close}. */
  static memory(opts: { log?: Logger; lockWaitMs?: number; queryTimeLimitMs?: number; faults?: (step: CommitStep) => void } = {}): EmbeddedStore {
    return new EmbeddedStore(undefined, opts.log, DEFERRED_INDEX_MIN_DOCS, opts.lockWaitMs ?? LOCK_WAIT_MS, defaultHistory, opts.queryTimeLimitMs, opts.faults);
  }

  collection<T extends Doc = Doc>(name: string): Collection<T> {
    return new EmbeddedCollection<T>(name, this.runner);
  }

  /**
   * The history collection `name` (file-backed stores; docs/store.md "History collections"):
   * its table opened (and its documents moved there from an older layout) and its recorded
   * indexes declared on first use. `undefined` for a collection kept in memory.
   */
  private history(name: string): HistoryCollection | undefined {
    const known = this.histories.get(name);
    if (known !== undefined) return known ?? undefined;
    if (!this.journal || !this.isHistory(name)) {
      this.histories.set(name, null);
      return undefined;
    }
    const journal = this.journal;
    const table = journal.historyTable(name);
    const history = new HistoryCollection(table, () => this.txnStart, (field, plain) => journal.recordField(name, field, plain), journal.historyFields(name));
    for (const ix of journal.indexes()) if (ix.collection === name) history.declare(ix.fields, ix.unique);
    this.histories.set(name, history);
    return history;
  }

  /** The state of one collection, created on first use. */
  private state(name: string): CollectionState {
    let s = this.states.get(name);
    if (!s) {
      const fields = TEXT_FIELDS[name];
      const text = this.journal && fields ? new TextCandidates(fields, (field, literals) => this.journal!.text.search(name, field, literals)) : undefined;
      if (text) this.texts.set(name, text);
      this.states.set(name, (s = new CollectionState(name, text, this.deferIndexesFrom, this.faults)));
    }
    return s;
  }

  /** The text index's match sets of the text collections (file-backed stores), by collection. */
  private readonly texts = new Map<string, TextCandidates>();

  /**
   * One collection call: in the session's overlay, or applied at once (partial on error) and
   * answered once durable (unless `awaitDurable` is false: port `WriteOptions`).
   */
  private run<R>(session: Session | undefined, fn: (txn: Txn) => R | Promise<R>, awaitDurable = true): Promise<R> {
    // Synchronous work settled as a promise (no async function: one promise per call, not three).
    try {
      this.assertOpen();
      this.stats.roundTrips++;
      if (session) return Promise.resolve(fn(this.txnOf(session)));
      const txn = new Txn(this.host, false);
      let result: R | Promise<R>;
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
    // the next transaction may start while this one's commit is being synced (group commit)
    const [result, durable] = await this.serialized(() => this.attempt(fn, 1));
    if (durable) await durable;
    return result;
  }

  /** Runs `fn` until it commits (or gives up); the result and, in `full` durability, the commit's sync. */
  private async attempt<R>(fn: (session: Session) => Promise<R>, attempt: number): Promise<[R, Promise<void> | undefined]> {
    this.txnStart = this.seq;
    const session = new EmbeddedSession(this, new Txn(this.host, true));
    let result: R;
    try {
      result = await fn(session);
    } finally {
      session.active = false;
      this.txnStart = Infinity;
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
   * `_id` are accepted and need nothing here. A file-backed store records each index it builds in
   * its journal, and the next {@link open} fills the recorded indexes while loading the documents
   * (one pass), so an index declared again at start-up is already there (docs/store.md "Indexes
   * and plans"). Throws `STORE_UNAVAILABLE` when the record cannot be written. A TTL index (`expireAfterSeconds`)
   * also starts the expiry sweep: every {@link TTL_SWEEP_MS} (timer unref'd) {@link sweepExpired};
   * it builds no hash index (the sweep's `$lt` is a range, which a hash index cannot answer, and
   * its field's values are near-unique: one map entry per document, kept current on every write).
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
      const history = this.history(spec.collection);
      if (history) {
        // an SQL index of the fields (a TTL field's too: the sweep reads a range of it)
        const keys = fields.filter((f) => f !== '_id');
        if (keys.length === 0) continue;
        history.declare(keys, spec.unique ?? false, spec.sparse ?? false);
        // a sparse unique index is not recorded: the journal's record has no sparseness, and the
        // start-up's ensureIndexes declares it again
        if (!(spec.unique && spec.sparse)) this.journal?.saveIndex({ collection: spec.collection, fields: keys, unique: spec.unique ?? false });
        continue;
      }
      if (spec.expireAfterSeconds !== undefined && !spec.unique) continue;
      const state = this.state(spec.collection);
      const wanted: [string[], boolean][] = spec.unique ? [[fields, true]] : [];
      for (const field of spec.unique ? fields.slice(0, 1) : fields) if (field !== '_id') wanted.push([[field], false]);
      for (const [keys, unique] of wanted) {
        const sparse = unique && (spec.sparse ?? false);
        if (state.addIndex(keys, unique, 'now', sparse) && !sparse) this.journal?.saveIndex({ collection: spec.collection, fields: keys, unique });
      }
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

  /**
   * Journaled documents whose full-text rows are still to be written (docs/store.md "Text search
   * (embedded)"): they are written at most `TEXT_FLUSH_MS` after their write, and searches find
   * them meanwhile. 0 once every flush has run, and always for a store without a file.
   */
  textRowsPending(): number {
    return this.journal?.text.pendingCount ?? 0;
  }

  /**
   * Writes a consistent copy of the store's file to `destination` while it keeps serving
   * (docs/store.md "Backup and restore"): the commits grouped for the journal are written first,
   * so every write acknowledged before the call is in the copy. A store without a file rejects
   * with `STORE_UNAVAILABLE`.
   */
  async backup(destination: string): Promise<void> {
    this.assertOpen();
    if (!this.journal) throw new AppError('STORE_UNAVAILABLE', { message: 'An in-memory store has no file to back up' });
    this.writeDeferred(undefined);
    await this.journal.backup(destination);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    clearImmediate(this.deferredTimer);
    clearTimeout(this.lazyTimer);
    this.writeDeferred(undefined);
    this.closed = true;
    clearInterval(this.sweeper);
    clearInterval(this.lockWatch); // transactions still waiting fail as they start (the store is closed)
    this.lockWatch = undefined;
    if (this.journal) {
      const marks = [...this.states].flatMap(([collection, state]) => [...state.nearUnique(this.deferIndexesFrom)].map(([field, deferred]) => ({ collection, field, deferred })));
      this.journal.deferIndexes(marks);
      this.journal.close();
    }
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  /**
   * Applies a unit of work: unique keys re-checked, then memory, and the journal (docs/store.md
   * "Group commit"). Returns what to wait for before acknowledging it: its journal write and, in
   * `full` durability, the sync of the WAL holding it (undefined: nothing to wait for).
   *
   * Every unit is grouped: applied in memory at once (a new document gets the next sqlite rowid
   * here, its row's address and its text-index key) and journaled with the other commits waiting
   * for the same WAL fsync (`full`; the next turn of the event loop in `normal`), all in one
   * sqlite transaction written right before that fsync starts, in commit order; so N concurrent
   * writes cost one sqlite commit, and the pages they share (the events counter, the last leaf of
   * the table) are written to the WAL once. A grouped text change (a new document, or new text) is
   * a candidate of every new text search until it is journaled (then it is pending in the journal's
   * text index; a deleted document's rowid leaves the rowid → slot map at once).
   */
  private commit(txn: Txn, lazy = false): Promise<void> | undefined {
    const own = txn.changes();
    if (own.length === 0) return undefined;
    for (const c of own) if (c.doc) txn.assertUnique(c.collection, c.doc, true);
    // (an indexed field of a history collection turned off for SQL is recorded before anything is applied)
    if (this.journal) for (const c of own) if (c.doc) this.history(c.collection)?.admit(c.doc);
    const undos = this.applyAll(own);
    if (!this.journal) return undefined;
    for (const c of own) if (c.textSlot !== undefined) this.texts.get(c.collection)?.textChangeGrouped(c.textSlot);
    this.deferred.push(...own);
    this.deferredUndos.push(...undos);
    const acks = (this.deferredAcks ??= waiter());
    if (lazy) this.lazyTimer ??= setTimeout(() => this.journalLazy(), LAZY_JOURNAL_MS).unref();
    else this.scheduleDeferred();
    return acks.promise;
  }

  /**
   * Applies a unit's changes in memory, all or nothing (docs/store.md "All or nothing"): the
   * documents first, each change's undo taken before it is made; when anything throws on the way
   * (a hash, sort or text index, a history collection), every change made is undone, newest
   * first, the derived structures of the collections touched are dropped and rebuilt from the
   * documents (never trusted), and `STORE_UNAVAILABLE` (503) is thrown: nothing was written.
   * Returns the undos (for a journal write that fails, {@link writeDeferred}).
   */
  private applyAll(own: Change[]): Array<() => void> {
    const undos: Array<() => void> = [];
    const touched = new Set<CollectionState>();
    const lastRowid = this.lastRowid;
    try {
      for (const c of own) {
        const history = this.history(c.collection);
        if (history) {
          const u = history.undoOf(c.id);
          undos.push(() => history.undo(u));
          this.faults?.('history');
          history.apply(c.id, c.doc, ++this.seq, c);
          continue;
        }
        const state = this.state(c.collection);
        const before = state.entries.get(c.id);
        if (this.journal) {
          if (before) c.rowid = before.rowid;
          else if (c.doc) {
            c.rowid = ++this.lastRowid;
            c.inserted = true;
          }
          const fields = TEXT_FIELDS[c.collection];
          if (fields && c.doc) c.textChanged = changedTextFields(fields, before?.doc, c.doc);
        }
        const u = state.undoOf(c.id);
        undos.push(() => state.undo(u));
        touched.add(state);
        state.apply(c.id, c.doc, ++this.seq, c.rowid);
        if (this.journal && c.doc && c.textChanged !== undefined && c.textChanged !== 0 && TEXT_FIELDS[c.collection]) c.textSlot = state.entries.get(c.id)!.slot;
      }
    } catch (err) {
      this.lastRowid = lastRowid;
      this.rollBack(undos, touched);
      this.log?.error({ err }, 'embedded store: a commit failed while applied in memory; undone');
      throw new AppError('STORE_UNAVAILABLE', { message: 'The write could not be applied; nothing was written', cause: err });
    }
    return undos;
  }

  /** Undoes `undos` newest first, then rebuilds the derived structures of `states` ({@link CollectionState.resetDerived}). */
  private rollBack(undos: ReadonlyArray<() => void>, states: Iterable<CollectionState>): void {
    for (let i = undos.length - 1; i >= 0; i--) undos[i]!();
    for (const state of states) state.resetDerived();
  }

  /** The non-durable writes' timer ran out before a durable write came: journal them now. */
  private journalLazy(): void {
    this.lazyTimer = undefined;
    if (this.deferred.length > 0 && !this.closed) this.scheduleDeferred();
  }

  /**
   * A write call with `awaitDurable: false` (port `WriteOptions`): applied in memory at once and
   * journaled with the next durable write's group (or after {@link LAZY_JOURNAL_MS} when none
   * comes); nothing is waited for. It does not start a journal write and WAL sync of its own: an
   * Idempotency-Key claim then goes to disk with its request's transaction, which rewrites the same
   * record, so the group writes that row once (journal.ts `lastPerRow`) and one sync covers both.
   */
  private commitLater(txn: Txn): undefined {
    // a failed write or sync is the next durable write's failure too, which is answered
    void this.commit(txn, true)?.catch(() => undefined);
    return undefined;
  }

  /**
   * Makes sure the grouped commits get journaled: `full`, by asking for a WAL sync (its
   * `beforeSync` writes them); `normal`, on the next turn of the event loop.
   */
  private scheduleDeferred(): void {
    if (this.journal?.syncs) {
      void this.journal.flush()?.catch(() => undefined); // the acknowledgements carry the outcome
      return;
    }
    this.deferredTimer ??= setImmediate(() => {
      this.deferredTimer = undefined;
      this.writeDeferred(undefined);
    });
  }

  /**
   * Journals the grouped commits in one sqlite transaction and settles their acknowledgements with
   * `synced` (the WAL fsync about to start, `full`) or at once. A failed write (its sqlite
   * transaction rolled back) takes the group's commits back in memory too ({@link rollBack}) and
   * rejects them with `STORE_UNAVAILABLE`: nothing of them is visible or written later.
   */
  private writeDeferred(synced: Promise<void> | undefined): void {
    if (this.deferred.length === 0 || !this.journal || this.closed) return;
    const acks = this.deferredAcks;
    this.deferredAcks = undefined;
    const changes = this.deferred;
    const undos = this.deferredUndos;
    this.deferred = [];
    this.deferredUndos = [];
    try {
      this.faults?.('journal');
      this.journal.write(changes);
    } catch (err) {
      // nothing of the group is on disk: its commits are taken back in memory too, so no later
      // write can persist what these writers were told failed (docs/store.md "All or nothing")
      this.log?.warn({ err }, 'embedded store: grouped commits not journaled; undone');
      this.rollBack(undos, this.states.values());
      this.journaled(changes);
      acks?.settle(Promise.reject(AppError.is(err) ? err : new AppError('STORE_UNAVAILABLE', { message: 'The embedded store could not write to disk; nothing was written', cause: err })));
      return;
    }
    this.journaled(changes);
    acks?.settle(synced ?? this.journal.flush());
  }

  /** The grouped `changes` are journaled: their text changes are pending in the journal now (text-index.ts). */
  private journaled(changes: readonly Change[]): void {
    for (const c of changes) {
      if (c.textSlot !== undefined) this.texts.get(c.collection)?.journaled(c.textSlot);
      else this.histories.get(c.collection)?.journaled(c);
    }
  }

  private txnOf(session: Session): Txn {
    if (session instanceof EmbeddedSession && session.store === this && session.active) return session.txn;
    throw new AppError('INTERNAL', { message: 'The session is not an active transaction of this store' });
  }

  /**
   * Runs `fn` when no other transaction runs (the store's transaction lock, in arrival order). A
   * transaction that waits longer than {@link lockWaitMs} is refused with `STORE_UNAVAILABLE`: a
   * transaction started inside another's `fn` would otherwise wait for it forever, and so would
   * every write after it. (No async context marks a nested call: an AsyncLocalStorage would tax
   * every promise of the process while enabled, ≈ 2 KB of allocations per write, measured.)
   */
  private serialized<R>(fn: () => Promise<R>): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      const run = () => {
        fn().then(resolve, reject).finally(() => this.unlock());
      };
      if (!this.locked) {
        this.locked = true;
        run();
        return;
      }
      // bound to the waiter's async context: the lock is handed over from the ending transaction's
      // continuation, whose context (its trace span, a suppressed one) would otherwise be this one's
      this.lockWaiters.push({ run: AsyncResource.bind(run), refuse: reject, since: Date.now() });
      this.lockWatch ??= setInterval(() => this.refuseStaleWaiters(), Math.max(10, Math.min(1_000, this.lockWaitMs / 4)));
      this.lockWatch.unref?.();
    });
  }

  /** Hands the transaction lock to the next waiter, or frees it. */
  private unlock(): void {
    const next = this.lockWaiters.shift();
    if (next) next.run();
    else {
      this.locked = false;
      clearInterval(this.lockWatch);
      this.lockWatch = undefined;
    }
  }

  /** Refuses the transactions that have waited for the lock longer than {@link lockWaitMs}. */
  private refuseStaleWaiters(): void {
    const now = Date.now();
    while (this.lockWaiters.length > 0 && now - this.lockWaiters[0]!.since >= this.lockWaitMs) {
      const stale = this.lockWaiters.shift()!;
      stale.refuse(
        new AppError('STORE_UNAVAILABLE', {
          message: 'A transaction waited too long for the one before it (a transaction started inside another, or one that never ended)',
          details: { waitedMs: now - stale.since },
        }),
      );
    }
  }

  private assertOpen(): void {
    if (this.closed) throw new AppError('STORE_UNAVAILABLE', { message: 'The embedded store is closed' });
  }
}
