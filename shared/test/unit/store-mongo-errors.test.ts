import { MongoNetworkError, MongoParseError, MongoServerError, MongoServerSelectionError, type TopologyDescription } from 'mongodb';
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
});
