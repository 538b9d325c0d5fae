import { setImmediate as nextTurn } from 'node:timers/promises';
import { MongoServerError } from 'mongodb';
import type {
  BulkOp, Collection, Doc, DocumentStore, Filter, IndexSpec, Session, SessionOption, Sort, StoreStats, Update,
} from '../store/port.js';
import { AppError } from '../errors/index.js';
import { isTransientTransactionError } from '../store/mongo/errors.js';
import { checkDocument, checkUpdate } from '../store/rules.js';
import type { StoreOp } from './faulty-store.js';

/** One document a transaction wrote: its collection and `_id`. */
export interface TransactionWrite {
  collection: string;
  id: string;
}

/** One committed transaction as {@link TransactionRulesStore} saw it. */
export interface CommittedTransaction {
  /**
   * The documents its committed attempt wrote, each once, in the order first written: inserted,
   * matched by an update or delete (matched, not only modified: MongoDB takes a write lock on a
   * matched document even when the update changes nothing), or upserted.
   */
  writes: TransactionWrite[];
}

/** Options of {@link TransactionRulesStore}. */
export interface TransactionRulesOptions {
  /**
   * Fail each transaction's first attempt with a transient error, as MongoDB does on a write
   * conflict (default true). Leave it on over the embedded store; over MongoDB, which produces
   * real conflicts itself, the test-store factory turns it off (it works there too: the driver
   * retries the labelled error).
   */
  failFirstAttempt?: boolean;
  /** Runs once after the inner store is closed (the test-store factory drops its MongoDB database here). */
  onClose?: () => Promise<void>;
}

/** How often {@link TransactionRulesStore.withTransaction} calls the inner store's `withTransaction` on transient errors that reach it. */
const MAX_ATTEMPTS = 3;

/** Position of the options argument (which may carry `session`) of each collection method. */
const OPTIONS_ARG = {
  find: 1, findOne: 1, countDocuments: 1, insertOne: 1, insertMany: 1, updateOne: 2, updateMany: 2,
  findOneAndUpdate: 2, deleteOne: 1, deleteMany: 1, bulkWrite: 1,
} as const satisfies Record<StoreOp, number>;

const WRITES = new Set<StoreOp>(['insertOne', 'insertMany', 'updateOne', 'updateMany', 'findOneAndUpdate', 'deleteOne', 'deleteMany', 'bulkWrite']);

/**
 * Thrown (and recorded in {@link TransactionRulesStore.violations}) when code breaks a rule of
 * MongoDB transactions: a second operation started while one is in flight in the same
 * transaction, or an operation on a transaction that has ended. Not an `AppError`: it surfaces
 * as a 500, and the store's `close()` rethrows it, so the test that caused it fails.
 */
export class TransactionRuleError extends Error {
  override readonly name = 'TransactionRuleError';
}

/** Records a broken rule in `violations` and throws it (the store's `close` throws the first again). */
export function recordViolation(violations: TransactionRuleError[], message: string): never {
  const e = new TransactionRuleError(message);
  violations.push(e);
  throw e;
}

/**
 * A rule-checking store's close: closes `inner`, runs `onClose` (the suite's cleanup, once), then
 * rejects with the first rule broken through the store, if any, so a test that broke one fails.
 */
export async function closeReportingViolations(inner: DocumentStore, onClose: (() => Promise<void>) | undefined, violations: readonly TransactionRuleError[]): Promise<void> {
  await inner.close();
  await onClose?.();
  const [first] = violations;
  if (first) throw first;
}

/**
 * The error MongoDB answers on a write conflict inside a transaction (code 112 `WriteConflict`,
 * label `TransientTransactionError`), or, once the transaction is aborted, on every later command
 * of it (code 251 `NoSuchTransaction`, same label). The driver's `withTransaction` retries the
 * whole callback on that label; the `MongoStore` passes such errors through unmapped.
 */
function transientError(kind: 'conflict' | 'aborted', where: string): MongoServerError {
  const [code, codeName, what] = kind === 'conflict'
    ? [112, 'WriteConflict', `Simulated write conflict on the first attempt of the transaction (${where})`]
    : [251, 'NoSuchTransaction', `Transaction was aborted by an earlier simulated write conflict (${where})`];
  return new MongoServerError({ message: what, errmsg: what, code, codeName, errorLabels: ['TransientTransactionError'] });
}

/** The `_id` a filter pins by equality, if any (an upsert with such a filter inserts that `_id`). */
function pinnedId(filter: Filter): string | undefined {
  const id = filter._id;
  if (typeof id === 'string') return id;
  if (typeof id === 'object' && id !== null && typeof (id as { $eq?: unknown }).$eq === 'string') return (id as { $eq: string }).$eq;
  return undefined;
}

