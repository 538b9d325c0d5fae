import {
  BSON, MongoBulkWriteError, MongoClientClosedError, MongoError, MongoInvalidArgumentError, MongoNetworkError,
  MongoNotConnectedError, MongoOperationTimeoutError, MongoServerError, MongoServerSelectionError, MongoTopologyClosedError,
} from 'mongodb';
import { AppError } from '../../errors/index.js';
import type { Update } from '../port.js';
import { badFieldName, documentTooLarge, notIncrementable } from '../rules.js';

/** Server codes meaning "no usable primary right now" (step-down, shutdown, not writable primary) or a time-out. */
const UNAVAILABLE_CODES = new Set([6, 7, 50, 89, 91, 189, 262, 9001, 10107, 11600, 11602, 13435, 13436]);
const DUPLICATE_KEY = 11000;
const WRITE_CONFLICT = 112;
/** `$inc` of a non-number (or by one), and other operators meeting a value of the wrong type. */
const TYPE_MISMATCH = 14;
/** A `$`-prefixed field name where the server refuses one (an update of an existing document). */
const DOLLAR_PREFIXED_FIELD_NAME = 52;
/** A document over 16 MiB: BSONObjectTooLarge, and "Resulting document after update is larger than …". */
const TOO_LARGE_CODES = new Set([10334, 17419]);
/** BadValue: also what an insert of a document just over the limit answers ("object to insert too large"). */
const BAD_VALUE = 2;

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

/** True for an error of the BSON serializer (a plain boolean: BSONError adds nothing to Error's shape to narrow by). */
const isBsonError = (e: unknown): boolean => BSON.BSONError.isBSONError(e);

/** The `$inc` path a TypeMismatch names (its message quotes the field's last segment), else the first. */
function incrementedPath(message: string, update: Update | undefined): string {
  const paths = Object.keys((update?.$inc as Record<string, unknown> | undefined) ?? {});
  const named = /field '([^']*)'/.exec(message)?.[1];
  return paths.find((p) => named !== undefined && (p === named || p.endsWith(`.${named}`))) ?? paths[0] ?? named ?? '';
}

/**
 * What the store's rules (`../rules.ts`) make of a driver or server refusal of the document, or
 * undefined: a key with a NUL byte (the BSON serializer refuses it before sending) or a `$`-prefixed
 * field name (code 52) → `VALIDATION_FAILED`; TypeMismatch (14) → `VALIDATION_FAILED` naming the
 * `$inc` path; a document over 16 MiB (10334, 17419, "object to insert too large", the driver's
 * own size check) → `PAYLOAD_TOO_LARGE`.
 */
function refusedDocument(e: Error, collection: string, update: Update | undefined): AppError | undefined {
  const message = e.message;
  if (isBsonError(e)) {
    const key = /^key (.*) must not contain null bytes$/s.exec(message)?.[1];
    if (key !== undefined) return withCause(badFieldName(collection, key, 'nul'), e);
    const dollar = /^key (.*) must not start with '\$'$/s.exec(message)?.[1];
    if (dollar !== undefined) return withCause(badFieldName(collection, dollar, 'dollar'), e);
    return undefined;
  }
  if (e instanceof MongoInvalidArgumentError && /larger than the maximum size/.test(message)) return withCause(documentTooLarge(collection), e);
  if (!(e instanceof MongoError)) return undefined;
  if (e.code === TYPE_MISMATCH) return withCause(notIncrementable(collection, incrementedPath(message, update), 'a value of another type'), e);
  if (e.code === DOLLAR_PREFIXED_FIELD_NAME) {
    const field = /in '([^']*)'/.exec(message)?.[1] ?? /field '([^']*)'/.exec(message)?.[1] ?? '';
    return withCause(badFieldName(collection, field, 'dollar'), e);
  }
  if ((typeof e.code === 'number' && TOO_LARGE_CODES.has(e.code)) || (e.code === BAD_VALUE && /too large/.test(message))) {
    return withCause(documentTooLarge(collection), e);
  }
  return undefined;
}

/** `err` with `cause` set (the driver error, for the log). */
function withCause(err: AppError, cause: Error): AppError {
  return new AppError(err.code, {
    message: err.message,
    ...(err.details ? { details: err.details } : {}),
    ...(err.validationErrors ? { validationErrors: err.validationErrors } : {}),
    cause,
  });
}

/**
 * Maps a driver error once (docs/architecture.md §4): network, server selection, closed client, not-primary
 * and time-outs → `STORE_UNAVAILABLE` (503); duplicate key 11000 → `CONFLICT` with
 * `details: {collection, fields}`; a write conflict that survived the driver's retries →
 * `CONFLICT`; a refused document (the store's rules, `../rules.ts`: a NUL byte or a leading `$` in
 * a field name, an `$inc` of a non-number, over 16 MiB) → `VALIDATION_FAILED` (400) or
 * `PAYLOAD_TOO_LARGE` (413); any other driver error → `INTERNAL`. `update`: the update document
 * of the call, for the field a TypeMismatch names. Non-driver errors (an `AppError`, or whatever a
 * transaction's `fn` threw) are returned unchanged.
 */
export function mapMongoError(e: unknown, collection?: string, update?: Update): unknown {
  if (AppError.is(e) || !(e instanceof Error)) return e;
  const refused = refusedDocument(e, collection ?? '', update);
  if (refused) return refused;
  if (!(e instanceof MongoError)) return e;
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
