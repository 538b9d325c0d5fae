/**
 * Swagger 2.0 compat transform (docs/architecture.md §11). @fastify/swagger emits JSON Schema
 * constructs that Swagger 2.0 lacks (`anyOf`/`oneOf`, `const`, nullable, tuples, numeric
 * `exclusiveMinimum`, `examples`, `patternProperties`); these functions rewrite them:
 * literal unions → `enum`, `X | null` → `X` + `x-nullable`, records → `additionalProperties`,
 * object unions → `x-anyOf` (lossy), tuples → `x-tuple` (lossy). Register both hooks:
 * `transform: swagger2Transform`, `transformObject: ({ swaggerObject }) => toSwagger2Document(swaggerObject)`.
 */
import { bodyRequired, documentTags, schemaNamer } from './components.js';

type J = Record<string, unknown>;

const isObj = (v: unknown): v is J => typeof v === 'object' && v !== null && !Array.isArray(v);

// `$id` is meaningful to Ajv only; Swagger 2.0 schema objects reject it (shared schemas that should be
// definitions go through `app.addSchema`).
const DROPPED_KEYWORDS = [
  '$id', 'unevaluatedProperties', '$schema', 'contentEncoding', 'contentMediaType', 'if', 'then', 'else',
  'propertyNames', 'contains', 'dependencies', 'dependentRequired', '$comment', 'not',
];

/** The literal values of a `const`/`enum` alternative. */
function literals(a: J): unknown[] {
  return 'const' in a ? [a.const] : (a.enum as unknown[]);
}

/** Folds an `anyOf`/`oneOf` into what Swagger 2.0 can say. */
function foldUnion(s: J, key: 'anyOf' | 'oneOf', alts: unknown[]): J {
  const nonNull = alts.filter((a) => !(isObj(a) && a.type === 'null'));
  const hasNull = nonNull.length < alts.length;
  const rest = { ...s };
  delete rest[key];
  let out: J;
  if (nonNull.length > 0 && nonNull.every((a) => isObj(a) && ('const' in a || Array.isArray(a.enum)))) {
    const objs = nonNull as J[];
    const values = objs.flatMap(literals);
    const types = [...new Set(objs.map((a) => a.type ?? typeof literals(a)[0]))];
    out = { ...rest, ...(types.length === 1 ? { type: types[0] } : {}), enum: values };
  } else if (nonNull.length === 1) {
    out = { ...(nonNull[0] as J), ...rest };
  } else {
    out = { ...rest, [`x-${key}`]: nonNull };
  }
  if (hasNull) out['x-nullable'] = true;
  return out;
}

/** Rewrites one JSON Schema (recursively) into a valid Swagger 2.0 schema. Pure. */
export function toSwagger2Schema(input: unknown): unknown {
  if (Array.isArray(input)) return input.map((v) => toSwagger2Schema(v));
  if (!isObj(input)) return input;
  let s: J = { ...input };
  if ('const' in s) {
    s.enum = [s.const];
    delete s.const;
  }
  if (s.nullable === true) {
    s['x-nullable'] = true;
    delete s.nullable;
  }
  if (Array.isArray(s.type)) {
    const types = (s.type as string[]).filter((t) => t !== 'null');
    if (types.length < (s.type as string[]).length) s['x-nullable'] = true;
    if (types.length === 1) s.type = types[0];
    else delete s.type;
  }
  for (const [ex, base] of [['exclusiveMinimum', 'minimum'], ['exclusiveMaximum', 'maximum']] as const) {
    if (typeof s[ex] === 'number') {
      s[base] = s[ex];
      s[ex] = true;
    }
  }
  if (Array.isArray(s.examples)) {
    if (s.example === undefined) s.example = s.examples[0];
    delete s.examples;
  }
  for (const key of ['anyOf', 'oneOf'] as const) {
    const alts = s[key];
    if (Array.isArray(alts)) s = foldUnion(s, key, alts);
  }
  if (Array.isArray(s.items)) {
    s['x-tuple'] = s.items;
    s.items = {};
    delete s.additionalItems;
  }
  if (isObj(s.patternProperties)) {
    s.additionalProperties = Object.values(s.patternProperties)[0] ?? {};
    delete s.patternProperties;
  }
  for (const k of DROPPED_KEYWORDS) delete s[k];
  for (const k of ['properties', 'definitions']) {
    if (isObj(s[k])) s[k] = Object.fromEntries(Object.entries(s[k]).map(([n, v]) => [n, toSwagger2Schema(v)]));
  }
  for (const k of ['items', 'additionalProperties', 'schema']) if (isObj(s[k])) s[k] = toSwagger2Schema(s[k]);
  if (Array.isArray(s.allOf)) s.allOf = s.allOf.map((v) => toSwagger2Schema(v));
  if (Array.isArray(s.required) && s.required.length === 0) delete s.required;
  return s;
}