/** One run of a transaction callback: what is in flight, what it wrote, whether it is aborted. */
class Attempt {
  /** The operation in flight (`collection.op`), if any. */
  inFlight: string | undefined;
  ended = false;
  /** Set once the injected write conflict has been thrown: later operations and the commit fail too. */
  aborted = false;
  readonly writes: TransactionWrite[] = [];
  private readonly seen = new Set<string>();

  constructor(
    /** Whether this attempt's first write fails with the simulated write conflict. */
    public faultPending: boolean,
  ) {}

  wrote(collection: string, id: unknown): void {
    if (typeof id !== 'string') return;
    const key = `${collection}\u0000${id}`;
    if (this.seen.has(key)) return;
    this.seen.add(key);
    this.writes.push({ collection, id });
  }
}

/**
 * TEST SEAM, never used by production code: wraps any `DocumentStore` and holds the code above it
 * to MongoDB's transaction rules (docs/store.md "Transactions under test"), so the embedded
 * store's suites catch what only MongoDB would show:
 *
 * - **Retries run** (`failFirstAttempt`, default on): the first write of each transaction's first
 *   attempt throws MongoDB's `WriteConflict` (a `MongoServerError` labelled
 *   `TransientTransactionError`), before it reaches the store; once thrown, every later call of
 *   that attempt, and its commit, throw `NoSuchTransaction` (same label), as on a server that
 *   aborted the transaction. A read-only attempt fails at its commit. `withTransaction` then
 *   reruns `fn` (as the driver does), so every handler runs twice: it must not keep state or cause
 *   side effects outside the store between attempts, and must let the labelled error reach
 *   `withTransaction` (an error turned into a 500 or a 4xx on the way is not retried: the test
 *   sees it fail).
 * - **One operation at a time** in a transaction: a collection call with a session while another
 *   call of that transaction is in flight (`Promise.all` inside a transaction), or with the session
 *   of a transaction that has ended, throws {@link TransactionRuleError} (MongoDB refuses the
 *   first, code 263, or leaves it undefined). The error is also kept in {@link violations} and
 *   rethrown by `close()`, so a test that swallows it still fails. Each call settles only on a
 *   later turn of the event loop (as a reply from a server would), so a concurrent branch is
 *   caught whenever it reaches the store before the first call's caller resumes, however quickly
 *   the inner store answered: the rule does not depend on timing.
 * - **What each transaction wrote**: {@link transactions} lists, per committed transaction in
 *   commit order, the documents (collection + `_id`) its committed attempt wrote. Matching
 *   documents are found by reading the update's or delete's filter in the transaction just before
 *   it (one more read per write; upserts add their `_id`). A test asserts with it, e.g., that two
 *   writes touched no common document:
 *
 *   ```ts
 *   const a = await store.transactionsDuring(() => call(TasksOps.update, {...}));
 *   const b = await store.transactionsDuring(() => call(TasksOps.update, {...}));
 *   expect(commonWrites(a, b)).toEqual([]);
 *   ```
 *
 * - **A write the server refuses aborts the transaction**: a 4xx from a write that its own
 *   arguments did not cause (a duplicate key, a document grown past 16 MiB, an `$inc` of a string:
 *   MongoDB's server-side checks) marks the attempt aborted, as MongoDB does: the error reaches the
 *   caller, and every later call of the attempt and its commit throw `NoSuchTransaction`. Code that
 *   keeps going after such an error inside a transaction (a batch loop that records an item's
 *   error and goes on) fails here as on MongoDB; check what can be checked before the write.
 *
 * Calls without a session pass straight through (they are no transaction's). Over MongoDB use
 * `failFirstAttempt: false`: the driver retries real conflicts, and the other two rules hold.
 */
export class TransactionRulesStore implements DocumentStore {
  /** Committed transactions in commit order; cleared by {@link resetTransactions}. */
  readonly transactions: CommittedTransaction[] = [];
  /** Every {@link TransactionRuleError} thrown so far (close() rethrows the first). */
  readonly violations: TransactionRuleError[] = [];
  /**
   * Transaction attempts started, how many failed on the simulated conflict, and how many were
   * aborted by a write the server refused (for tests of the wrapper and timing notes).
   */
  readonly counts = { attempts: 0, injected: 0, refused: 0 };
  private readonly failFirstAttempt: boolean;
  private readonly attempts = new WeakMap<Session, Attempt>();
  private onClose: (() => Promise<void>) | undefined;

  constructor(readonly inner: DocumentStore, opts: TransactionRulesOptions = {}) {
    this.failFirstAttempt = opts.failFirstAttempt ?? true;
    this.onClose = opts.onClose;
  }

