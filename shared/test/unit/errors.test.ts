import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { AppError, ErrorCodes, invalidField, isErrorCode, legacyErrorBody, renderErrorsDoc } from '@app/shared/errors';

describe('error catalogue', () => {
  it.each(Object.entries(ErrorCodes))('%s has an HTTP error status and a message', (_, entry) => {
    expect(entry.status).toBeGreaterThanOrEqual(400);
    expect(entry.status).toBeLessThanOrEqual(599);
    expect(entry.message.trim()).not.toBe('');
    expect(entry.when.trim()).not.toBe('');
  });

  it('docs/errors.md is the rendered catalogue (regenerate: npm run build -w @app/shared; npm run docs:errors)', () => {
    const doc = readFileSync(new URL('../../../docs/errors.md', import.meta.url), 'utf8');
    expect(doc).toBe(renderErrorsDoc());
  });

  it('isErrorCode accepts catalogue codes only', () => {
    expect(isErrorCode('TASK_NOT_FOUND')).toBe(true);
    expect(isErrorCode('toString')).toBe(false);
    expect(isErrorCode(404)).toBe(false);
  });
});

describe('AppError', () => {
  it('takes its status and default message from the catalogue', () => {
    const err = new AppError('BOARD_NOT_FOUND');
    expect(err.status).toBe(404);
    expect(err.message).toBe(ErrorCodes.BOARD_NOT_FOUND.message);
  });

  it('survives the wire round trip with code, message, details, validationErrors and extra', () => {
    const err = new AppError('KANBAN_TASK_NOT_IN_SOURCE_COLUMN', {
      message: 'moved away',
      details: { boardId: 'b1' },
      validationErrors: [{ field: '/from_column_id', code: 'stale', message: 'not there' }],
      extra: { task: { id: 't1', status: 'done', tags: [] } },
    });
    const back = AppError.fromWire(JSON.parse(JSON.stringify(err.toWire())));
    expect(back).toBeInstanceOf(AppError);
    expect(back.toWire()).toEqual(err.toWire());
    expect(back.status).toBe(409);
  });

  it('leaves absent optional parts out of the wire form', () => {
    expect(new AppError('FORBIDDEN').toWire()).toEqual({ code: 'FORBIDDEN', message: ErrorCodes.FORBIDDEN.message });
  });

  it('rebuilds an unknown or garbled wire error as INTERNAL', () => {
    expect(AppError.fromWire({ code: 'NOPE', message: 'x' })).toMatchObject({ code: 'INTERNAL', details: { upstream: 'NOPE' } });
    expect(AppError.fromWire(null).code).toBe('INTERNAL');
  });

  it('from() keeps an AppError and hides anything else behind INTERNAL', () => {
    const own = new AppError('CONFLICT');
    expect(AppError.from(own)).toBe(own);
    const wrapped = AppError.from(new Error('secret detail'));
    expect(wrapped).toMatchObject({ code: 'INTERNAL', message: ErrorCodes.INTERNAL.message });
    expect(JSON.stringify(wrapped.toWire())).not.toContain('secret detail');
  });

  it('is() recognises AppErrors only', () => {
    expect(AppError.is(new AppError('NOT_FOUND'))).toBe(true);
    expect(AppError.is(new Error('x'))).toBe(false);
    expect(AppError.is({ code: 'NOT_FOUND' })).toBe(false);
  });

  it('invalidField names the field in the message and in validationErrors', () => {
    const err = invalidField('/page_size', 'must be between 1 and 200', 'range');
    expect(err.code).toBe('VALIDATION_FAILED');
    expect(err.message).toBe('page_size: must be between 1 and 200');
    expect(err.validationErrors).toEqual([{ field: '/page_size', code: 'range', message: 'must be between 1 and 200' }]);
  });
});

describe('legacyErrorBody (the shape of ud\'s Swagger on its paths)', () => {
  it('keeps code, message and traceId, and folds details and field errors into strings', () => {
    const body = legacyErrorBody({
      code: 'VALIDATION_FAILED', message: 'body/name: must be string', traceId: 't-1',
      details: { in: 'body', position: 12, ok: false, list: [{ id: 'a' }], code: 'not this one' },
      validationErrors: [{ field: '/name', code: 'type', message: 'must be string' }, { field: '/tags', code: 'type', message: 'must be array' }],
    });
    expect(body).toEqual({
      code: 'VALIDATION_FAILED', message: 'body/name: must be string', traceId: 't-1',
      field: '/name', errors: '/name: must be string; /tags: must be array',
      in: 'body', position: '12', ok: 'false', list: '[{"id":"a"}]',
    });
  });

  it('leaves an operation\'s own extra fields as they are (the move\'s 409 task snapshot)', () => {
    const task = { id: 'w1', status: 'doing', tags: ['x'] };
    expect(legacyErrorBody({ code: 'KANBAN_TASK_NOT_IN_SOURCE_COLUMN', message: 'm', traceId: 't', task })).toEqual({
      code: 'KANBAN_TASK_NOT_IN_SOURCE_COLUMN', message: 'm', traceId: 't', task,
    });
  });

  it('a bare error stays bare', () => {
    expect(legacyErrorBody({ code: 'NOT_FOUND', message: 'Not found', traceId: 't' })).toEqual({ code: 'NOT_FOUND', message: 'Not found', traceId: 't' });
  });
});
