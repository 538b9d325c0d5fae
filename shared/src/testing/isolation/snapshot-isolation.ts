import { AsyncLocalStorage } from 'node:async_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { randomUUID } from 'node:crypto';
import { MongoServerError } from 'mongodb';
import type {
  BulkOp, BulkResult, Collection, Doc, DocumentStore, Filter, FindOptions, IndexSpec, Projection, Session, SessionOption,
  Sort, StoreStats, Update, UpdateResult,
} from '../../store/port.js';
import { TRANSACTION_DEADLINE_MS } from '../../store/port.js';
import { AppError } from '../../errors/index.js';
import { isTransientTransactionError } from '../../store/mongo/errors.js';
import { checkDocument, checkUpdate, describe, notIncrementable } from '../../store/rules.js';
import { compileFilter, project } from '../../store/embedded/matcher.js';
import { applyUpdate, applyWithMingo } from '../../store/embedded/updater.js';
import { sortDocs, toStored, valueAt } from '../../store/embedded/values.js';
import { closeReportingViolations, recordViolation, TransactionRuleError } from '../transaction-rules.js';
import type { StoreOp } from '../faulty-store.js';

/** Counts kept by {@link SnapshotIsolationStore} (tests, and the all-in-one's log at close). */
export interface SnapshotCounts {
  /** Transaction attempts started (each run of a callback). */
  attempts: number;
  /** Attempts that committed. */
  commits: number;
  /** Writes refused with `WriteConflict` (first writer wins). */
  conflicts: number;
  /** Reruns of a callback after a transient error. */
  retries: number;
}

/** Options of {@link SnapshotIsolationStore}. */
export interface SnapshotIsolationOptions {
  /** The whole transaction's deadline in ms (default {@link TRANSACTION_DEADLINE_MS}); past it a conflicting transaction ends as `CONFLICT`. */
  deadlineMs?: number;
  /** Runs once after the inner store is closed. */
  onClose?: () => Promise<void>;
  /**
   * A network round trip in ms added to every collection call and commit (default 0): MongoDB's
   * calls take one, which widens the windows in which concurrent transactions overlap.
   */
  latencyMs?: number;
}

const OPTIONS_ARG = {
  find: 1, findOne: 1, countDocuments: 1, insertOne: 1, insertMany: 1, updateOne: 2, updateMany: 2,
  findOneAndUpdate: 2, deleteOne: 1, deleteMany: 1, bulkWrite: 1,
} as const satisfies Record<StoreOp, number>;

/** The driver's backoff between reruns (as `MongoStore`): jittered, 5 ms × 1.5ⁿ up to 500 ms. */
const backoffMs = (n: number) => Math.random() * Math.min(5 * 1.5 ** n, 500);

/** MongoDB's answer to a write conflict in a transaction (code 112), or to any later command of the aborted transaction (251). */
function transient(kind: 'conflict' | 'aborted', where: string): MongoServerError {
  const [code, codeName, what] = kind === 'conflict'
    ? [112, 'WriteConflict', `Write conflict during plan execution and yielding is disabled (${where})`]
    : [251, 'NoSuchTransaction', `Transaction has been aborted (${where})`];
  return new MongoServerError({ message: what, errmsg: what, code, codeName, errorLabels: ['TransientTransactionError'] });
}

/** The duplicate-key refusal, as the embedded store words it. */
function duplicate(collection: string, fields: readonly string[]): AppError {
  return new AppError('CONFLICT', {
    message: `A document with the same ${fields.join(', ')} already exists in ${collection}`,
    details: { collection, fields: [...fields] },
  });
}

const docKey = (collection: string, id: string) => `d\u0000${collection}\u0000${id}`;

/** A unique index the store was asked to ensure. */
interface UniqueIndex {
  name: string;
  fields: string[];
  sparse: boolean;
}

/** The key a document takes in a unique index, or undefined when a sparse index leaves it out. */
function indexKey(collection: string, ix: UniqueIndex, doc: Doc | null | undefined): string | undefined {
  if (!doc) return undefined;
  const values = ix.fields.map((f) => valueAt(doc, f.split('.')));
  if (ix.sparse && values.every((v) => v === undefined)) return undefined;
  return `i\u0000${collection}\u0000${ix.name}\u0000${JSON.stringify(values.map((v) => (v === undefined ? null : v)))}`;
}