  /** Forgets the transactions recorded so far. */
  resetTransactions(): void {
    this.transactions.length = 0;
  }

  /** Runs `fn` and returns the transactions committed while it ran (as `fn`'s only writer, e.g. one API call). */
  async transactionsDuring(fn: () => Promise<unknown>): Promise<CommittedTransaction[]> {
    const from = this.transactions.length;
    await fn();
    return this.transactions.slice(from);
  }

  collection<T extends Doc = Doc>(name: string): Collection<T> {
    const inner = this.inner.collection<T>(name);
    const wrapped: Record<string, unknown> = { name: inner.name };
    for (const op of Object.keys(OPTIONS_ARG) as StoreOp[]) {
      const call = (...args: unknown[]) => (inner[op] as (...a: unknown[]) => Promise<unknown>).apply(inner, args);
      wrapped[op] = async (...args: unknown[]) => {
        const session = (args[OPTIONS_ARG[op]] as SessionOption | undefined)?.session;
        const attempt = session && this.attempts.get(session);
        if (!session || !attempt) return call(...args);
        const what = `${name}.${op}`;
        if (attempt.ended) this.violate(`${what} used the session of a transaction that has already ended (an operation left running after withTransaction's callback returned?)`);
        if (attempt.inFlight) {
          this.violate(`${what} started while ${attempt.inFlight} is still in flight in the same transaction: MongoDB refuses parallel operations in one transaction; await each call before the next (no Promise.all inside a transaction)`);
        }
        attempt.inFlight = what;
        try {
          if (attempt.aborted) throw transientError('aborted', what);
          if (WRITES.has(op) && attempt.faultPending) {
            attempt.faultPending = false;
            attempt.aborted = true;
            this.counts.injected++;
            throw transientError('conflict', what);
          }
          if (!WRITES.has(op)) return await call(...args);
          try {
            return await this.recordWrite(inner, attempt, op, args, session, call);
          } catch (e) {
            // the server refused the write (a duplicate key, a document grown past 16 MiB, an $inc
            // of a string): MongoDB aborts the whole transaction; later calls and the commit fail
            if (AppError.is(e) && e.status < 500 && !refusedBeforeSending(name, op, args)) {
              attempt.aborted = true;
              this.counts.refused++;
            }
            throw e;
          }
        } finally {
          // settle on a later turn of the event loop, as a reply from the server would: every
          // branch started alongside this one reaches its next store call first, and is refused
          await nextTurn();
          attempt.inFlight = undefined;
        }
      };
    }
    return wrapped as unknown as Collection<T>;
  }

  async withTransaction<R>(fn: (session: Session) => Promise<R>): Promise<R> {
    // the fault hits the first run of the callback only, whoever reruns it: the MongoDB driver
    // retries a labelled error inside the inner withTransaction; the embedded store does not, so
    // the loop below does
    let faultLeft = this.failFirstAttempt;
    for (let n = 1; ; n++) {
      let current: Attempt | undefined;
      try {
        const result = await this.inner.withTransaction(async (session) => {
          // the inner store may run this more than once (its own retries): each run is one attempt
          if (current) current.ended = true;
          const attempt = new Attempt(faultLeft);
          faultLeft = false;
          current = attempt;
          this.counts.attempts++;
          this.attempts.set(session, attempt);
          const r = await fn(session);
          if (attempt.inFlight) this.violate(`withTransaction's callback returned while ${attempt.inFlight} was still in flight`);
          if (attempt.faultPending) {
            // a read-only attempt: the simulated conflict hits the commit
            attempt.faultPending = false;
            this.counts.injected++;
            throw transientError('conflict', 'commitTransaction');
          }
          if (attempt.aborted) throw transientError('aborted', 'commitTransaction');
          return r;
        });
        if (current) {
          current.ended = true;
          this.transactions.push({ writes: current.writes });
        }
        return result;
      } catch (e) {
        if (current) current.ended = true;
        if (n < MAX_ATTEMPTS && isTransientTransactionError(e)) continue;
        throw e;
      }
    }
  }

  ensureIndexes(specs: IndexSpec[]): Promise<void> {
    return this.inner.ensureIndexes(specs);
  }

  ping(): Promise<void> {
    return this.inner.ping();
  }

  get stats(): StoreStats {
    return this.inner.stats;
  }

