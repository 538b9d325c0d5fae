import { Ajv, type ErrorObject, type Options } from 'ajv';
import addFormatsImport from 'ajv-formats';
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { METADATA_KEY_MAX, METADATA_LIMITS_KEYWORD, METADATA_MAX_DEPTH, METADATA_VALUE_MAX_BYTES } from '@app/shared/contracts';
import { invalidField } from '@app/shared/errors';
import { jsonBytesOver } from '@app/shared/util';

// ajv-formats is CommonJS with a default export.
const addFormats = addFormatsImport as unknown as (ajv: Ajv) => Ajv;

const base: Options = { useDefaults: true, removeAdditional: true, allErrors: true, addUsedSchema: false, strict: false };

/**
 * Path prefixes of the legacy (ud-compatible) families and of the auth routes, which keep ud's
 * paths: their bodies keep ud's leniency, a field the schema does not declare is dropped, not
 * refused (docs/compat.md "Fields accepted and ignored on the legacy paths"). Every other path
 * refuses it.
 */
export const LEGACY_PREFIXES = ['/api/v1/todolist', '/api/v1/kanban', '/auth', '/api/v1/auth'] as const;

/** True when `url` (a route path) belongs to a legacy family. */
export function isLegacyPath(url: string): boolean {
  return LEGACY_PREFIXES.some((p) => url === p || url.startsWith(`${p}/`));
}

/**
 * Deepest nesting of objects and arrays in any JSON body (docs/http.md "Limits"): the
 * body object itself is level 1. Deeper bodies are a 400 before schema validation, so no later
 * step (validation, the bus's JSON encoding, the store) ever walks an unbounded tree.
 */
export const MAX_BODY_DEPTH = 64;

/**
 * Request validators (docs/architecture.md §9, "wrong types → 400"): JSON bodies are checked without
 * type coercion, so `{"title": 5}` is a 400 naming `/title`; path and query-string values, which
 * are always text on the wire, are coerced (`?preview=3` → 3). A body field the schema does not
 * accept (`additionalProperties: false`, as the Swagger says) is a 400 naming it on the target
 * paths; the legacy paths ({@link LEGACY_PREFIXES}) drop it instead, as ud did. Unknown
 * query-string parameters are dropped everywhere. Defaults are applied.
 * Limits: a body nested deeper than {@link MAX_BODY_DEPTH} is a 400 `VALIDATION_FAILED`
 * naming its first two levels (`/metadata/a`); schemas marked with the metadata-limits keyword
 * refuse values nested deeper than `METADATA_MAX_DEPTH` or longer than `METADATA_VALUE_MAX_BYTES`
 * with a 400 naming `/metadata/<key>` (or the value's own field).
 */
export function installValidators(app: FastifyInstance): void {
  const strict = strictBodies();
  const lenient = addMetadataLimits(addFormats(new Ajv({ ...base, coerceTypes: false })));
  const coercing = addMetadataLimits(addFormats(new Ajv({ ...base, coerceTypes: 'array' })));
  app.setValidatorCompiler(({ schema, httpPart, url }) =>
    (httpPart !== 'body' ? coercing : isLegacyPath(url) ? lenient : strict).compile(schema));
  // Only on routes that can receive a body: Fastify parses none for GET and HEAD, and a global
  // hook would cost every read a hook turn (the task detail is the gateway's cheapest request).
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (methods.every((m) => m === 'GET' || m === 'HEAD')) return;
    const own = route.preValidation;
    route.preValidation = own === undefined ? [bodyDepth] : [bodyDepth, ...(Array.isArray(own) ? own : [own])];
  });
}

/**
 * The validator of the target paths' JSON bodies (see {@link installValidators}): no coercion, an
 * undeclared field refused, defaults applied, formats and the metadata limits checked. The MCP
 * tools validate their arguments with it too (docs/agents.md).
 */
export function strictBodies(): Ajv {
  return addMetadataLimits(addFormats(new Ajv({ ...base, coerceTypes: false, removeAdditional: false })));
}

