import { describe, expect, it } from 'vitest';
import { AppError } from '@app/shared/errors';
import { toHttpError } from '../../src/http/error-mapping.js';

describe('toHttpError', () => {
  it('maps an AppError to its catalogue status with traceId, details and validationErrors', () => {
    const err = new AppError('VALIDATION_FAILED', {
      message: 'title: too long',
      details: { in: 'body' },
      validationErrors: [{ field: '/title', code: 'maxLength', message: 'too long' }],
    });
    expect(toHttpError(err, 'req-1')).toEqual({
      statusCode: 400,
      body: {
        code: 'VALIDATION_FAILED',
        message: 'title: too long',
        details: { in: 'body' },
        validationErrors: [{ field: '/title', code: 'maxLength', message: 'too long' }],
        traceId: 'req-1',
      },
    });
  });

  it('spreads extra fields at the top level without letting them replace the standard ones', () => {
    const task = { id: 't1', status: 'done', tags: [] };
    const err = new AppError('KANBAN_TASK_NOT_IN_SOURCE_COLUMN', { extra: { task, code: 'HIJACK', traceId: 'x' } });
    const { statusCode, body } = toHttpError(err, 'req-2');
    expect(statusCode).toBe(409);
    expect(body).toMatchObject({ code: 'KANBAN_TASK_NOT_IN_SOURCE_COLUMN', traceId: 'req-2', task });
  });

  it('names every field of a Fastify validation error, the missing property for "required"', () => {
    const fastifyErr = Object.assign(new Error('body/title must be string'), {
      code: 'FST_ERR_VALIDATION',
      statusCode: 400,
      validationContext: 'body',
      validation: [
        { keyword: 'required', instancePath: '', params: { missingProperty: 'title' }, message: "must have required property 'title'" },
        { keyword: 'type', instancePath: '/tags/0', params: { type: 'string' }, message: 'must be string' },
      ],
    });
    const { statusCode, body } = toHttpError(fastifyErr, 'r');
    expect(statusCode).toBe(400);
    expect(body.code).toBe('VALIDATION_FAILED');
    expect(body.message).toBe("body/title: must have required property 'title'");
    expect(body.details).toEqual({ in: 'body' });
    expect(body.validationErrors).toEqual([
      { field: '/title', code: 'required', message: "must have required property 'title'" },
      { field: '/tags/0', code: 'type', message: 'must be string' },
    ]);
  });

  it('reports a querystring validation error with its part', () => {
    const err = Object.assign(new Error('x'), {
      validationContext: 'querystring',
      validation: [{ keyword: 'minimum', instancePath: '/preview', params: {}, message: 'must be >= 0' }],
    });
    expect(toHttpError(err, 'r').body).toMatchObject({ message: 'querystring/preview: must be >= 0', details: { in: 'querystring' } });
  });

  it.each([
    ['FST_ERR_CTP_BODY_TOO_LARGE', 413, 'PAYLOAD_TOO_LARGE'],
    ['FST_ERR_CTP_INVALID_JSON_BODY', 400, 'BAD_REQUEST'],
    ['FST_ERR_CTP_INVALID_MEDIA_TYPE', 400, 'BAD_REQUEST'],
    ['FST_ERR_CTP_INVALID_CONTENT_LENGTH', 400, 'BAD_REQUEST'],
  ])('maps Fastify %s to %i %s', (code, status, appCode) => {
    const err = Object.assign(new Error('fastify says'), { code, statusCode: status === 413 ? 413 : 400 });
    const out = toHttpError(err, 'r');
    expect(out.statusCode).toBe(status);
    expect(out.body.code).toBe(appCode);
  });

  it('hides the message and stack of an unexpected error behind 500 INTERNAL', () => {
    const out = toHttpError(new TypeError('secret internals at /srv/db.ts:12'), 'r');
    expect(out.statusCode).toBe(500);
    expect(out.body).toEqual({ code: 'INTERNAL', message: 'Internal error', traceId: 'r' });
  });

  it('treats a non-Fastify error that carries a 4xx statusCode as INTERNAL', () => {
    const out = toHttpError(Object.assign(new Error('db says no'), { statusCode: 400, code: 'EDB' }), 'r');
    expect(out.statusCode).toBe(500);
    expect(out.body.message).toBe('Internal error');
  });

  it('copes with thrown non-objects', () => {
    expect(toHttpError('boom', 'r').body.code).toBe('INTERNAL');
  });
});
