import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError } from '@app/shared/errors';
import { toHttpError } from '../http/error-mapping.js';

/**
 * Sends the error answer for `err` (DESIGN §4) and logs it once, here, where its status is
 * decided: 5xx at `error` (`warn` for the bus's 503/504), nothing for 4xx. `traceId` is the
 * request id of the body; an idempotent replay of an error passes the first request's (issue 11).
 */
export function sendError(err: unknown, req: FastifyRequest, reply: FastifyReply, traceId: string = req.id): FastifyReply {
  const { statusCode, body } = toHttpError(err, traceId);
  if (statusCode >= 500) {
    const level = body.code === 'INTERNAL' ? 'error' : 'warn';
    req.log[level]({ reqId: req.id, err, code: body.code }, 'request failed');
  }
  return reply.code(statusCode).type('application/json').send(body);
}

/** Installs the one error handler and the 404 handler: every error leaves as `{code, message, ..., traceId}`. */
export function installErrorHandlers(app: FastifyInstance): void {
  app.setErrorHandler((err, req, reply) => sendError(err, req, reply));
  app.setNotFoundHandler((req, reply) =>
    sendError(new AppError('NOT_FOUND', { message: `No route ${req.method} ${req.url.split('?')[0]}` }), req, reply),
  );
}
