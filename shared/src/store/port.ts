/**
 * The `DocumentStore` port (docs/architecture.md §2): a narrow subset of the MongoDB driver's `Collection` API.
 * All repository and domain code is written once against it; two backends implement it
 * (`MongoStore` with the official driver, `EmbeddedStore` with mingo + a better-sqlite3 journal).
 *
 * Filters, updates and sorts are MongoDB documents. Only this documented operator subset is used
 * (and covered by the store contract suite): filters `$eq $ne $gt $gte $lt $lte $in $nin $all
 * $exists $regex(+$options) $and $or $nor $not $size $elemMatch`; updates `$set $unset $addToSet
 * (with $each) $pull (with $in) $push $inc`.
 *
 * Errors: backends throw `AppError('STORE_UNAVAILABLE')` (503) for connectivity faults and
 * `AppError('CONFLICT')` (409) for duplicate keys or write conflicts that survived retries.
 */

/** A stored document; every document has a string `_id` (UUID for domain documents). */
export interface Doc {
  _id: string;
  [key: string]: unknown;
}

/** A MongoDB filter document (operator subset above). */
export type Filter = Record<string, unknown>;
/** A MongoDB update document (operator subset above). */
export type Update = Record<string, unknown>;
/** Sort spec: field path → 1 (ascending) or -1 (descending). Key order is significant. */
export type Sort = Record<string, 1 | -1>;
/** Inclusion (1) or exclusion (0) projection, as in MongoDB. */
export type Projection = Record<string, 0 | 1>;

/** Opaque transaction handle passed back into collection calls made inside `withTransaction`. */
export interface Session {
  readonly __session: true;
}

/** Passes the transaction handle; required on every call made inside `withTransaction`. */
export interface SessionOption {
  session?: Session;
}

/** Options of `find`: sort, then skip, then limit (counts of documents), then projection. */
export interface FindOptions extends SessionOption {
  sort?: Sort;
  skip?: number;
  limit?: number;
  projection?: Projection;
  /**
   * `majority` (outside a transaction only): read only what a majority of the replica set has,
   * which a failover can never roll back. For reads whose results are published (the feed, the
   * stream, JetStream, webhooks: docs/events.md "What is published is durable"). MongoDB: the
   * read's `readConcern`; the embedded store ignores it (it has one copy, nothing rolls back).
   * Inside a transaction the transaction's own read concern applies (snapshot, committed with
   * majority writes).
   */
  readConcern?: 'majority';
}

/**
 * Options of a single write (`insertOne`, `updateOne`). `awaitDurable: false` (outside a
 * transaction only) lets the call resolve once the write is applied and visible, before it is
 * durable: for a write whose loss in a crash is harmless and that a later durable write of the
 * same unit covers, such as the Idempotency-Key claim (docs/concurrency.md). The
 * embedded store then does not wait for its journal sync (the journal syncs in order, so the
 * next acknowledged write makes it durable too); MongoDB ignores it (the write concern stays).
 * Default: durable before the promise resolves (docs/store.md "Durability").
 */
export interface WriteOptions extends SessionOption {
  awaitDurable?: boolean;
}

/** Options of `updateOne`; `upsert` inserts when nothing matches. */
export interface UpdateOptions extends WriteOptions {
  upsert?: boolean;
}

/** Options of `findOneAndUpdate`. */
export interface FindOneAndUpdateOptions extends UpdateOptions {
  /** Which version to return; default `after`. */
  returnDocument?: 'before' | 'after';
  projection?: Projection;
  /** Which match is updated when several match: the first in this order (MongoDB's `sort`); default: any one. */
  sort?: Sort;
}

/** Outcome of an update, as the driver reports it. */
export interface UpdateResult {
  matchedCount: number;
  modifiedCount: number;
  upsertedId?: string;
}

/** One operation of a bulk write (a subset of the driver's `AnyBulkWriteOperation`). */
export type BulkOp<T extends Doc = Doc> =
  | { insertOne: { document: T } }
  | { updateOne: { filter: Filter; update: Update; upsert?: boolean } }
  | { updateMany: { filter: Filter; update: Update } }
  | { deleteOne: { filter: Filter } };

/** Totals of a bulk write. */
export interface BulkResult {
  insertedCount: number;
  matchedCount: number;
  modifiedCount: number;
  deletedCount: number;
}

/**
 * One collection. Documents go in and come out as plain JSON-compatible objects. Documents passed
 * in are copied. Documents handed out are read-only: MongoDB's are copies, the embedded store's
 * are its stored documents, deeply frozen (changing one throws a TypeError); copy before changing.
 */
