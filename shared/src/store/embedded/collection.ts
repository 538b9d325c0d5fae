import type {
  BulkOp, BulkResult, Collection, Doc, Filter, FindOneAndUpdateOptions, FindOptions, Session,
  SessionOption, Update, UpdateOptions, UpdateResult, WriteOptions,
} from '../port.js';
import type { CollectionState } from './collection-state.js';
import { HISTORY_DELETE_BATCH, type HistoryCollection } from './history.js';
import { project } from './matcher.js';
import { readTimeLeft, requestReadDeadline } from '../../util/request-scope.js';
import { STEP, timedRead } from './scan-clock.js';
import { countInSteps, findInSteps, type StepClock } from './stepped-read.js';
import type { Txn, TxnUpdateResult } from './txn.js';
import { sortDocs } from './values.js';

/**
 * Matches past this many are sorted in steps (stepped-read.ts) by a read that may yield: sorting
 * them at once would hold the event loop longer than a slice.
 */
const SORT_AT_ONCE = 2_048;

/** Runs one collection call as a unit of work: in the session's transaction, or committed at once. */
export interface TxnRunner {
  /**
   * `awaitDurable: false`: resolve without waiting for the journal's sync (port `WriteOptions`).
   * `fn` may return a promise (a read going on in steps), which the call's promise follows.
   */
  run<R>(session: Session | undefined, fn: (txn: Txn) => R | Promise<R>, awaitDurable?: boolean): Promise<R>;
  /** The committed state of a collection: what a read outside a transaction sees. */
  state(collection: string): CollectionState;
  /** The history collection of that name (history.ts), or undefined for an in-memory one. */
  history(collection: string): HistoryCollection | undefined;
  readonly stats: { docsExamined: number };
  /** A read's time limit in ms (port `QUERY_TIME_LIMIT_MS`; scan-clock.ts). */
  readLimitMs(): number;
}

/**
 * Sort, skip, limit, projection. The documents handed out are the stored ones, deeply frozen
 * (`deepFreeze`): reading copies nothing, and a caller cannot change what is stored.
 */
function shape(docs: Doc[], opts: FindOptions): Doc[] {
  const skip = opts.skip ?? 0;
  const end = opts.limit ? skip + opts.limit : undefined;
  const sorted = opts.sort ? sortDocs(docs, opts.sort, end) : docs;
  const page = skip > 0 || end !== undefined ? sorted.slice(skip, end) : sorted;
  return project(page, opts.projection);
}

function toUpdateResult(r: TxnUpdateResult): UpdateResult {
  const out: UpdateResult = { matchedCount: r.matchedCount, modifiedCount: r.modifiedCount };
  if (r.upsertedId !== undefined) out.upsertedId = r.upsertedId;
  return out;
}

/**
 * A collection of the embedded store (docs/architecture.md §2). Every call is one round trip and one unit of
 * work: outside a transaction it is applied (memory and sqlite) before the promise resolves; a
 * failing multi-document call (insertMany, bulkWrite) keeps the writes before the failing one, as
 * MongoDB's ordered writes do.
 */
export class EmbeddedCollection<T extends Doc = Doc> implements Collection<T> {
  constructor(
    readonly name: string,
    private readonly runner: TxnRunner,
  ) {}

  /**
   * Rejects with `QUERY_TIMEOUT` when its scan runs past the store's read time limit or, outside a
   * transaction (which has its own deadline), what is left of the request's (scan-clock.ts).
   * Outside a transaction a read that runs past its try is read again in steps, yielding the event
   * loop between them (stepped-read.ts).
   */
  find(filter: Filter, opts: FindOptions = {}): Promise<T[]> {
    const skip = opts.skip ?? 0;
    return this.read(opts.session, (txn, yieldable) => {
      const history = this.runner.history(this.name);
      if (history) {
        const page = txn.matchHistory(history, this.name, filter, opts.sort, opts.limit ? skip + opts.limit : Infinity);
        return project(skip > 0 ? page.slice(skip) : page, opts.projection) as T[];
      }
      // outside a transaction a read sees the committed documents: a sorted page comes from the state
      const committed = !opts.session && opts.sort && opts.limit ? this.runner.state(this.name).sortedPage(filter, opts.sort, skip + opts.limit, this.runner.stats) : undefined;
      if (committed) return project(committed.slice(skip), opts.projection) as T[];
      const walked = opts.sort && opts.limit ? txn.matchSorted(this.name, filter, opts.sort, skip + opts.limit) : undefined;
      if (walked) return project(walked.slice(skip), opts.projection) as T[];
      const matches = txn.match(this.name, filter);
      // a long sort is done in steps too
      if (yieldable && opts.sort && matches.length > SORT_AT_ONCE) throw STEP;
      return shape(matches, opts) as T[];
    }, async (stats, clock) => project(await findInSteps(this.runner.state(this.name), filter, opts, stats, clock), opts.projection) as T[]);
  }

  async findOne(filter: Filter, opts: Omit<FindOptions, 'skip' | 'limit'> = {}): Promise<T | null> {
    const [doc] = await this.find(filter, { ...opts, limit: 1 });
    return doc ?? null;
  }

