import fastifyMultipart from '@fastify/multipart';
import type { FastifyInstance, FastifyRequest, onRequestHookHandler, preValidationAsyncHookHandler, preValidationHookHandler } from 'fastify';
import { IMPORT_MAX_BYTES } from '@app/shared/contracts';
import { AppError, invalidField } from '@app/shared/errors';

/** The route that takes uploads (docs/import-export.md "Upload"). */
export const UPLOAD_URL = '/api/v1/imports';
/** Largest JSON body of an import: the export's limit plus room for its JSON escaping and the other fields. */
export const IMPORT_BODY_LIMIT = 2 * IMPORT_MAX_BYTES + 64 * 1024;

function tooLarge(): AppError {
  return new AppError('IMPORT_TOO_LARGE', { message: `The import is over the ${IMPORT_MAX_BYTES}-byte limit of one import`, details: { max_bytes: IMPORT_MAX_BYTES } });
}

/** The multipart parts of an import upload as the JSON body they stand for: the `file` part → `data`, `mapping` parsed, `dry_run` a boolean. */
async function uploadBody(req: FastifyRequest): Promise<Record<string, unknown>> {
  const body: Record<string, unknown> = {};
  try {
    for await (const part of req.parts()) {
      if (part.type === 'file') {
        if (part.fieldname !== 'file') throw invalidField(`/${part.fieldname}`, 'the export is uploaded as the part named "file"', 'unknown');
        const bytes = await part.toBuffer();
        body.data = bytes.toString('utf8');
      } else {
        body[part.fieldname] = part.value;
      }
    }
  } catch (e) {
    if (AppError.is(e)) throw e;
    const code = (e as { code?: string }).code;
    if (code === 'FST_REQ_FILE_TOO_LARGE') throw tooLarge();
    throw new AppError('BAD_REQUEST', { message: `The upload cannot be read: ${(e as Error).message}` });
  }
  if (typeof body.mapping === 'string') {
    try {
      body.mapping = JSON.parse(body.mapping) as unknown;
    } catch {
      throw invalidField('/mapping', 'must be a JSON object (a multipart field holds its JSON text)', 'format');
    }
  }
  if (body.dry_run === 'true' || body.dry_run === 'false') body.dry_run = body.dry_run === 'true';
  return body;
}

/**
 * Uploads of imports (docs/import-export.md): `multipart/form-data` with a `file` part (at most
 * `IMPORT_MAX_BYTES`, one file) beside the fields of the JSON body (`format`, `mapping` as JSON
 * text, `dry_run`), read with @fastify/multipart into the body the route's schema validates. Only
 * {@link UPLOAD_URL} takes multipart; elsewhere it is a 400 as any body that is not JSON. A
 * request whose `Content-Length` is over the limit is refused before its body is read (413
 * `IMPORT_TOO_LARGE` naming the limit). Register after the JSON parser and before the routes.
 */
export async function registerUploads(app: FastifyInstance): Promise<void> {
  await app.register(fastifyMultipart, { limits: { fileSize: IMPORT_MAX_BYTES, files: 1, fields: 10, fieldSize: 64 * 1024, parts: 12 } });
  const early: onRequestHookHandler = (req, _reply, done) => {
    if (Number(req.headers['content-length'] ?? 0) > IMPORT_BODY_LIMIT) return done(tooLarge());
    done();
  };
  const upload: preValidationAsyncHookHandler = async (req) => {
    if (req.isMultipart()) req.body = await uploadBody(req);
  };
  const refuse: preValidationHookHandler = (req, _reply, done) => {
    if (req.isMultipart()) return done(new AppError('BAD_REQUEST', { message: 'Unsupported Content-Type; send application/json' }));
    done();
  };
  // hooks of the routes themselves, decided once per route (no per-request look at the route's options)
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (!methods.some((m) => m === 'POST' || m === 'PUT' || m === 'PATCH' || m === 'DELETE')) return;
    const add = <H>(own: H | H[] | undefined, hook: H): H[] => (own === undefined ? [hook] : [hook, ...(Array.isArray(own) ? own : [own])]);
    if (route.url === UPLOAD_URL) {
      // after authentication: an anonymous request is a 401 whatever its size
      route.onRequest = [...(route.onRequest === undefined ? [] : Array.isArray(route.onRequest) ? route.onRequest : [route.onRequest]), early];
      route.preValidation = add(route.preValidation, upload as preValidationHookHandler);
    } else {
      route.preValidation = add(route.preValidation, refuse);
    }
  });
}