export interface Collection<T extends Doc = Doc> {
  readonly name: string;
  find(filter: Filter, opts?: FindOptions): Promise<T[]>;
  findOne(filter: Filter, opts?: Omit<FindOptions, 'skip' | 'limit'>): Promise<T | null>;
  countDocuments(filter: Filter, opts?: SessionOption): Promise<number>;
  insertOne(doc: T, opts?: WriteOptions): Promise<void>;
  insertMany(docs: T[], opts?: SessionOption): Promise<void>;
  updateOne(filter: Filter, update: Update, opts?: UpdateOptions): Promise<UpdateResult>;
  updateMany(filter: Filter, update: Update, opts?: SessionOption): Promise<UpdateResult>;
  findOneAndUpdate(filter: Filter, update: Update, opts?: FindOneAndUpdateOptions): Promise<T | null>;
  deleteOne(filter: Filter, opts?: SessionOption): Promise<{ deletedCount: number }>;
  deleteMany(filter: Filter, opts?: SessionOption): Promise<{ deletedCount: number }>;
  /** Ordered bulk write; in a transaction it is part of it, else each op is applied in order. */
  bulkWrite(ops: BulkOp<T>[], opts?: SessionOption): Promise<BulkResult>;
}

/** An index to ensure at start-up. `keys` as in MongoDB (`{'metadata.$**': 1}` for wildcard). */
export interface IndexSpec {
  collection: string;
  keys: Record<string, 1 | -1>;
  unique?: boolean;
  name?: string;
  /**
   * A TTL index (one ascending key on a field holding ISO 8601 UTC date strings): a document is
   * removed some time after `field + expireAfterSeconds`. MongoDB: a TTL index (the backend keeps
   * the field as a BSON date and hands it out as the ISO string); embedded: an expiry sweep.
   * Readers that need an exact expiry compare the field themselves.
   */
  expireAfterSeconds?: number;
  /**
   * A single-field index on a metadata path that only the embedded store builds (a custom field's
   * key, docs/custom-fields.md "Indexes"): on MongoDB the wildcard index `metadata.$**` serves the
   * same equality, range and sort on any metadata path, so `MongoStore` skips it (an index per
   * defined key would run into MongoDB's 64 indexes per collection).
   */
  embeddedOnly?: boolean;
  /**
   * A sparse index: a document holding none of the key's fields is left out of it, so a `unique`
   * sparse index allows any number of documents without the field (MongoDB's sparse index; the
   * embedded store leaves such documents out of the uniqueness check).
   */
  sparse?: boolean;
}

/**
 * A transaction's deadline in ms, everything included: waiting for the embedded store's
 * transaction lock, every attempt of `fn` and the retries of write conflicts, the commit. Past it
 * `withTransaction` gives up with nothing written: `CONFLICT` (409) when it kept conflicting,
 * `STORE_UNAVAILABLE` (503) otherwise. Shorter than every write op's bus timeout (5 s, the
 * shortest; `shared/src/contracts`), which is shorter than the Idempotency-Key lease (60 s,
 * `IDEMPOTENCY_LEASE_MS`): a client that got its 504 finds the write given up, not still running,
 * and a retry with the same key never runs beside a first attempt that is still going
 * (docs/concurrency.md "Deadlines").
 */
export const TRANSACTION_DEADLINE_MS = 4_000;

/**
 * How long one read (`find`, `findOne`, `countDocuments`) may run, in ms: MongoDB gets it as
 * `maxTimeMS`, the embedded store stops a scan past it; either way the call rejects with
 * `QUERY_TIMEOUT` (503) instead of holding a worker (docs/query-language.md "Safety"). Shorter
 * than every read op's bus timeout (5 s, `shared/src/contracts`), so the client hears why.
 */
export const QUERY_TIME_LIMIT_MS = 2_000;

/** Counts of round trips made to the backend, for benchmarks and tests. */
export interface StoreStats {
  roundTrips: number;
}

/** The store: collections by name, transactions, indexes, readiness (see the file comment for errors). */
export interface DocumentStore extends AsyncDisposable {
  collection<T extends Doc = Doc>(name: string): Collection<T>;
  /**
   * Runs `fn` in one all-or-nothing transaction; collection calls inside must pass `{session}`.
   * Retries `fn` on transient write conflicts (as the driver's `withTransaction` does) until
   * {@link TRANSACTION_DEADLINE_MS}; a thrown error aborts and is rethrown with nothing written.
   */
  withTransaction<R>(fn: (session: Session) => Promise<R>): Promise<R>;
  ensureIndexes(specs: IndexSpec[]): Promise<void>;
  /** Round trip to the backend (readiness); rejects with `STORE_UNAVAILABLE`. */
  ping(): Promise<void>;
  readonly stats: StoreStats;
  close(): Promise<void>;
}