/** The fields an upserted document starts with: the filter's equality conditions (MongoDB rules). */
function equalityFields(filter: Filter, out: Record<string, unknown> = {}): Record<string, unknown> {
  for (const [key, cond] of Object.entries(filter)) {
    if (key === '$and' && Array.isArray(cond)) for (const sub of cond) equalityFields(sub as Filter, out);
    else if (!key.startsWith('$')) {
      if (typeof cond !== 'object' || cond === null || Array.isArray(cond)) out[key] = cond;
      else if (cond instanceof RegExp) continue;
      else if (!Object.keys(cond).some((k) => k.startsWith('$'))) out[key] = cond;
      else if ('$eq' in cond) out[key] = (cond as { $eq: unknown }).$eq;
    }
  }
  return out;
}

/** One write a transaction buffered: the document's state at its snapshot and now (`null`: absent). */
interface Buffered {
  before: Doc | null;
  after: Doc | null;
}

/** One attempt of a transaction. */
class SnapshotTxn {
  /** Buffered writes, by collection and `_id`. */
  readonly writes = new Map<string, Map<string, Buffered>>();
  /** Document and index keys this attempt has written (holds them until it ends). */
  readonly held = new Set<string>();
  inFlight: string | undefined;
  ended = false;
  aborted = false;
  private resolveDone!: () => void;
  /** Settles when the attempt ends (committed or aborted): a write outside transactions waits for it. */
  readonly done = new Promise<void>((r) => (this.resolveDone = r));

  /**
   * The commit whose state this attempt reads: set by its first operation, as MongoDB establishes
   * a transaction's snapshot at its first command, not at `startTransaction`.
   */
  snapshot = -1;

  finish(): void {
    this.ended = true;
    this.resolveDone();
  }
}

/** One committed change of a document: the commit's sequence number and the document before it. */
interface Change {
  seq: number;
  before: Doc | null;
}

/**
 * TEST SEAM, never used by production code unless `EMBEDDED_ISOLATION=snapshot` (docs/store.md
 * "Snapshot isolation"): wraps any `DocumentStore` and gives its transactions MongoDB's
 * concurrency (the manual's "Transactions" → "Read Concern/Write Concern/Read Preference",
 * "Read Concern "snapshot"", and "In-progress Transactions and Write Conflicts"):
 *
 * - **Concurrent**: transactions are not serialized; any number are open at once and their
 *   callbacks interleave at every `await`.
 * - **Snapshot reads**: every read with a transaction's session (`find`, `findOne`,
 *   `countDocuments`, with filters, sorts, skips and limits) sees the committed documents as of the
 *   attempt's first operation (where MongoDB establishes the snapshot), plus the attempt's own
 *   writes; later commits are invisible to it.
 * - **Buffered writes, all-or-nothing commit**: writes are computed against that view and kept
 *   until the callback returns, then applied to the inner store in one of its transactions; an
 *   abort leaves nothing.
 * - **First writer wins**: a write (insert, a modifying update, a delete; also a change of a
 *   unique index's key) to a document that another transaction committed after this attempt's
 *   snapshot, or that another open transaction has already written, fails at once with
 *   `WriteConflict` labelled `TransientTransactionError`; the attempt is aborted (every later call
 *   and the commit fail with `NoSuchTransaction`, same label) and `withTransaction` reruns the
 *   callback on a fresh snapshot after the driver's jittered backoff, until the deadline, then
 *   `CONFLICT` (409). An update that changes nothing writes nothing and conflicts with nothing.
 * - **Reads never conflict**, and never wait.
 * - **Outside transactions**: a read sees the latest commit; a write waits until no open
 *   transaction holds a document it writes (MongoDB's write lock), then applies at once.
 * - **Today's rules kept**: one operation at a time per transaction, nothing on a session whose
 *   attempt has ended ({@link TransactionRuleError}, rethrown by `close()`).
 *
 * Not modelled: causal consistency across sessions, replication and majority-read lag,
 * `maxTransactionLockRequestTimeoutMillis`, commit-time (rather than write-time) conflicts of
 * WiredTiger's cache, TTL removals (the inner store's sweeps bypass the model), and unique
 * indexes the wrapper was not asked to ensure.
 */
