import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, legacyErrorBody } from '@app/shared/errors';
import { isLegacyPath, toHttpError } from '../http/error-mapping.js';

/**
 * Sends the error answer for `err` (docs/architecture.md §4) and logs it once, here, where its status is
 * decided: 5xx at `error` (`warn` for the bus's 503/504), nothing for 4xx. `traceId` is the
 * request id of the body; an idempotent replay of an error passes the first request's.
 * On the paths of ud's Swagger under `/api/v1` the body takes the legacy shape
 * (`legacyErrorBody`: same code, status and message, every detail folded into a string).
 * An error whose `details.retryAfterSeconds` is a number answers with `Retry-After` (whole seconds, at least 1).
 */
export function sendError(err: unknown, req: FastifyRequest, reply: FastifyReply, traceId: string = req.id): FastifyReply {
  const { statusCode, body } = toHttpError(err, traceId);
  // an error that says when to come back (the bus down, admission's 429) says it in Retry-After too
  const retryAfter = body.details?.retryAfterSeconds;
  if (typeof retryAfter === 'number') reply.header('retry-after', String(Math.max(1, Math.ceil(retryAfter))));
  if (statusCode >= 500) {
    const level = body.code === 'INTERNAL' ? 'error' : 'warn';
    req.log[level]({ reqId: req.id, err, code: body.code }, 'request failed');
  }
  return reply.code(statusCode).type('application/json').send(isLegacyPath(req.url) ? legacyErrorBody(body) : body);
}

/**
 * Installs the one error handler and the 404 handler: every error leaves as `{code, message, ...,
 * traceId}`. `fallback` (the web board's SPA fallback, plugins/web.ts) may answer an unmatched
 * request first; when it returns false the JSON 404 is sent.
 */
export function installErrorHandlers(app: FastifyInstance, fallback?: (req: FastifyRequest, reply: FastifyReply) => boolean): void {
  app.setErrorHandler((err, req, reply) => sendError(err, req, reply));
  app.setNotFoundHandler((req, reply) => {
    if (fallback?.(req, reply)) return reply;
    return sendError(new AppError('NOT_FOUND', { message: `No route ${req.method} ${req.url.split('?')[0]}` }), req, reply);
  });
}
