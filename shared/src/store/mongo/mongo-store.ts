import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { MongoClient, MongoError, MongoServerError, type AnyBulkWriteOperation, type ClientSession, type Collection as DriverCollection, type Db } from 'mongodb';
import type { Logger } from 'pino';
import { AppError } from '../../errors/index.js';
import type {
  BulkOp, BulkResult, Collection, Doc, DocumentStore, Filter, FindOneAndUpdateOptions, FindOptions, IndexSpec,
  Session, SessionOption, StoreStats, Update, UpdateOptions, UpdateResult, WriteOptions,
} from '../port.js';
import { QUERY_TIME_LIMIT_MS, TRANSACTION_DEADLINE_MS } from '../port.js';
import { readTimeLeft } from '../../util/request-scope.js';
import { checkDocument, checkUpdate, queryTimeout } from '../rules.js';
import { SCHEMA_INDEXES, ttlFieldOfIndex } from '../schema.js';
import { isTransientTransactionError, mapMongoError } from './errors.js';
import { TtlDates } from './ttl-dates.js';

/** Options of {@link MongoStore.connect}. */
export interface MongoStoreOptions {
  url: string;
  db: string;
  log?: Logger;
  /** How long an operation waits for a usable server before `STORE_UNAVAILABLE`; default 5000 ms. */
  serverSelectionTimeoutMS?: number;
  /** A transaction's deadline, all attempts included (ms); default {@link TRANSACTION_DEADLINE_MS}. */
  transactionDeadlineMs?: number;
}

/**
 * The part of a transaction's deadline kept for its commit (ms), and the commit's
 * `maxCommitTimeMS`: the work (every attempt of `fn`) must be done by deadline − this, so a commit
 * started then still ends within the deadline, retries included (docs/concurrency.md
 * "Deadlines"). A quarter of the deadline when that is shorter (a store opened with a short one).
 */
export const COMMIT_BUDGET_MS = 1_000;

/** Thrown inside {@link within} when `ms` passed first. */
const TIMED_OUT = Symbol('timed out');

/** `p`, or a rejection with {@link TIMED_OUT} once `ms` have passed (the timer is cleared either way). */
async function within<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([p, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(TIMED_OUT), Math.max(0, ms))))]);
  } finally {
    clearTimeout(timer);
  }
}

class MongoSession implements Session {
  readonly __session = true as const;
  constructor(
    readonly client: ClientSession,
    /** `performance.now()` past which no operation of the transaction starts. */
    readonly deadline: number,
  ) {}
}

/** The error of a commit that did not finish within the transaction's deadline. */
function pastDeadline(ms: number, cause?: unknown): AppError {
  return new AppError('STORE_UNAVAILABLE', {
    message: `The store did not confirm the commit within the transaction's deadline (${ms} ms)`,
    details: { deadline_ms: ms },
    ...(cause === undefined ? {} : { cause }),
  });
}

/** Backoff before the transaction's attempt `n` (n ≥ 1), as the driver's: jitter × min(5 ms × 1.5ⁿ, 500 ms). */
const backoffMs = (n: number) => Math.random() * Math.min(5 * 1.5 ** n, 500);

/** Server code `MaxTimeMSExpired` (the commit's `maxCommitTimeMS` ran out). */
const MAX_TIME_EXPIRED = 50;
/** IndexOptionsConflict, IndexKeySpecsConflict: an index of the same keys or name exists with other options. */
const INDEX_CONFLICT_CODES = new Set([85, 86]);

const hasLabel = (e: unknown, label: string) => e instanceof MongoError && e.hasErrorLabel(label);

function driverSession(session: Session | undefined): { session?: ClientSession } {
  if (!session) return {};
  if (session instanceof MongoSession) return { session: session.client };
  throw new AppError('INTERNAL', { message: 'The session is not a MongoStore transaction' });
}

/** The driver's `readConcern` of a read asking for one (outside a transaction only: inside, the transaction's applies). */
function readConcernOf(opts: Pick<FindOptions, 'readConcern' | 'session'>): { level: 'majority' } | undefined {
  return opts.readConcern === 'majority' && !opts.session ? { level: 'majority' } : undefined;
}

