import {
  MongoBulkWriteError, MongoClientClosedError, MongoError, MongoNetworkError, MongoNotConnectedError,
  MongoOperationTimeoutError, MongoServerError, MongoServerSelectionError, MongoTopologyClosedError,
} from 'mongodb';
import { AppError } from '../../errors/index.js';

/** Server codes meaning "no usable primary right now" (step-down, shutdown, not writable primary) or a time-out. */
const UNAVAILABLE_CODES = new Set([6, 7, 50, 89, 91, 189, 262, 9001, 10107, 11600, 11602, 13435, 13436]);
const DUPLICATE_KEY = 11000;
const WRITE_CONFLICT = 112;

function isUnavailable(e: MongoError): boolean {
  return (
    e instanceof MongoNetworkError ||
    e instanceof MongoServerSelectionError ||
    e instanceof MongoNotConnectedError ||
    e instanceof MongoTopologyClosedError ||
    e instanceof MongoClientClosedError ||
    e instanceof MongoOperationTimeoutError ||
    (typeof e.code === 'number' && UNAVAILABLE_CODES.has(e.code))
  );
}

/** The key fields of a duplicate-key error (its `keyPattern`), or `undefined` for other errors. */
function duplicateFields(e: MongoError): string[] | undefined {
  if (e.code !== DUPLICATE_KEY) return undefined;
  const [writeError] = e instanceof MongoBulkWriteError ? [e.writeErrors].flat() : [];
  const pattern = (e as MongoServerError).keyPattern ?? (writeError?.err as { keyPattern?: object } | undefined)?.keyPattern;
  return Object.keys(pattern ?? {});
}

/**
 * Maps a driver error once (DESIGN §4): network, server selection, closed client, not-primary
 * and time-outs → `STORE_UNAVAILABLE` (503); duplicate key 11000 → `CONFLICT` with
 * `details: {collection, fields}`; a write conflict that survived the driver's retries →
 * `CONFLICT`; any other driver error → `INTERNAL`. Non-driver errors (an `AppError`, or whatever
 * a transaction's `fn` threw) are returned unchanged.
 */
export function mapMongoError(e: unknown, collection?: string): unknown {
  if (AppError.is(e) || !(e instanceof MongoError)) return e;
  if (isUnavailable(e)) return new AppError('STORE_UNAVAILABLE', { cause: e });
  const fields = duplicateFields(e);
  if (fields) {
    return new AppError('CONFLICT', {
      message: `Duplicate key${collection ? ` in ${collection}` : ''} (${fields.join(', ')})`,
      details: { ...(collection ? { collection } : {}), fields },
      cause: e,
    });
  }
  if (e.code === WRITE_CONFLICT || e.hasErrorLabel('TransientTransactionError')) return new AppError('CONFLICT', { cause: e });
  return new AppError('INTERNAL', { cause: e });
}

/** True for errors the driver's `withTransaction` retries; they must reach it unmapped. */
export function isTransientTransactionError(e: unknown): boolean {
  return e instanceof MongoError && (e.hasErrorLabel('TransientTransactionError') || e.hasErrorLabel('UnknownTransactionCommitResult'));
}
