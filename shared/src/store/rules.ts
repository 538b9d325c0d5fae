/**
 * What a stored document may hold (docs/architecture.md §2; docs/store.md "What the store refuses"): the rules
 * MongoDB enforces on a write, checked the same way by both backends so the embedded stand-in
 * refuses what MongoDB refuses, with the same error:
 *
 * - a field name (at any depth, in a document or in an update's paths and values) holding a NUL
 *   byte: BSON cannot encode it (the driver refuses it as it serializes);
 * - an update path whose first segment starts with `$` (`{$set: {$x: 1}}`): MongoDB refuses a
 *   top-level `$`-prefixed field name in an update (DollarPrefixedFieldName); refused here on an
 *   upsert too. A `$`-prefixed name inside a document or a sub-document value is stored, as
 *   MongoDB ≥ 5.0 stores it ("Field Names with Periods and Dollar Signs");
 * - `$inc` of a value that is not a number, or by a non-number (MongoDB: TypeMismatch, code 14);
 * - a document over {@link MAX_DOCUMENT_BYTES} of BSON (MongoDB: BSONObjectTooLarge).
 *
 * Field-name and `$inc` faults are a 400 `VALIDATION_FAILED` naming the stored field (a JSON
 * pointer of the stored path, metadata keys escaped); an oversized document is a 413
 * `PAYLOAD_TOO_LARGE`. Nothing is written in either case. The API validates what a client sends
 * before it reaches the store (metadata keys, docs/tasks.md); these are the store's own guards.
 *
 * The checks look only at what a write adds: an insert's document, an update's paths and values.
 */
import { AppError } from '../errors/index.js';
import type { Update } from './port.js';

/** Largest BSON document MongoDB stores, in bytes (16 MiB; MongoDB "Limits and Thresholds"). */
export const MAX_DOCUMENT_BYTES = 16 * 1024 * 1024;

const INT32_MIN = -0x80000000;
const INT32_MAX = 0x7fffffff;

/** A JSON pointer of a dotted stored path (`metadata.a%2Eb` → `/metadata/a%2Eb`). */
function pointer(path: string): string {
  return `/${path.split('.').map((s) => s.replace(/~/g, '~0').replace(/\//g, '~1')).join('/')}`;
}

/** The 400 for a stored field name the store refuses (`reason`: what is wrong with it). */
export function badFieldName(collection: string, path: string, reason: 'nul' | 'dollar'): AppError {
  const message = reason === 'nul' ? 'a field name must not contain a NUL byte' : "an update must not write a top-level field name starting with '$'";
  return new AppError('VALIDATION_FAILED', {
    message: `${path.replace(/\0/g, '\\0')}: ${message}`,
    details: { collection, field: path },
    validationErrors: [{ field: pointer(path), code: 'fieldName', message }],
  });
}

/** The 400 for an `$inc` of a stored value that is not a number, or by a non-number (MongoDB TypeMismatch). */
export function notIncrementable(collection: string, path: string, found: string): AppError {
  const message = `cannot be incremented: it holds ${found}, not a number`;
  return new AppError('VALIDATION_FAILED', {
    message: `${path}: ${message}`,
    details: { collection, field: path },
    validationErrors: [{ field: pointer(path), code: 'type', message }],
  });
}

/** The 400 for an `$inc` by something that is not a finite number (MongoDB TypeMismatch). */
export function badIncrement(collection: string, path: string, found: string): AppError {
  const message = `cannot be incremented by ${found}: the increment must be a number`;
  return new AppError('VALIDATION_FAILED', {
    message: `${path}: ${message}`,
    details: { collection, field: path },
    validationErrors: [{ field: pointer(path), code: 'type', message }],
  });
}