/** Drops `undefined` option values (the driver treats a present key as set). */
function defined<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

/** True when an upsert with this filter takes its `_id` from the filter (equality on `_id`). */
function filterPinsId(filter: Filter): boolean {
  const id = filter._id;
  if (typeof id === 'string') return true;
  if (typeof id === 'object' && id !== null && '$eq' in id) return true;
  return Array.isArray(filter.$and) && filter.$and.some((f) => filterPinsId(f as Filter));
}

/**
 * The update an upsert sends: a string UUID `_id` for the inserted document (via `$setOnInsert`)
 * unless the filter pins `_id`, so `_id` is a string on both backends (never an ObjectId).
 */
function withStringId(filter: Filter, update: Update, upsert: boolean | undefined): Update {
  if (!upsert || filterPinsId(filter)) return update;
  const setOnInsert = (update.$setOnInsert ?? {}) as Record<string, unknown>;
  if ('_id' in setOnInsert) return update;
  return { ...update, $setOnInsert: { ...setOnInsert, _id: randomUUID() } };
}

function toUpdateResult(r: { matchedCount: number; modifiedCount: number; upsertedId: unknown }): UpdateResult {
  const out: UpdateResult = { matchedCount: r.matchedCount, modifiedCount: r.modifiedCount };
  if (r.upsertedId !== null && r.upsertedId !== undefined) out.upsertedId = String(r.upsertedId);
  return out;
}

/**
 * One MongoDB collection behind the port (exported for the unit test of the options it sends). Every call is one counted round trip; driver errors
 * are mapped once by {@link mapMongoError}, except transient transaction errors inside a session,
 * which reach the driver's `withTransaction` unmapped so it can retry.
 */
export class MongoCollection<T extends Doc> implements Collection<T> {
  constructor(
    private readonly coll: DriverCollection<Doc>,
    /** Counts a round trip; throws when the store is closed. */
    private readonly enter: () => void,
    /** The collection's TTL field kept as a BSON date (see {@link TtlDates}), if any (looked up per call: indexes may be ensured later). */
    private readonly ttlOf: () => TtlDates | undefined = () => undefined,
    /** `maxTimeMS` of every read (ms). */
    private readonly readLimitMs = QUERY_TIME_LIMIT_MS,
  ) {}

  private get ttl(): TtlDates | undefined {
    return this.ttlOf();
  }

  private f(filter: Filter): Filter {
    return this.ttl ? this.ttl.filter(filter) : filter;
  }

  private u(update: Update): Update {
    return this.ttl ? this.ttl.update(update) : update;
  }

  private d(doc: T): T {
    return this.ttl ? this.ttl.doc(doc) : { ...doc };
  }

  private out<R>(r: R): R {
    if (!this.ttl) return r;
    if (Array.isArray(r)) for (const d of r) this.ttl.out(d);
    else this.ttl.out(r);
    return r;
  }

  get name(): string {
    return this.coll.collectionName;
  }

  /** Carries `maxTimeMS` ({@link QUERY_TIME_LIMIT_MS}); past it, `QUERY_TIMEOUT` (503). */
  find(filter: Filter, opts: FindOptions = {}): Promise<T[]> {
    const { session, sort, skip, limit, projection } = opts;
    const readConcern = readConcernOf(opts);
    return this.read(session, async (s) => this.out(await this.coll.find(this.f(filter), defined({ ...s, sort, skip, limit, projection, readConcern, maxTimeMS: this.maxTimeMS(session) })).toArray())) as Promise<T[]>;
  }

  /** Carries `maxTimeMS` as {@link find} does. */
  findOne(filter: Filter, opts: Omit<FindOptions, 'skip' | 'limit'> = {}): Promise<T | null> {
    const { session, sort, projection } = opts;
    const readConcern = readConcernOf(opts);
    return this.read(session, async (s) => this.out(await this.coll.findOne(this.f(filter), defined({ ...s, sort, projection, readConcern, maxTimeMS: this.maxTimeMS(session) })))) as Promise<T | null>;
  }