  /** Rejects with `QUERY_TIMEOUT` and counts in steps as {@link find} does. */
  countDocuments(filter: Filter, opts: SessionOption = {}): Promise<number> {
    return this.read(opts.session, (txn) => txn.count(this.name, filter), (stats, clock) => countInSteps(this.runner.state(this.name), filter, stats, clock));
  }

  /**
   * One read: `atOnce` synchronously under the read's clock (scan-clock.ts); outside a transaction
   * and a history collection (`yieldable`), when it gives way ({@link STEP}), `inSteps` instead,
   * under what is left of the read's time limit. The documents the read examines are counted once.
   */
  private read<R>(session: Session | undefined, atOnce: (txn: Txn, yieldable: boolean) => R, inSteps: (stats: { docsExamined: number }, clock: StepClock) => Promise<R>): Promise<R> {
    const limitMs = this.runner.readLimitMs();
    return this.runner.run(session, (txn) => {
      const yieldable = !session && !this.runner.history(this.name);
      const examined = this.runner.stats.docsExamined;
      try {
        return timedRead(limitMs, session ? Infinity : requestReadDeadline(), () => atOnce(txn, yieldable), yieldable);
      } catch (e) {
        if (e !== STEP) throw e;
        this.runner.stats.docsExamined = examined;
        return inSteps(this.runner.stats, { limitMs, deadline: performance.now() + readTimeLeft(limitMs) });
      }
    });
  }

  insertOne(doc: T, opts: WriteOptions = {}): Promise<void> {
    return this.runner.run(
      opts.session,
      (txn) => {
        txn.insert(this.name, doc);
      },
      opts.awaitDurable,
    );
  }

  insertMany(docs: T[], opts: SessionOption = {}): Promise<void> {
    return this.runner.run(opts.session, (txn) => {
      for (const doc of docs) txn.insert(this.name, doc);
    });
  }

  updateOne(filter: Filter, update: Update, opts: UpdateOptions = {}): Promise<UpdateResult> {
    return this.runner.run(
      opts.session,
      (txn) => toUpdateResult(txn.update(this.name, filter, update, { multi: false, upsert: opts.upsert ?? false })),
      opts.awaitDurable,
    );
  }

  updateMany(filter: Filter, update: Update, opts: SessionOption = {}): Promise<UpdateResult> {
    return this.runner.run(opts.session, (txn) => toUpdateResult(txn.update(this.name, filter, update, { multi: true })));
  }

  findOneAndUpdate(filter: Filter, update: Update, opts: FindOneAndUpdateOptions = {}): Promise<T | null> {
    return this.runner.run(opts.session, (txn) => {
      // with a sort: the first match in that order is the one updated (by its _id)
      const first = opts.sort ? sortDocs(txn.match(this.name, filter), opts.sort, 1)[0] : undefined;
      const which = first ? { _id: first._id } : filter;
      const r = txn.update(this.name, which, update, { multi: false, upsert: opts.upsert ?? false });
      const doc = opts.returnDocument === 'before' ? r.before : r.after;
      return doc ? (shape([doc], { projection: opts.projection })[0] as T) : null;
    });
  }

  deleteOne(filter: Filter, opts: SessionOption = {}): Promise<{ deletedCount: number }> {
    return this.runner.run(opts.session, (txn) => ({ deletedCount: txn.remove(this.name, filter, false) }));
  }

  /**
   * Deletes every match. Outside a transaction, in a history collection (history.ts), the matches
   * go in units of {@link HISTORY_DELETE_BATCH} documents, each committed on its own, with a turn of
   * the event loop between them (as MongoDB's deleteMany, it is not all-or-nothing).
   */
  async deleteMany(filter: Filter, opts: SessionOption = {}): Promise<{ deletedCount: number }> {
    if (opts.session || !this.runner.history(this.name)) {
      return this.runner.run(opts.session, (txn) => ({ deletedCount: txn.remove(this.name, filter, true) }));
    }
    let deletedCount = 0;
    for (;;) {
      const n = await this.runner.run(undefined, (txn) => txn.remove(this.name, filter, true, HISTORY_DELETE_BATCH));
      deletedCount += n;
      if (n < HISTORY_DELETE_BATCH) return { deletedCount };
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  bulkWrite(ops: BulkOp<T>[], opts: SessionOption = {}): Promise<BulkResult> {
    return this.runner.run(opts.session, (txn) => {
      const result: BulkResult = { insertedCount: 0, matchedCount: 0, modifiedCount: 0, deletedCount: 0 };
      const add = (r: TxnUpdateResult) => {
        result.matchedCount += r.matchedCount;
        result.modifiedCount += r.modifiedCount;
      };
      for (const op of ops) {
        if ('insertOne' in op) {
          txn.insert(this.name, op.insertOne.document);
          result.insertedCount++;
        } else if ('updateOne' in op) {
          const { filter, update, upsert } = op.updateOne;
          add(txn.update(this.name, filter, update, { multi: false, upsert: upsert ?? false }));
        } else if ('updateMany' in op) {
          add(txn.update(this.name, op.updateMany.filter, op.updateMany.update, { multi: true }));
        } else {
          result.deletedCount += txn.remove(this.name, op.deleteOne.filter, false);
        }
      }
      return result;
    });
  }
}
