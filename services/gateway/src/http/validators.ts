import { Ajv, type Options } from 'ajv';
import addFormatsImport from 'ajv-formats';
import type { FastifyInstance } from 'fastify';

// ajv-formats is CommonJS with a default export.
const addFormats = addFormatsImport as unknown as (ajv: Ajv) => Ajv;

const base: Options = { useDefaults: true, removeAdditional: true, allErrors: true, addUsedSchema: false, strict: false };

/**
 * Request validators (DESIGN §9, issue 2 "wrong types → 400"): JSON bodies are checked without
 * type coercion, so `{"title": 5}` is a 400 naming `/title`; path and query-string values, which
 * are always text on the wire, are coerced (`?preview=3` → 3). Unknown body fields are stripped
 * where a schema says `additionalProperties: false` (Fastify's default), and defaults are applied.
 */
export function installValidators(app: FastifyInstance): void {
  const strict = addFormats(new Ajv({ ...base, coerceTypes: false }));
  const coercing = addFormats(new Ajv({ ...base, coerceTypes: 'array' }));
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? strict : coercing).compile(schema));
}