  /** Carries `maxTimeMS` as {@link find} does. */
  countDocuments(filter: Filter, opts: SessionOption = {}): Promise<number> {
    return this.read(opts.session, (s) => this.coll.countDocuments(this.f(filter), { ...s, maxTimeMS: this.maxTimeMS(opts.session) }));
  }

  /**
   * A read's `maxTimeMS`: the read time limit, outside a transaction (which has its own deadline)
   * cut to what is left of the request's whole time (`util/request-scope.ts`), at least 1 ms
   * (a request past its deadline: its next scan stops at once, a point read still answers).
   */
  private maxTimeMS(session: Session | undefined): number {
    return session ? this.readLimitMs : Math.max(1, Math.ceil(readTimeLeft(this.readLimitMs)));
  }

  /** {@link call} of a read: the server stopping it at `maxTimeMS` (MaxTimeMSExpired) is `QUERY_TIMEOUT`. */
  private async read<R>(session: Session | undefined, fn: (s: { session?: ClientSession }) => Promise<R>): Promise<R> {
    try {
      return await this.call(session, fn);
    } catch (e) {
      const cause = AppError.is(e) ? e.cause : e;
      if (cause instanceof MongoError && cause.code === MAX_TIME_EXPIRED) throw queryTimeout(this.readLimitMs, cause);
      throw e;
    }
  }

  /** `opts.awaitDurable` is ignored here (and in `updateOne`): the write concern stays (port `WriteOptions`). */
  /**
   * The store's rules (`../rules.ts`) are checked here before sending, as the embedded store does:
   * the driver refuses a NUL byte only as it serializes (naming the key, not its path), and MongoDB
   * would take a `$`-prefixed path in an upsert; so both backends refuse the same writes the same way.
   */
  async insertOne(doc: T, opts: WriteOptions = {}): Promise<void> {
    await this.call(opts.session, (s) => {
      checkDocument(this.name, doc);
      return this.coll.insertOne(this.d(doc), s);
    });
  }

  async insertMany(docs: T[], opts: SessionOption = {}): Promise<void> {
    if (docs.length === 0) return this.call(opts.session, async () => undefined);
    await this.call(opts.session, async (s) => {
      // ordered, as the embedded store: the documents before a refused one are inserted
      const at = docs.findIndex((d) => !passes(() => checkDocument(this.name, d)));
      if (at < 0) return this.coll.insertMany(docs.map((d) => this.d(d)), { ...s, ordered: true });
      if (at > 0) await this.coll.insertMany(docs.slice(0, at).map((d) => this.d(d)), { ...s, ordered: true });
      return checkDocument(this.name, docs[at]!);
    });
  }

  async updateOne(filter: Filter, update: Update, opts: UpdateOptions = {}): Promise<UpdateResult> {
    const { session, upsert } = opts;
    const r = await this.call(session, (s) => {
      checkUpdate(this.name, update);
      return this.coll.updateOne(this.f(filter), withStringId(filter, this.u(update), upsert), defined({ ...s, upsert }));
    }, update);
    return toUpdateResult(r);
  }

  async updateMany(filter: Filter, update: Update, opts: SessionOption = {}): Promise<UpdateResult> {
    return toUpdateResult(await this.call(opts.session, (s) => {
      checkUpdate(this.name, update);
      return this.coll.updateMany(this.f(filter), this.u(update), s);
    }, update));
  }

  findOneAndUpdate(filter: Filter, update: Update, opts: FindOneAndUpdateOptions = {}): Promise<T | null> {
    const { session, upsert, projection, sort, returnDocument = 'after' } = opts;
    return this.call(session, async (s) => {
      checkUpdate(this.name, update);
      return this.out(await this.coll.findOneAndUpdate(
        this.f(filter),
        withStringId(filter, this.u(update), upsert),
        defined({ ...s, upsert, projection, sort, returnDocument, includeResultMetadata: false as const }),
      ));
    }, update) as Promise<T | null>;
  }

  deleteOne(filter: Filter, opts: SessionOption = {}): Promise<{ deletedCount: number }> {
    return this.call(opts.session, async (s) => ({ deletedCount: (await this.coll.deleteOne(this.f(filter), s)).deletedCount }));
  }