export class SnapshotIsolationStore implements DocumentStore {
  readonly counts: SnapshotCounts = { attempts: 0, commits: 0, conflicts: 0, retries: 0 };
  /** Every {@link TransactionRuleError} thrown so far (close() rethrows the first). */
  readonly violations: TransactionRuleError[] = [];
  /**
   * Calls made without the session from inside a transaction's callback (`collection.op` and the
   * caller's stack): on MongoDB they read the latest commit, not the snapshot, and repeat on every
   * retry. Kept for tests to assert on; the call itself proceeds outside the transaction.
   */
  readonly outsideCalls: { call: string; stack: string }[] = [];
  private readonly current = new AsyncLocalStorage<SnapshotTxn>();
  /** The last commit's sequence number (a snapshot is one of these). */
  private seq = 0;
  /** Committed changes of documents newer than the oldest open snapshot, by collection and `_id`, oldest first. */
  private readonly changes = new Map<string, Map<string, Change[]>>();
  /** The last commit that changed each unique-index key. */
  private readonly keyChanges = new Map<string, number>();
  /** Changes in commit order, for pruning. */
  private readonly log: { seq: number; collection?: string; id?: string; key?: string }[] = [];
  /** Which open attempt holds each key it wrote. */
  private readonly holders = new Map<string, SnapshotTxn>();
  private readonly open = new Set<SnapshotTxn>();
  private readonly sessions = new WeakMap<Session, SnapshotTxn>();
  private readonly uniques = new Map<string, UniqueIndex[]>();
  /** One view read or write application at a time (the inner store is read at one state). */
  private lock: Promise<unknown> = Promise.resolve();
  private readonly deadlineMs: number;
  private readonly latencyMs: number;
  private onClose: (() => Promise<void>) | undefined;

  constructor(readonly inner: DocumentStore, opts: SnapshotIsolationOptions = {}) {
    this.deadlineMs = opts.deadlineMs ?? TRANSACTION_DEADLINE_MS;
    this.latencyMs = opts.latencyMs ?? 0;
    this.onClose = opts.onClose;
  }

  /** One round trip per collection call and per commit, as the backends count them. */
  readonly stats: StoreStats = { roundTrips: 0 };
  private closed = false;

  private assertOpen(): void {
    if (this.closed) throw new AppError('STORE_UNAVAILABLE', { message: 'The store is closed' });
  }

  private locked<R>(fn: () => Promise<R>): Promise<R> {
    const run = this.lock.then(fn, fn);
    this.lock = run.catch(() => undefined);
    return run;
  }

  collection<T extends Doc = Doc>(name: string): Collection<T> {
    const inner = this.inner.collection<T>(name);
    const wrapped: Record<string, unknown> = { name: inner.name };
    for (const op of Object.keys(OPTIONS_ARG) as StoreOp[]) {
      wrapped[op] = async (...args: unknown[]) => {
        this.assertOpen();
        this.stats.roundTrips++;
        if (this.latencyMs) await sleep(this.latencyMs);
        const session = (args[OPTIONS_ARG[op]] as SessionOption | undefined)?.session;
        const t = session && this.sessions.get(session);
        if (!t) {
          if (session) return (inner[op] as (...a: unknown[]) => Promise<unknown>).apply(inner, args);
          const open = this.current.getStore();
          if (open && !open.ended) this.outsideCalls.push({ call: `${name}.${op}`, stack: new Error().stack ?? '' });
          return this.outside(name, op, args);
        }
        const what = `${name}.${op}`;
        if (t.ended) this.violate(`${what} used the session of a transaction that has already ended (an operation left running after withTransaction's callback returned?)`);
        if (t.inFlight) this.violate(`${what} started while ${t.inFlight} is still in flight in the same transaction: MongoDB refuses parallel operations in one transaction`);
        t.inFlight = what;
        try {
          if (t.aborted) throw transient('aborted', what);
          return await this.locked(() => this.inTxn(t, name, op, args));
        } catch (e) {
          // MongoDB aborts the transaction on a refused write too (duplicate key, …)
          if (isTransientTransactionError(e) || (AppError.is(e) && e.status < 500 && isWrite(op) && !refusedBeforeSending(e))) this.abort(t);
          throw e;
        } finally {
          t.inFlight = undefined;
        }
      };
    }
    return wrapped as unknown as Collection<T>;
  }

