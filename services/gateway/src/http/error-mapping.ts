import { Type } from '@sinclair/typebox';
import { AppError, type ErrorEnvelope, type FieldError } from '@app/shared/errors';

/**
 * The body of every error answer (docs/architecture.md §4): the catalogue's envelope, which the legacy paths fold
 * with `legacyErrorBody`. AppError `extra` fields are spread at the top level (the 409 move body's
 * `task`) without ever replacing its fields; `traceId` is the request id (`x-request-id`), also
 * found on every log line of the request.
 */
export type ErrorBody = ErrorEnvelope;

/** {@link ErrorBody} as a schema, for Swagger's `default` response of every operation. */
export const ErrorBodySchema = Type.Object(
  {
    code: Type.String({ description: 'Catalogue code, see docs/errors.md' }),
    message: Type.String(),
    details: Type.Optional(Type.Object({}, { additionalProperties: true })),
    validationErrors: Type.Optional(
      Type.Array(Type.Object({ field: Type.String(), code: Type.String(), message: Type.String() })),
    ),
    traceId: Type.String({ description: 'The request id (x-request-id)' }),
  },
  { $id: 'Error', additionalProperties: true },
);

/** An error as HTTP sends it: the status from the catalogue and the body of docs/architecture.md §4. */
export interface HttpError {
  statusCode: number;
  body: ErrorBody;
}

/** The parts of an Ajv error that Fastify puts on `err.validation`. */
export interface AjvIssue {
  keyword: string;
  instancePath?: string;
  params?: Record<string, unknown>;
  message?: string;
}

const MAX_FIELD_ERRORS = 20;

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null;
}

/** Field path of one Ajv issue: a `required` issue names the missing property, not its parent. */
function fieldOf(issue: AjvIssue): string {
  const base = issue.instancePath ?? '';
  const missing = issue.params?.missingProperty;
  if (issue.keyword === 'required' && typeof missing === 'string') return `${base}/${missing}`;
  const extra = issue.params?.additionalProperty;
  if (issue.keyword === 'additionalProperties' && typeof extra === 'string') return `${base}/${extra.replace(/~/g, '~0').replace(/\//g, '~1')}`;
  return base || '/';
}

/** Message of one Ajv issue; an unknown field says so plainly. */
function messageOf(issue: AjvIssue): string {
  if (issue.keyword === 'additionalProperties' && typeof issue.params?.additionalProperty === 'string') {
    return 'is not a field of this request body (see the Swagger schema)';
  }
  return issue.message ?? 'is invalid';
}

/** A schema validation failure of request part `part` → 400 `VALIDATION_FAILED` naming each field at fault (at most 20). */
export function fromValidation(issues: AjvIssue[], part: string): AppError {
  const validationErrors: FieldError[] = [];
  for (const issue of issues) {
    const field = fieldOf(issue);
    if (validationErrors.some((f) => f.field === field && f.code === issue.keyword)) continue;
    validationErrors.push({ field, code: issue.keyword, message: messageOf(issue) });
    if (validationErrors.length >= MAX_FIELD_ERRORS) break;
  }
  const first = validationErrors[0];
  return new AppError('VALIDATION_FAILED', {
    message: first ? `${part}${first.field === '/' ? '' : first.field}: ${first.message}` : undefined,
    details: { in: part },
    validationErrors,
  });
}

/**
 * Maps anything thrown while serving a request to an AppError: AppErrors pass through; Fastify's
 * own errors (validation, body parsing, body size, other client errors) get their catalogue code;
 * everything else is `INTERNAL`, whose message never reveals the internal one.
 */
export function toAppError(err: unknown): AppError {
  if (AppError.is(err)) return err;
  if (!isRecord(err)) return AppError.from(err);
  if (Array.isArray(err.validation)) {
    return fromValidation(err.validation as AjvIssue[], typeof err.validationContext === 'string' ? err.validationContext : 'body');
  }
  switch (err.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError('PAYLOAD_TOO_LARGE');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new AppError('BAD_REQUEST', { message: 'The body is not valid JSON' });
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AppError('BAD_REQUEST', { message: 'Unsupported Content-Type; send application/json' });
  }
  // Other Fastify client errors (bad URL, bad content-length, ...) carry safe messages.
  const status = typeof err.statusCode === 'number' ? err.statusCode : 500;
  if (typeof err.code === 'string' && err.code.startsWith('FST_') && status >= 400 && status < 500) {
    return new AppError('BAD_REQUEST', { message: typeof err.message === 'string' ? err.message : undefined, cause: err });
  }
  return AppError.from(err);
}

/** The HTTP answer for an error (docs/architecture.md §4): status from the catalogue, body {@link ErrorBody}. */
export function toHttpError(err: unknown, traceId: string): HttpError {
  const e = toAppError(err);
  const body: ErrorBody = { code: e.code, message: e.message, traceId };
  if (e.details) body.details = e.details;
  if (e.validationErrors) body.validationErrors = e.validationErrors;
  for (const [k, v] of Object.entries(e.extra ?? {})) if (!(k in body)) body[k] = v;
  return { statusCode: e.status, body };
}

/**
 * The paths of ud's published Swagger as a ud client reaches them under its one base URL
 * `/api/v1` (`/api/v1/todolist…`, `/api/v1/kanban/boards…`, `/api/v1/auth/…`): their errors take
 * the legacy shape (`legacyErrorBody`, docs/compat.md). Every other path keeps the full envelope.
 */
const LEGACY_PATH = /^\/api\/v1\/(todolist|kanban\/boards|auth)(\/|\?|$)/;

/** True when an error answer to `url` (path and query) takes the legacy shape. */
export function isLegacyPath(url: string): boolean {
  return LEGACY_PATH.test(url);
}