  deleteMany(filter: Filter, opts: SessionOption = {}): Promise<{ deletedCount: number }> {
    return this.call(opts.session, async (s) => ({ deletedCount: (await this.coll.deleteMany(this.f(filter), s)).deletedCount }));
  }

  bulkWrite(ops: BulkOp<T>[], opts: SessionOption = {}): Promise<BulkResult> {
    // the rules (see insertOne) for each op; one refused stops the ordered write there, as on the embedded store
    const refusedAt = ops.findIndex((op) => !passes(() => checkOp(this.name, op)));
    if (refusedAt >= 0) {
      return this.call(opts.session, async () => {
        if (refusedAt > 0) await this.bulkWrite(ops.slice(0, refusedAt), opts);
        checkOp(this.name, ops[refusedAt]!);
        return { insertedCount: 0, matchedCount: 0, modifiedCount: 0, deletedCount: 0 };
      });
    }
    const driverOps = ops.map((op): AnyBulkWriteOperation<Doc> => {
      if ('insertOne' in op) return { insertOne: { document: this.d(op.insertOne.document) } };
      if ('updateMany' in op) return { updateMany: { filter: this.f(op.updateMany.filter), update: this.u(op.updateMany.update) } };
      if ('deleteOne' in op) return { deleteOne: { filter: this.f(op.deleteOne.filter) } };
      const { filter, update, upsert } = op.updateOne;
      return { updateOne: defined({ filter: this.f(filter), update: withStringId(filter, this.u(update), upsert), upsert }) };
    });
    return this.call(opts.session, async (s) => {
      if (driverOps.length === 0) return { insertedCount: 0, matchedCount: 0, modifiedCount: 0, deletedCount: 0 };
      const r = await this.coll.bulkWrite(driverOps, { ...s, ordered: true });
      return { insertedCount: r.insertedCount, matchedCount: r.matchedCount, modifiedCount: r.modifiedCount, deletedCount: r.deletedCount };
    });
  }

  /** One round trip: `fn` with the driver session; errors mapped ({@link mapMongoError}; `update`: the call's update document). */
  private async call<R>(session: Session | undefined, fn: (s: { session?: ClientSession }) => Promise<R>, update?: Update): Promise<R> {
    this.enter();
    // no operation of a transaction starts past its deadline (the transaction then aborts)
    if (session instanceof MongoSession && performance.now() >= session.deadline) throw new AppError('STORE_UNAVAILABLE', { message: 'The transaction ran past its deadline; nothing was written' });
    try {
      return await fn(driverSession(session));
    } catch (e) {
      if (session && isTransientTransactionError(e)) throw e;
      throw mapMongoError(e, this.name, update);
    }
  }
}

/** True when `check` does not throw. */
function passes(check: () => unknown): boolean {
  try {
    check();
    return true;
  } catch {
    return false;
  }
}

/** The store's rules for one bulk operation (an insert's document, an update's paths and values). */
function checkOp(collection: string, op: BulkOp): void {
  if ('insertOne' in op) checkDocument(collection, op.insertOne.document);
  else if ('updateOne' in op) checkUpdate(collection, op.updateOne.update);
  else if ('updateMany' in op) checkUpdate(collection, op.updateMany.update);
}

/**
 * Thrown by {@link MongoStore.connect} when the server at `MONGO_URL` is a standalone `mongod`
 * (its `hello` names no replica set): MongoDB runs transactions only on a replica set or a sharded
 * cluster, and every write of this service is a transaction. Entry points turn it into a refusal
 * to start (one line naming `MONGO_URL`).
 */
export class NotAReplicaSetError extends Error {
  override readonly name = 'NotAReplicaSetError';
  constructor() {
    super('MONGO_URL points at a standalone MongoDB server; transactions need a replica set (start mongod with --replSet and run rs.initiate(), or use a replica-set URL)');
  }
}

/**
 * The MongoDB `DocumentStore` (docs/architecture.md §2) on the official driver: sessions passed through,
 * real transactions via `session.withTransaction` (snapshot reads, majority writes, retried by the
 * driver on transient conflicts), `serverSelectionTimeoutMS` 5 s so a down database is a 503,
 * never a hang. Document `_id`s are strings. After {@link close}, every call rejects with
 * `STORE_UNAVAILABLE` (the driver would otherwise reconnect). Errors: see {@link mapMongoError}.
 */
