import { BSON, MongoInvalidArgumentError, MongoNetworkError, MongoParseError, MongoServerError, MongoServerSelectionError, type TopologyDescription } from 'mongodb';
import { describe, expect, it } from 'vitest';
import { AppError } from '@app/shared/errors';
import { mapMongoError } from '../../src/store/mongo/errors.js';

const serverError = (fields: Record<string, unknown>) => new MongoServerError({ message: 'server said no', ...fields });

describe('mapMongoError', () => {
  it('maps duplicate key 11000 to CONFLICT naming the collection and key fields', () => {
    const e = mapMongoError(serverError({ code: 11000, keyPattern: { username: 1 } }), 'users') as AppError;
    expect(e.code).toBe('CONFLICT');
    expect(e.details).toEqual({ collection: 'users', fields: ['username'] });
  });

  it.each([
    ['network error', new MongoNetworkError('connection reset')],
    ['server selection time-out', new MongoServerSelectionError('no server', {} as TopologyDescription)],
    ['not writable primary (10107)', serverError({ code: 10107 })],
    ['primary stepped down (189)', serverError({ code: 189 })],
    ['operation time-out (50)', serverError({ code: 50 })],
  ])('maps a %s to STORE_UNAVAILABLE (503)', (_name, err) => {
    const e = mapMongoError(err) as AppError;
    expect(e.code).toBe('STORE_UNAVAILABLE');
    expect(e.status).toBe(503);
  });

  it('maps a write conflict left after the driver retried to CONFLICT', () => {
    expect((mapMongoError(serverError({ code: 112, errorLabels: ['TransientTransactionError'] })) as AppError).code).toBe('CONFLICT');
  });

  it('maps other driver errors to INTERNAL and passes non-driver errors through unchanged', () => {
    expect((mapMongoError(new MongoParseError('bad url')) as AppError).code).toBe('INTERNAL');
    const own = new AppError('TASK_NOT_FOUND');
    const thrownByFn = new Error('boom');
    expect(mapMongoError(own)).toBe(own);
    expect(mapMongoError(thrownByFn)).toBe(thrownByFn);
  });

  it('maps the serializer\'s refusal of a NUL byte in a key to VALIDATION_FAILED naming the key (what the driver throws)', () => {
    let thrown: unknown;
    try {
      BSON.serialize({ ok: { 'a\u0000b': 1 } });
    } catch (e) {
      thrown = e;
    }
    const e = mapMongoError(thrown, 'tasks') as AppError;
    expect([e.code, e.status]).toEqual(['VALIDATION_FAILED', 400]);
    expect(e.validationErrors?.[0]?.field).toBe('/a\u0000b');
  });

  it('maps TypeMismatch (14) to VALIDATION_FAILED naming the $inc path whose last segment the server quotes', () => {
    const err = serverError({ code: 14, message: "Cannot apply $inc to a value of non-numeric type. {_id: \"s\"} has the field 'app%2Ecarried' of non-numeric type string" });
    const e = mapMongoError(err, 'tasks', { $inc: { version: 1, 'metadata.app%2Ecarried': 1 } }) as AppError;
    expect([e.code, e.status]).toEqual(['VALIDATION_FAILED', 400]);
    expect(e.validationErrors?.[0]?.field).toBe('/metadata/app%2Ecarried');
  });

  it('maps a $-prefixed field name refused by the server (52) to VALIDATION_FAILED', () => {
    const e = mapMongoError(serverError({ code: 52, message: "The dollar ($) prefixed field '$x' in '$x' is not valid for storage." }), 'tasks') as AppError;
    expect(e.code).toBe('VALIDATION_FAILED');
    expect(e.validationErrors?.[0]?.field).toBe('/$x');
  });

  it.each([
    ['BSONObjectTooLarge (10334)', serverError({ code: 10334 })],
    ['an update result over the limit (17419)', serverError({ code: 17419, message: 'Resulting document after update is larger than 16777216' })],
    ['an insert just over the limit (BadValue)', serverError({ code: 2, message: 'object to insert too large. size in bytes: 16777250, max size: 16777216' })],
    ['the driver\'s own size check', new MongoInvalidArgumentError('Document is larger than the maximum size 16777216')],
  ])('maps %s to PAYLOAD_TOO_LARGE (413)', (_name, err) => {
    const e = mapMongoError(err, 'tasks') as AppError;
    expect([e.code, e.status]).toEqual(['PAYLOAD_TOO_LARGE', 413]);
  });

  it('keeps other BadValue errors INTERNAL', () => {
    expect((mapMongoError(serverError({ code: 2, message: 'unknown operator' })) as AppError).code).toBe('INTERNAL');
  });
});