  /** Closes the inner store; then rejects with the first rule broken through this store, if any. */
  async close(): Promise<void> {
    const onClose = this.onClose;
    this.onClose = undefined;
    await closeReportingViolations(this.inner, onClose, this.violations);
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  private violate(message: string): never {
    return recordViolation(this.violations, message);
  }

  /** Runs write `op` and records the documents it wrote (see {@link CommittedTransaction.writes}). */
  private async recordWrite(
    inner: Collection<Doc>,
    attempt: Attempt,
    op: StoreOp,
    args: unknown[],
    session: Session,
    call: (...a: unknown[]) => Promise<unknown>,
  ): Promise<unknown> {
    const name = inner.name;
    const matched = async (filter: Filter, one: boolean) => {
      const docs = await inner.find(filter, { session, projection: { _id: 1 }, ...(one ? { limit: 1 } : {}) });
      for (const d of docs) attempt.wrote(name, d._id);
      return docs.length;
    };
    switch (op) {
      case 'insertOne':
        attempt.wrote(name, (args[0] as Doc)._id);
        return call(...args);
      case 'insertMany':
        for (const d of args[0] as Doc[]) attempt.wrote(name, d._id);
        return call(...args);
      case 'updateOne': {
        await matched(args[0] as Filter, true);
        const r = (await call(...args)) as { upsertedId?: string };
        attempt.wrote(name, r.upsertedId);
        return r;
      }
      case 'findOneAndUpdate': {
        const sort = (args[2] as { sort?: Sort } | undefined)?.sort;
        if (sort) {
          const [first] = await inner.find(args[0] as Filter, { session, projection: { _id: 1 }, sort, limit: 1 });
          if (first) attempt.wrote(name, first._id);
        } else await matched(args[0] as Filter, true);
        const r = (await call(...args)) as Doc | null;
        attempt.wrote(name, r?._id ?? ((args[2] as { upsert?: boolean } | undefined)?.upsert ? pinnedId(args[0] as Filter) : undefined));
        return r;
      }
      case 'updateMany':
      case 'deleteMany':
        await matched(args[0] as Filter, false);
        return call(...args);
      case 'deleteOne':
        await matched(args[0] as Filter, true);
        return call(...args);
      case 'bulkWrite': {
        // filters are read before the batch runs (a later op's match may depend on an earlier op; such batches are not used)
        for (const bulk of args[0] as BulkOp[]) {
          if ('insertOne' in bulk) attempt.wrote(name, bulk.insertOne.document._id);
          else if ('updateOne' in bulk) {
            const found = await matched(bulk.updateOne.filter, true);
            if (found === 0 && bulk.updateOne.upsert) attempt.wrote(name, pinnedId(bulk.updateOne.filter));
          } else if ('updateMany' in bulk) await matched(bulk.updateMany.filter, false);
          else await matched(bulk.deleteOne.filter, true);
        }
        return call(...args);
      }
      default:
        return call(...args);
    }
  }
}

/**
 * True when the write's own arguments break the store's rules (`shared/src/store/rules.ts`: field
 * names, a document over 16 MiB, an `$inc` by a non-number): the MongoDB store refuses such a write
 * before sending it, so the transaction goes on. Any other 4xx of a write came from the server
 * (MongoDB), or from the embedded store's stand-in for the server's check, and aborts it.
 */
function refusedBeforeSending(collection: string, op: StoreOp, args: unknown[]): boolean {
  const fails = (check: () => unknown) => {
    try {
      check();
      return false;
    } catch {
      return true;
    }
  };
  switch (op) {
    case 'insertOne':
      return fails(() => checkDocument(collection, args[0] as Doc));
    case 'insertMany':
      return (args[0] as Doc[]).some((d) => fails(() => checkDocument(collection, d)));
    case 'updateOne':
    case 'updateMany':
    case 'findOneAndUpdate':
      return fails(() => checkUpdate(collection, args[1] as Update));
    case 'bulkWrite':
      return (args[0] as BulkOp[]).some((b) =>
        'insertOne' in b ? fails(() => checkDocument(collection, b.insertOne.document))
          : 'updateOne' in b ? fails(() => checkUpdate(collection, b.updateOne.update))
            : 'updateMany' in b ? fails(() => checkUpdate(collection, b.updateMany.update)) : false);
    default:
      return false;
  }
}

/** The documents written by any of `transactions`, each once. */
export function writtenDocuments(transactions: readonly CommittedTransaction[]): TransactionWrite[] {
  const out = new Map<string, TransactionWrite>();
  for (const t of transactions) for (const w of t.writes) out.set(`${w.collection}\u0000${w.id}`, w);
  return [...out.values()];
}

/** The documents both `a` and `b` wrote (empty when they wrote no common document). */
export function commonWrites(a: readonly CommittedTransaction[], b: readonly CommittedTransaction[]): TransactionWrite[] {
  const inB = new Set(writtenDocuments(b).map((w) => `${w.collection}\u0000${w.id}`));
  return writtenDocuments(a).filter((w) => inB.has(`${w.collection}\u0000${w.id}`));
}