/** `preValidation` hook: 400 `VALIDATION_FAILED` for a body nested deeper than {@link MAX_BODY_DEPTH}. */
function bodyDepth(req: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void {
  const at = tooDeep(req.body, MAX_BODY_DEPTH);
  if (at === undefined) done();
  else done(invalidField(pointer(at.slice(0, 2)), `nested deeper than ${MAX_BODY_DEPTH} levels of objects and arrays`, 'depth'));
}

/**
 * The path (keys and indexes) to the first object or array of `value` lying deeper than `limit`
 * levels (`value` itself is level 1 when it is one), or undefined. Iterative: a 1 MiB body nested
 * 500,000 levels is walked without recursion, and the walk stops at the first offender.
 */
export function tooDeep(value: unknown, limit: number): Array<string | number> | undefined {
  // a body within the limit (every request's) is walked without an entry per node; only an
  // offending one is walked again to name the path
  if (!deeperThan(value, 1, limit)) return undefined;
  // each entry links to its parent: the path is rebuilt only for the offender (no copy per node)
  type Entry = { v: unknown; depth: number; key: string | number; parent: Entry | undefined };
  const stack: Entry[] = [{ v: value, depth: 1, key: '', parent: undefined }];
  while (stack.length > 0) {
    const e = stack.pop()!;
    if (typeof e.v !== 'object' || e.v === null) continue;
    if (e.depth > limit) {
      const path: Array<string | number> = [];
      for (let at: Entry | undefined = e; at?.parent; at = at.parent) path.unshift(at.key);
      return path;
    }
    const depth = e.depth + 1;
    if (Array.isArray(e.v)) e.v.forEach((v, key) => stack.push({ v, depth, key, parent: e }));
    else for (const [key, v] of Object.entries(e.v)) stack.push({ v, depth, key, parent: e });
  }
  return undefined;
}

/**
 * True when `value` (at level `depth`) holds an object or array deeper than `limit` levels. The
 * recursion stops at the first level past the limit, so it is never deeper than `limit` + 1 calls.
 */
function deeperThan(value: unknown, depth: number, limit: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (depth > limit) return true;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (deeperThan(value[i], depth + 1, limit)) return true;
    return false;
  }
  for (const key in value) {
    if (Object.hasOwn(value, key) && deeperThan((value as Record<string, unknown>)[key], depth + 1, limit)) return true;
  }
  return false;
}

/** A JSON pointer (RFC 6901) of a path. */
function pointer(path: ReadonlyArray<string | number>): string {
  return path.map((p) => `/${String(p).replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');
}

/** Checks one metadata value against the limits; the message of the first fault, or undefined. */
function metadataFault(value: unknown): string | undefined {
  // a metadata value's own nesting: its outermost object or array is level 1
  if (tooDeep(value, METADATA_MAX_DEPTH) !== undefined) return `nested deeper than ${METADATA_MAX_DEPTH} levels (metadata limit)`;
  // the value's JSON is made only when its bound does not rule the limit out
  const bytes = jsonBytesOver(value, METADATA_VALUE_MAX_BYTES);
  if (bytes !== undefined) return `${bytes} bytes of JSON, over the ${METADATA_VALUE_MAX_BYTES}-byte limit of a metadata value`;
  return undefined;
}

type MetadataLimitsValidator = ((kind: unknown, data: unknown, parent: unknown, cxt?: { instancePath: string }) => boolean) & { errors?: Partial<ErrorObject>[] };

/** Registers the metadata-limits keyword (`'object'`: every key and value of the object; `'value'`: the value). */
function addMetadataLimits(ajv: Ajv): Ajv {
  const validate: MetadataLimitsValidator = (kind, data, _parent, cxt) => {
    const base = cxt?.instancePath ?? '';
    const entries: Array<[string, unknown]> =
      kind === 'object' ? (typeof data === 'object' && data !== null && !Array.isArray(data) ? Object.entries(data) : []) : [['', data]];
    const errors: Partial<ErrorObject>[] = [];
    for (const [key, value] of entries) {
      const message = key.length > METADATA_KEY_MAX ? `a metadata key of ${key.length} characters, over the ${METADATA_KEY_MAX}-character limit` : metadataFault(value);
      if (message === undefined) continue;
      const instancePath = kind === 'object' ? `${base}${pointer([key])}` : base;
      errors.push({ keyword: METADATA_LIMITS_KEYWORD, instancePath, params: { depth: METADATA_MAX_DEPTH, bytes: METADATA_VALUE_MAX_BYTES, key_length: METADATA_KEY_MAX }, message });
    }
    validate.errors = errors;
    return errors.length === 0;
  };
  ajv.addKeyword({ keyword: METADATA_LIMITS_KEYWORD, schemaType: 'string', errors: true, validate });
  return ajv;
}