export class MongoStore implements DocumentStore {
  readonly stats: StoreStats = { roundTrips: 0 };
  private closed = false;
  /**
   * TTL fields by collection (kept as BSON dates, see {@link TtlDates}): those of the store's schema
   * from the start, whichever service writes them (docs/store.md "One definition per collection"),
   * and those of any other TTL index ensured.
   */
  private readonly ttl = new Map<string, TtlDates>();

  private constructor(
    private readonly client: MongoClient,
    private readonly db: Db,
    private readonly log: Logger | undefined,
    private readonly deadlineMs = TRANSACTION_DEADLINE_MS,
  ) {
    for (const spec of SCHEMA_INDEXES) this.noteTtl(spec);
  }

  /**
   * A store over a client the caller made (and connected, or not: the driver connects on first
   * use), on database `opts.db`; closing the store closes the client. {@link connect} is the usual way.
   */
  static over(client: MongoClient, opts: Omit<MongoStoreOptions, 'url' | 'serverSelectionTimeoutMS'>): MongoStore {
    return new MongoStore(client, client.db(opts.db), opts.log, opts.transactionDeadlineMs ?? TRANSACTION_DEADLINE_MS);
  }

  /** Keeps the field of a TTL index as a BSON date from now on. */
  private noteTtl(spec: IndexSpec): void {
    const field = ttlFieldOfIndex(spec);
    if (field !== undefined) this.ttl.set(spec.collection, new TtlDates(field));
  }

  /** Connects (rejects with `STORE_UNAVAILABLE` when no server answers within the selection timeout). */
  static async connect(opts: MongoStoreOptions): Promise<MongoStore> {
    const client = new MongoClient(opts.url, {
      serverSelectionTimeoutMS: opts.serverSelectionTimeoutMS ?? 5000,
      ignoreUndefined: true,
      appName: 'board-task-service',
    });
    try {
      await client.connect();
    } catch (e) {
      await client.close().catch(() => undefined);
      throw mapMongoError(e);
    }
    // transactions need a replica set (or a sharded cluster): a standalone server refuses every
    // one of them, so the process would answer every write 500 while ready
    let hello: { setName?: unknown; msg?: unknown };
    try {
      hello = await client.db('admin').command({ hello: 1 });
    } catch (e) {
      await client.close().catch(() => undefined);
      throw mapMongoError(e);
    }
    if (typeof hello.setName !== 'string' && hello.msg !== 'isdbgrid') {
      await client.close().catch(() => undefined);
      throw new NotAReplicaSetError();
    }
    opts.log?.info({ db: opts.db, replicaSet: hello.setName }, 'mongo store connected');
    return MongoStore.over(client, opts);
  }

  collection<T extends Doc = Doc>(name: string): Collection<T> {
    return new MongoCollection<T>(this.db.collection<Doc>(name), () => {
      this.assertOpen();
      this.stats.roundTrips++;
    }, () => this.ttl.get(name));
  }