  async withTransaction<R>(fn: (session: Session) => Promise<R>): Promise<R> {
    this.assertOpen();
    const deadline = performance.now() + this.deadlineMs;
    for (let attempt = 0; ; attempt++) {
      const t = new SnapshotTxn();
      this.open.add(t);
      this.counts.attempts++;
      const session = { __session: true } as Session;
      this.sessions.set(session, t);
      try {
        const result = await this.current.run(t, () => fn(session));
        if (t.inFlight) this.violate(`withTransaction's callback returned while ${t.inFlight} was still in flight`);
        if (t.aborted) throw transient('aborted', 'commitTransaction');
        this.assertOpen();
        this.stats.roundTrips++;
        if (this.latencyMs) await sleep(this.latencyMs);
        await this.locked(() => this.commit(t));
        this.counts.commits++;
        return result;
      } catch (e) {
        this.abort(t);
        if (!isTransientTransactionError(e)) throw e;
        const wait = backoffMs(attempt + 1);
        if (performance.now() + wait >= deadline) {
          throw new AppError('CONFLICT', { message: 'The transaction kept conflicting with concurrent writes', details: { attempts: attempt + 1 } });
        }
        this.counts.retries++;
        await sleep(wait);
      } finally {
        this.end(t);
      }
    }
  }

  async ensureIndexes(specs: IndexSpec[]): Promise<void> {
    this.assertOpen();
    await this.inner.ensureIndexes(specs);
    for (const spec of specs) {
      if (!spec.unique) continue;
      const fields = Object.keys(spec.keys);
      const list = this.uniques.get(spec.collection) ?? [];
      const name = spec.name ?? fields.join('_');
      if (list.some((ix) => ix.name === name || ix.fields.join() === fields.join())) continue;
      list.push({ name, fields, sparse: spec.sparse ?? false });
      this.uniques.set(spec.collection, list);
    }
  }

  async ping(): Promise<void> {
    this.assertOpen();
    return this.inner.ping();
  }