/** The 413 for a document the write would make larger than {@link MAX_DOCUMENT_BYTES}. */
export function documentTooLarge(collection: string, bytes?: number): AppError {
  return new AppError('PAYLOAD_TOO_LARGE', {
    message: `The document would be larger than MongoDB's ${MAX_DOCUMENT_BYTES}-byte limit${bytes === undefined ? '' : ` (${bytes} bytes)`}`,
    details: { collection, max_bytes: MAX_DOCUMENT_BYTES, ...(bytes === undefined ? {} : { bytes }) },
  });
}

/** UTF-8 bytes of a string. */
function utf8Bytes(s: string): number {
  return Buffer.byteLength(s, 'utf8');
}

/** Thrown inside {@link boundOf} at a field name holding a NUL byte (the path is found afterwards). */
const NUL_NAME = Symbol('NUL in a field name');

/**
 * An upper bound of the BSON size (bytes) of a value: a string counted as 3 bytes per UTF-16 unit,
 * every number as a double, an array element's name as 10 digits; throws {@link NUL_NAME} at a
 * field name holding a NUL byte. One pass with no allocation: the check every write pays.
 */
function boundOf(value: unknown): number {
  switch (typeof value) {
    case 'string':
      return 5 + 3 * value.length;
    case 'number':
      return 8;
    case 'boolean':
      return 1;
    case 'object':
      break;
    default:
      return 0;
  }
  if (value === null) return 0;
  if (value instanceof Date) return 8;
  let size = 5;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) size += 12 + boundOf(value[i]);
    return size;
  }
  const keys = Object.keys(value);
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i]!;
    const v = (value as Record<string, unknown>)[key];
    if (v === undefined) continue;
    if (key.indexOf('\0') >= 0) throw NUL_NAME;
    size += 2 + 3 * key.length + boundOf(v);
  }
  return size;
}

/**
 * An upper bound of the BSON size of a stored value (see {@link boundOf}), whatever its field names
 * hold (a document stored before these rules may hold a NUL in a name: it is measured, not refused).
 */
export function sizeBound(value: unknown): number {
  try {
    return boundOf(value);
  } catch (e) {
    if (e !== NUL_NAME) throw e;
    return bsonSize(value);
  }
}

/**
 * The BSON size (bytes) of a value as the driver encodes it: a whole number in the int32 range as
 * int32, any other number as a double, a string as int32 length + UTF-8 + NUL, a date as 8 bytes,
 * `undefined` left out.
 */
export function bsonSize(value: unknown): number {
  switch (typeof value) {
    case 'string':
      return 5 + utf8Bytes(value);
    case 'number':
      return Number.isInteger(value) && value >= INT32_MIN && value <= INT32_MAX && !Object.is(value, -0) ? 4 : 8;
    case 'boolean':
      return 1;
    case 'object':
      break;
    default:
      return 0; // undefined (left out), bigint and others: not stored as given
  }
  if (value === null) return 0;
  if (value instanceof Date) return 8;
  let size = 5;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) size += 2 + String(i).length + bsonSize(value[i]);
    return size;
  }
  for (const key of Object.keys(value)) {
    const v = (value as Record<string, unknown>)[key];
    if (v !== undefined) size += 2 + utf8Bytes(key) + bsonSize(v);
  }
  return size;
}