  /**
   * Runs `fn` in a transaction (snapshot reads, majority writes) and retries it as the driver's
   * `withTransaction` does (a `TransientTransactionError` reruns `fn` after a jittered backoff of
   * 5 ms × 1.5ⁿ up to 500 ms; an `UnknownTransactionCommitResult` retries the commit, with the same
   * backoff), but within the transaction's deadline ({@link TRANSACTION_DEADLINE_MS},
   * docs/concurrency.md "Deadlines") instead of the driver's fixed 120 s. A fixed part of it,
   * {@link COMMIT_BUDGET_MS}, is kept for the commit: no operation of `fn` starts past
   * deadline − budget, the commit's `maxCommitTimeMS` is the budget, and the commit with its
   * retries is given up at the deadline even when the driver is still waiting for a server. Past
   * it a write conflict ends as `CONFLICT` (409) and anything else as `STORE_UNAVAILABLE` (503),
   * before the bus timeout of the write. A commit whose outcome is unknown at the deadline (503)
   * may still be applied by the server: a 503 or 504 of a write may have committed, which the
   * Idempotency-Key of a retry covers.
   */
  async withTransaction<R>(fn: (session: Session) => Promise<R>): Promise<R> {
    this.assertOpen();
    const deadline = performance.now() + this.deadlineMs;
    const budget = Math.min(COMMIT_BUDGET_MS, Math.floor(this.deadlineMs / 4));
    const workUntil = deadline - budget;
    const left = () => deadline - performance.now();
    const session = this.client.startSession();
    // a commit still in flight at the deadline: the session ends when it settles
    let inFlight: Promise<unknown> | undefined;
    // waits before the next try; false when `until` would pass first
    const backoff = async (attempt: number, until: number): Promise<boolean> => {
      const wait = backoffMs(attempt + 1);
      if (until - performance.now() <= wait) return false;
      await sleep(wait);
      return true;
    };
    try {
      for (let attempt = 0; ; attempt++) {
        session.startTransaction({ readConcern: { level: 'snapshot' }, writeConcern: { w: 'majority' }, maxCommitTimeMS: budget });
        let result: R;
        try {
          result = await fn(new MongoSession(session, workUntil));
        } catch (e) {
          if (session.inTransaction()) await session.abortTransaction().catch(() => undefined);
          if (hasLabel(e, 'TransientTransactionError') && (await backoff(attempt, workUntil))) continue;
          throw e;
        }
        let retry = false;
        for (let commits = 0; !retry; commits++) {
          this.stats.roundTrips++;
          const commit = session.commitTransaction();
          try {
            await within(commit, left());
            return result;
          } catch (e) {
            if (e === TIMED_OUT) {
              inFlight = commit.catch(() => undefined);
              throw pastDeadline(this.deadlineMs);
            }
            const timedOut = e instanceof MongoError && e.code === MAX_TIME_EXPIRED;
            if (hasLabel(e, 'UnknownTransactionCommitResult') && !timedOut && (await backoff(commits, deadline))) continue;
            if (hasLabel(e, 'TransientTransactionError') && (await backoff(attempt, workUntil))) retry = true;
            else if (timedOut || hasLabel(e, 'UnknownTransactionCommitResult')) throw pastDeadline(this.deadlineMs, e);
            else throw e;
          }
        }
      }
    } catch (e) {
      this.log?.debug({ err: e }, 'mongo store: transaction failed');
      throw mapMongoError(e);
    } finally {
      const end = () => session.endSession().catch(() => undefined);
      if (inFlight) void inFlight.then(end);
      else await end();
    }
  }

  /**
   * `createIndex` per spec (wildcard `metadata.$**` supported by the server); a spec with
   * `expireAfterSeconds` is a TTL index, and its field is kept as a BSON date from then on.
   */
  async ensureIndexes(specs: IndexSpec[]): Promise<void> {
    this.assertOpen();
    try {
      for (const spec of specs) {
        if (spec.embeddedOnly) continue; // served by the wildcard index `metadata.$**`
        this.noteTtl(spec);
        const { expireAfterSeconds, sparse } = spec;
        const coll = this.db.collection(spec.collection);
        const options = defined({ unique: spec.unique, name: spec.name, expireAfterSeconds, sparse });
        try {
          await coll.createIndex(spec.keys, options);
        } catch (e) {
          // an index of the same keys or name with other options (an index made unique, sparse):
          // the declared one replaces it
          if (!(e instanceof MongoServerError && INDEX_CONFLICT_CODES.has(e.code as number))) throw e;
          const keyText = JSON.stringify(spec.keys);
          for (const old of await coll.indexes()) {
            if (old.name !== '_id_' && (old.name === spec.name || JSON.stringify(old.key) === keyText)) await coll.dropIndex(old.name!);
          }
          await coll.createIndex(spec.keys, options);
        }
      }
    } catch (e) {
      throw mapMongoError(e);
    }
  }

  async ping(): Promise<void> {
    this.assertOpen();
    try {
      await this.db.command({ ping: 1 });
    } catch (e) {
      throw mapMongoError(e);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.client.close();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  private assertOpen(): void {
    if (this.closed) throw new AppError('STORE_UNAVAILABLE', { message: 'The Mongo store is closed' });
  }
}