  async close(): Promise<void> {
    this.closed = true;
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

  // ---- transactions -------------------------------------------------------------------------

  /** Releases what the attempt holds; its buffered writes are dropped. */
  private abort(t: SnapshotTxn): void {
    t.aborted = true;
    this.release(t);
  }

  private release(t: SnapshotTxn): void {
    for (const key of t.held) if (this.holders.get(key) === t) this.holders.delete(key);
    t.held.clear();
  }

  private end(t: SnapshotTxn): void {
    this.release(t);
    t.finish();
    this.open.delete(t);
    this.prune();
  }

  /** Drops the changes no open snapshot can need. */
  private prune(): void {
    let oldest = this.seq;
    for (const t of this.open) if (t.snapshot >= 0) oldest = Math.min(oldest, t.snapshot);
    let n = 0;
    while (n < this.log.length && this.log[n]!.seq <= oldest) {
      const { collection, id, key, seq } = this.log[n++]!;
      if (key !== undefined) {
        if (this.keyChanges.get(key) === seq) this.keyChanges.delete(key);
        continue;
      }
      const byId = this.changes.get(collection!);
      const list = byId?.get(id!);
      if (!list) continue;
      list.shift();
      if (list.length === 0) byId!.delete(id!);
    }
    if (n > 0) this.log.splice(0, n);
  }

  /** Claims `key` for `t`, or throws `WriteConflict`: another open attempt holds it, or a commit after `t`'s snapshot changed it. */
  private claim(t: SnapshotTxn, key: string, committedAfter: boolean, where: string): void {
    const holder = this.holders.get(key);
    if ((holder && holder !== t) || committedAfter) {
      this.counts.conflicts++;
      throw transient('conflict', where);
    }
    this.holders.set(key, t);
    t.held.add(key);
  }

  private changedAfter(collection: string, id: string, seq: number): boolean {
    const list = this.changes.get(collection)?.get(id);
    return !!list && list[list.length - 1]!.seq > seq;
  }

  /**
   * The documents matching `filter` in `t`'s view (its snapshot plus its own writes), in `sort`
   * order, after `skip`, at most `limit` (0 or absent: all); full documents.
   */
  private async view(t: SnapshotTxn, collection: string, filter: Filter, opts: { sort?: Sort | undefined; skip?: number | undefined; limit?: number | undefined }): Promise<Doc[]> {
    const overlay = new Map<string, Doc | null>();
    for (const [id, list] of this.changes.get(collection) ?? []) {
      const first = list.find((c) => c.seq > t.snapshot);
      if (first) overlay.set(id, first.before);
    }
    for (const [id, w] of t.writes.get(collection) ?? []) overlay.set(id, w.after);
    const skip = opts.skip ?? 0;
    const end = opts.limit ? skip + opts.limit : undefined;
    const ids = [...overlay.keys()];
    const innerFilter = ids.length ? { $and: [filter, { _id: { $nin: ids } }] } : filter;
    const base = await this.inner.collection(collection).find(innerFilter, {
      ...(opts.sort ? { sort: opts.sort } : {}),
      ...(end !== undefined ? { limit: end } : {}),
    });
    let out = base;
    if (overlay.size) {
      const matches = compileFilter(filter);
      const extra = [...overlay.values()].filter((d): d is Doc => d !== null && matches(d));
      if (extra.length) out = opts.sort ? sortDocs([...base, ...extra], opts.sort) : [...base, ...extra];
    }
    return skip || (end !== undefined && out.length > end) ? out.slice(skip, end) : out;
  }

  private async inTxn(t: SnapshotTxn, collection: string, op: StoreOp, args: unknown[]): Promise<unknown> {
    if (t.snapshot < 0) t.snapshot = this.seq;
    const what = `${collection}.${op}`;
    switch (op) {
      case 'find': {
        const o = (args[1] ?? {}) as FindOptions;
        return project(await this.view(t, collection, args[0] as Filter, o), o.projection);
      }
      case 'findOne': {
        const o = (args[1] ?? {}) as FindOptions;
        return project(await this.view(t, collection, args[0] as Filter, { sort: o.sort, limit: 1 }), o.projection)[0] ?? null;
      }
      case 'countDocuments':
        return (await this.view(t, collection, args[0] as Filter, {})).length;
      case 'insertOne':
        await this.insert(t, collection, args[0] as Doc, what);
        return undefined;
      case 'insertMany':
        for (const d of args[0] as Doc[]) await this.insert(t, collection, d, what);
        return undefined;
      case 'updateOne':
      case 'updateMany': {
        const o = (args[2] ?? {}) as { upsert?: boolean };
        const r = await this.update(t, collection, args[0] as Filter, args[1] as Update, op === 'updateMany', o.upsert ?? false, what);
        return r.result;
      }
      case 'findOneAndUpdate': {
        const o = (args[2] ?? {}) as { upsert?: boolean; returnDocument?: 'before' | 'after'; projection?: Projection; sort?: Sort };
        const r = await this.update(t, collection, args[0] as Filter, args[1] as Update, false, o.upsert ?? false, what, o.sort);
        const doc = o.returnDocument === 'before' ? r.before : r.after;
        return doc ? project([doc], o.projection)[0]! : null;
      }
      case 'deleteOne':
      case 'deleteMany':
        return { deletedCount: await this.remove(t, collection, args[0] as Filter, op === 'deleteMany', what) };
      case 'bulkWrite': {
        const total: BulkResult = { insertedCount: 0, matchedCount: 0, modifiedCount: 0, deletedCount: 0 };
        for (const b of args[0] as BulkOp[]) {
          if ('insertOne' in b) {
            await this.insert(t, collection, b.insertOne.document, what);
            total.insertedCount++;
          } else if ('updateOne' in b || 'updateMany' in b) {
            const u = 'updateOne' in b ? b.updateOne : b.updateMany;
            const r = await this.update(t, collection, u.filter, u.update, 'updateMany' in b, 'updateOne' in b ? b.updateOne.upsert ?? false : false, what);
            total.matchedCount += r.result.matchedCount;
            total.modifiedCount += r.result.modifiedCount;
          } else total.deletedCount += await this.remove(t, collection, b.deleteOne.filter, false, what);
        }
        return total;
      }
      default:
        throw new Error(`unknown op ${String(op)}`);
    }
  }

  /** Buffers `after` as `t`'s version of the document (`before`: its version in `t`'s view), claiming its keys. */
  private async put(t: SnapshotTxn, collection: string, id: string, before: Doc | null, after: Doc | null, what: string): Promise<void> {
    this.claim(t, docKey(collection, id), this.changedAfter(collection, id, t.snapshot), what);
    for (const ix of this.uniques.get(collection) ?? []) {
      const was = indexKey(collection, ix, before);
      const now = indexKey(collection, ix, after);
      if (was === now) continue;
      for (const key of [was, now]) if (key !== undefined) this.claim(t, key, (this.keyChanges.get(key) ?? -1) > t.snapshot, what);
      if (now !== undefined && after) {
        const cond: Filter = { _id: { $ne: id } };
        for (const f of ix.fields) cond[f] = valueAt(after, f.split('.')) ?? null;
        const clash = await this.view(t, collection, cond, { limit: 1 });
        if (clash.length) throw duplicate(collection, ix.fields);
      }
    }
    let byId = t.writes.get(collection);
    if (!byId) t.writes.set(collection, (byId = new Map()));
    const prior = byId.get(id);
    byId.set(id, { before: prior ? prior.before : before, after });
  }

  private async insert(t: SnapshotTxn, collection: string, doc: Doc, what: string): Promise<Doc> {
    const stored = toStored(doc, true);
    checkDocument(collection, stored);
    const [existing] = await this.view(t, collection, { _id: stored._id }, { limit: 1 });
    if (existing) throw duplicate(collection, ['_id']);
    await this.put(t, collection, stored._id, null, stored, what);
    return stored;
  }

  private async update(
    t: SnapshotTxn, collection: string, filter: Filter, spec: Update, multi: boolean, upsert: boolean, what: string, sort?: Sort,
  ): Promise<{ result: UpdateResult; before: Doc | null; after: Doc | null }> {
    checkUpdate(collection, spec);
    const matches = await this.view(t, collection, filter, multi ? {} : { limit: 1, sort });
    const result: UpdateResult = { matchedCount: matches.length, modifiedCount: 0 };
    let before: Doc | null = null;
    let after: Doc | null = null;
    const increments = spec.$inc as Record<string, unknown> | undefined;
    for (const doc of matches) {
      before = after = doc;
      for (const path of Object.keys(increments ?? {})) {
        const v = valueAt(doc, path.split('.'));
        if (v !== undefined && typeof v !== 'number') throw notIncrementable(collection, path, describe(v));
      }
      const next = applyUpdate(doc, spec);
      if (!next.modified) continue;
      if (next.after._id !== doc._id) throw new AppError('INTERNAL', { message: 'An update may not change _id' });
      checkDocument(collection, next.after);
      await this.put(t, collection, doc._id, doc, next.after, what);
      after = next.after;
      result.modifiedCount++;
    }
    if (matches.length === 0 && upsert) {
      const { _id, ...fields } = equalityFields(filter);
      const seed = (_id === undefined ? {} : { _id }) as Doc;
      applyWithMingo(seed, { $set: fields });
      applyWithMingo(seed, spec);
      if (typeof seed._id !== 'string') seed._id = randomUUID();
      after = await this.insert(t, collection, seed, what);
      result.upsertedId = seed._id;
    }
    return { result, before, after };
  }

  private async remove(t: SnapshotTxn, collection: string, filter: Filter, multi: boolean, what: string): Promise<number> {
    const matches = await this.view(t, collection, filter, multi ? {} : { limit: 1 });
    for (const doc of matches) await this.put(t, collection, doc._id, doc, null, what);
    return matches.length;
  }

  /** Applies `t`'s buffered writes to the inner store in one of its transactions, then records them as one commit. */
  private async commit(t: SnapshotTxn): Promise<void> {
    if (t.aborted) throw transient('aborted', 'commitTransaction');
    if (t.writes.size === 0) return;
    await this.inner.withTransaction(async (session) => {
      for (const [collection, byId] of t.writes) {
        const c = this.inner.collection(collection);
        for (const [id, { before, after }] of byId) {
          if (!after) {
            if (before) await c.deleteOne({ _id: id }, { session });
          } else if (!before) await c.insertOne(after, { session });
          else {
            const { _id, ...fields } = after;
            const $unset: Record<string, ''> = {};
            for (const f of Object.keys(before)) if (!(f in after)) $unset[f] = '';
            const update: Update = {};
            if (Object.keys(fields).length) update.$set = fields;
            if (Object.keys($unset).length) update.$unset = $unset;
            if (Object.keys(update).length) await c.updateOne({ _id: id }, update, { session });
          }
        }
      }
    });
    const seq = ++this.seq;
    for (const [collection, byId] of t.writes) {
      for (const [id, { before }] of byId) this.recordChange(seq, collection, id, before);
    }
    for (const key of t.held) {
      if (key.startsWith('i\u0000')) {
        this.keyChanges.set(key, seq);
        this.log.push({ seq, key });
      }
    }
  }

  private recordChange(seq: number, collection: string, id: string, before: Doc | null): void {
    let byId = this.changes.get(collection);
    if (!byId) this.changes.set(collection, (byId = new Map()));
    const list = byId.get(id) ?? [];
    list.push({ seq, before });
    byId.set(id, list);
    this.log.push({ seq, collection, id });
  }

  // ---- outside transactions -----------------------------------------------------------------

  /** A call without a transaction: reads pass through; a write waits for the open transactions holding its documents, then applies and is recorded. */
  private async outside(collection: string, op: StoreOp, args: unknown[]): Promise<unknown> {
    const c = this.inner.collection(collection);
    const call = () => (c[op] as (...a: unknown[]) => Promise<unknown>).apply(c, args);
    if (!isWrite(op)) return call();
    if (op === 'bulkWrite' && (args[0] as BulkOp[]).length !== 1) {
      // an ordered bulk write outside a transaction is its operations one after the other
      const total: BulkResult = { insertedCount: 0, matchedCount: 0, modifiedCount: 0, deletedCount: 0 };
      for (const b of args[0] as BulkOp[]) {
        const part = (await this.outside(collection, 'bulkWrite', [[b], ...args.slice(1)])) as BulkResult;
        total.insertedCount += part.insertedCount;
        total.matchedCount += part.matchedCount;
        total.modifiedCount += part.modifiedCount;
        total.deletedCount += part.deletedCount;
      }
      return total;
    }
    for (;;) {
      const waitFor = await this.locked(async () => {
        const ids = await this.targets(c, op, args);
        for (const id of ids) {
          const holder = this.holders.get(docKey(collection, id));
          if (holder) return holder;
        }
        const pre = ids.length ? await c.find({ _id: { $in: ids } }) : [];
        const result = await call();
        const touched = new Set(ids);
        const upserted = (result as { upsertedId?: string } | null)?.upsertedId ?? (op === 'findOneAndUpdate' ? (result as Doc | null)?._id : undefined);
        if (typeof upserted === 'string') touched.add(upserted);
        const seq = ++this.seq;
        const preById = new Map(pre.map((d) => [d._id, d]));
        for (const id of touched) this.recordChange(seq, collection, id, preById.get(id) ?? null);
        const uniques = this.uniques.get(collection);
        if (uniques?.length) {
          const post = await c.find({ _id: { $in: [...touched] } });
          for (const ix of uniques) {
            for (const d of [...pre, ...post]) {
              const key = indexKey(collection, ix, d);
              if (key !== undefined) {
                this.keyChanges.set(key, seq);
                this.log.push({ seq, key });
              }
            }
          }
        }
        this.prune();
        return { result };
      });
      if ('result' in waitFor) return waitFor.result;
      await waitFor.done;
    }
  }

  /** The `_id`s a write outside a transaction will touch (as the inner store will pick them: read at the same state). */
  private async targets(c: Collection, op: StoreOp, args: unknown[]): Promise<string[]> {
    const ids = async (filter: Filter, one: boolean) =>
      (await c.find(filter, { projection: { _id: 1 }, ...(one ? { limit: 1 } : {}) })).map((d) => d._id);
    switch (op) {
      case 'insertOne':
        return [(args[0] as Doc)._id];
      case 'insertMany':
        return (args[0] as Doc[]).map((d) => d._id);
      case 'updateOne':
      case 'findOneAndUpdate':
      case 'deleteOne':
        return ids(args[0] as Filter, true);
      case 'updateMany':
      case 'deleteMany':
        return ids(args[0] as Filter, false);
      case 'bulkWrite': {
        const [b] = args[0] as BulkOp[];
        if (!b) return [];
        if ('insertOne' in b) return [b.insertOne.document._id];
        if ('updateOne' in b) return ids(b.updateOne.filter, true);
        if ('updateMany' in b) return ids(b.updateMany.filter, false);
        return ids(b.deleteOne.filter, true);
      }
      default:
        return [];
    }
  }
}

const WRITES = new Set<StoreOp>(['insertOne', 'insertMany', 'updateOne', 'updateMany', 'findOneAndUpdate', 'deleteOne', 'deleteMany', 'bulkWrite']);
const isWrite = (op: StoreOp) => WRITES.has(op);

/** The store's own rules (field names, size, `$inc` by a non-number) refuse before sending: such a refusal leaves the transaction going, as `MongoStore`'s does. */
function refusedBeforeSending(e: AppError): boolean {
  return e.code === 'VALIDATION_FAILED' || e.code === 'PAYLOAD_TOO_LARGE';
}