/** Non-body parameter: same rewrite, and a parameter must keep a plain `type`. */
function toSwagger2Parameter(prm: J): J {
  if (prm.in === 'body') return { ...prm, schema: toSwagger2Schema(prm.schema) };
  const fixed = toSwagger2Schema(prm) as J;
  delete fixed['x-anyOf'];
  delete fixed['x-oneOf'];
  if (fixed.type === undefined) fixed.type = 'string';
  return fixed;
}

/** A `$ref` schema stands alone in Swagger 2.0: its siblings (a `description`) are dropped. */
function refAlone(s: unknown): unknown {
  return isObj(s) && typeof s.$ref === 'string' ? { $ref: s.$ref } : s;
}

/**
 * `transformObject` hook: rewrites the whole generated document (definitions, parameters,
 * responses); the named resources (http/components.ts) become `definitions` that bodies and
 * responses reference, a body parameter is `required` when the route needs a body, and the
 * operations' tags are listed with their descriptions.
 */
export function toSwagger2Document(doc: J): J {
  const out = structuredClone(doc);
  const { components, rewrite } = schemaNamer(toSwagger2Schema, (name) => `#/definitions/${name}`, false);
  const definitions = isObj(out.definitions) ? Object.fromEntries(Object.entries(out.definitions).map(([n, v]) => [n, toSwagger2Schema(v)])) : {};
  out.definitions = { ...definitions, ...components };
  const ops: J[] = [];
  for (const item of Object.values(isObj(out.paths) ? out.paths : {})) {
    for (const op of Object.values(isObj(item) ? item : {})) {
      if (!isObj(op)) continue;
      ops.push(op);
      if (Array.isArray(op.parameters)) {
        op.parameters = (op.parameters as J[]).map(toSwagger2Parameter).map((p) => {
          if (p.in !== 'body') return p;
          return { ...p, required: bodyRequired(p.schema), schema: refAlone(rewrite(p.schema)) };
        });
      }
      if (isObj(op.responses)) {
        for (const r of Object.values(op.responses)) if (isObj(r) && r.schema) r.schema = refAlone(rewrite(toSwagger2Schema(r.schema)));
      }
    }
  }
  out.tags = documentTags(ops);
  return out;
}

/**
 * `transform` hook (per route, runs before @fastify/swagger's own rewrite, so it still sees
 * `patternProperties`).
 */
export function swagger2Transform<S>({ schema, url }: { schema: S; url: string }): { schema: S; url: string } {
  if (!isObj(schema)) return { schema, url };
  const out: J = { ...schema };
  for (const k of ['body', 'querystring', 'params', 'headers']) if (schema[k]) out[k] = toSwagger2Schema(schema[k]);
  if (isObj(schema.response)) {
    out.response = Object.fromEntries(Object.entries(schema.response).map(([c, s]) => [c, toSwagger2Schema(s)]));
  }
  return { schema: out as S, url };
}