/** The dotted path (from `path`) of the first field name inside `value` holding a NUL byte, if any. */
function nulPath(value: unknown, path: string): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  if (Array.isArray(value)) {
    for (const v of value) {
      const found = nulPath(v, path);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  for (const [key, v] of Object.entries(value)) {
    if (v === undefined) continue;
    const at = path ? `${path}.${key}` : key;
    if (key.indexOf('\0') >= 0) return at;
    const found = nulPath(v, at);
    if (found !== undefined) return found;
  }
  return undefined;
}

/**
 * An upper bound of the BSON size of `value` (its dotted stored path `path`; '' for a whole
 * document), having checked that no field name inside it holds a NUL byte. Throws
 * `VALIDATION_FAILED` ({@link badFieldName}) naming the first such field.
 */
export function checkedValueSize(collection: string, value: unknown, path: string): number {
  try {
    return boundOf(value);
  } catch (e) {
    if (e !== NUL_NAME) throw e;
    throw badFieldName(collection, nulPath(value, path) ?? path, 'nul');
  }
}

/**
 * Checks a document a write stores whole (an insert, an upsert's new document): every field name
 * at any depth (no NUL), and its BSON size. Returns an upper bound of its size in bytes (the exact
 * size when the bound passes the limit). Throws `VALIDATION_FAILED` for a refused field name,
 * `PAYLOAD_TOO_LARGE` past {@link MAX_DOCUMENT_BYTES}.
 */
export function checkDocument(collection: string, doc: object): number {
  const bound = checkedValueSize(collection, doc, '');
  if (bound <= MAX_DOCUMENT_BYTES) return bound;
  const size = bsonSize(doc);
  if (size > MAX_DOCUMENT_BYTES) throw documentTooLarge(collection, size);
  return size;
}

/** Checks an update's field path: no NUL byte, no `$` leading its first segment (a top-level field). */
function checkPath(collection: string, path: string): void {
  if (path.indexOf('\0') >= 0) throw badFieldName(collection, path, 'nul');
  if (path.charCodeAt(0) === 36) throw badFieldName(collection, path, 'dollar');
}

/** Operators whose values are stored (their field names checked, their bytes counted). */
const STORING = new Set(['$set', '$setOnInsert', '$push', '$addToSet']);

/**
 * Checks what an update adds: the field path of every operator (NUL; `$` leading it), the field names
 * inside the values `$set`, `$setOnInsert`, `$push` and `$addToSet` store (with `$each`), and that
 * `$inc` is by a finite number. Returns an upper bound of the bytes the update can add to a
 * document (each stored value with its field name, plus room for the sub-documents a dotted path
 * may create). Throws `VALIDATION_FAILED`.
 */
export function checkUpdate(collection: string, update: Update): number {
  let added = 0;
  for (const op in update) {
    const fields = update[op];
    if (typeof fields !== 'object' || fields === null) continue;
    for (const path in fields) {
      checkPath(collection, path);
      const value = (fields as Record<string, unknown>)[path];
      // the path's names (3 bytes per unit at most) and one sub-document per segment it may create (7 bytes each)
      const pathBytes = 2 + 10 * path.length;
      if (op === '$inc') {
        if (typeof value !== 'number' || !Number.isFinite(value)) throw badIncrement(collection, path, describe(value));
        added += pathBytes + 8;
      } else if (STORING.has(op)) {
        const each = (op === '$push' || op === '$addToSet') && isEach(value) ? (value as { $each: unknown[] }).$each : [value];
        // array elements are named by their index: at most 10 digits
        for (const v of each) added += pathBytes + 10 + checkedValueSize(collection, v, path);
      }
    }
  }
  return added;
}

/** True for `{$each: [...]}` (a `$push`/`$addToSet` of several values). */
function isEach(v: unknown): boolean {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && Array.isArray((v as { $each?: unknown }).$each);
}

/** How a value is named in a TypeMismatch message. */
export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  switch (typeof value) {
    case 'string':
      return 'a string';
    case 'object':
      return 'a sub-document';
    case 'boolean':
      return 'a boolean';
    case 'number':
      return 'a non-finite number';
    default:
      return typeof value;
  }
}

/**
 * The `QUERY_TIMEOUT` (503) of a read stopped at its time limit of `limitMs` (port
 * `QUERY_TIME_LIMIT_MS`), the same on both backends; `cause`: the backend's own error, if any.
 */
export function queryTimeout(limitMs: number, cause?: unknown): AppError {
  return new AppError('QUERY_TIMEOUT', {
    message: `The query ran past its time limit of ${limitMs} ms and was stopped; narrow it (a status, tag or board condition) and retry`,
    details: { limit_ms: limitMs },
    ...(cause === undefined ? {} : { cause }),
  });
}
