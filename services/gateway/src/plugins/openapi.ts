import type { FastifyInstance, RouteOptions } from 'fastify';
import { bodyRequired, documentTags, schemaNamer } from '../http/components.js';
import { BEARER } from '../routes/register.js';

/** Where the OpenAPI 3.1 document is served (docs/http.md "OpenAPI"), beside the Swagger 2.0 one. */
export const OPENAPI_PATH = '/api/v1/openapi.json';

type J = Record<string, unknown>;
const isObj = (v: unknown): v is J => typeof v === 'object' && v !== null && !Array.isArray(v);

/** HTTP methods a document lists (Fastify's implicit HEAD twins of GET routes are left out). */
const LISTED = new Set(['get', 'post', 'put', 'patch', 'delete']);

/**
 * A route schema part as OpenAPI 3.1 takes it: JSON Schema 2020-12, so TypeBox output passes
 * nearly as is. Symbols (TypeBox kinds) and `$id` are dropped, and a reference to a shared
 * schema by its id (`ErrorBody`) points into `components/schemas`. Pure.
 */
export function toOpenApiSchema(input: unknown): unknown {
  if (Array.isArray(input)) return input.map(toOpenApiSchema);
  if (!isObj(input)) return input;
  const out: J = {};
  for (const [k, v] of Object.entries(input)) {
    if (k === '$id') continue;
    if (k === '$ref' && typeof v === 'string' && !v.startsWith('#')) out.$ref = `#/components/schemas/${v.replace(/#$/, '')}`;
    else out[k] = toOpenApiSchema(v);
  }
  return out;
}

/** `/api/v1/tasks/:taskId` → `/api/v1/tasks/{taskId}`. */
function openApiPath(url: string): string {
  return url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

/** Path, query and header parameters of a route from its schema parts. */
function parametersOf(schema: J): J[] {
  const out: J[] = [];
  for (const [part, where] of [['params', 'path'], ['querystring', 'query'], ['headers', 'header']] as const) {
    const s = schema[part];
    if (!isObj(s) || !isObj(s.properties)) continue;
    const required = new Set(Array.isArray(s.required) ? (s.required as string[]) : []);
    for (const [name, prop] of Object.entries(s.properties)) {
      const p = toOpenApiSchema(prop) as J;
      const { description, ...rest } = p;
      out.push({ name, in: where, required: where === 'path' || required.has(name), ...(description === undefined ? {} : { description }), schema: rest });
    }
  }
  return out;
}

/** The responses object of a route: each status with its schema, `default` the error body. */
function responsesOf(schema: J, produces: string[]): J {
  const out: J = {};
  for (const [code, s] of Object.entries(isObj(schema.response) ? schema.response : {})) {
    const { description, ...body } = toOpenApiSchema(s) as J;
    const text = typeof description === 'string' ? description : 'Success';
    const empty = code === '204' || body.type === 'null';
    out[code] = empty ? { description: text } : { description: text, content: Object.fromEntries(produces.map((m) => [m, { schema: body }])) };
  }
  return out;
}

/** One operation object from a registered route's Fastify schema. */
function operationOf(schema: J): J {
  const produces = Array.isArray(schema.produces) ? (schema.produces as string[]) : ['application/json'];
  const op: J = {};
  for (const k of ['operationId', 'summary', 'description', 'tags', 'security', 'deprecated', 'x-maturity']) if (schema[k] !== undefined) op[k] = schema[k];
  const parameters = parametersOf(schema);
  if (parameters.length > 0) op.parameters = parameters;
  if (schema.body !== undefined) {
    const body = toOpenApiSchema(schema.body) as J;
    op.requestBody = {
      required: bodyRequired(body),
      ...(typeof body.description === 'string' ? { description: body.description } : {}),
      content: { 'application/json': { schema: body } },
    };
  }
  op.responses = responsesOf(schema, produces);
  return op;
}

/** An operation with its request, response and parameter schemas' copies of the named resources as `$ref`s. */
function nameSchemas(op: J, rewrite: (s: unknown) => unknown): J {
  const media = (content: unknown) => {
    for (const m of Object.values(isObj(content) ? content : {})) if (isObj(m) && m.schema !== undefined) m.schema = rewrite(m.schema);
  };
  if (isObj(op.requestBody)) media(op.requestBody.content);
  for (const r of Object.values(isObj(op.responses) ? op.responses : {})) if (isObj(r)) media(r.content);
  for (const p of Array.isArray(op.parameters) ? (op.parameters as J[]) : []) p.schema = rewrite(p.schema);
  return op;
}

/**
 * Serves an OpenAPI 3.1 document of every listed route at {@link OPENAPI_PATH} (docs/http.md
 * "OpenAPI"). It collects each route as it is registered (the route table's rows, bus and local,
 * with the very schemas Swagger 2.0 is made from; hidden routes are left out), so it must be
 * registered before the routes. Unlike Swagger 2.0 it keeps JSON Schema as it is (unions, `null`,
 * `const`), and bearer auth is an HTTP bearer scheme that takes a JWT or an access token.
 */
export function registerOpenApi(app: FastifyInstance, info: { title: string; version: string }): void {
  const routes: Array<{ method: string; url: string; schema: J }> = [];
  app.addHook('onRoute', (r: RouteOptions) => {
    const schema = r.schema as J | undefined;
    if (!schema || schema.hide === true) return;
    for (const m of [r.method].flat()) {
      const method = String(m).toLowerCase();
      if (LISTED.has(method)) routes.push({ method, url: r.url, schema });
    }
  });
  let doc: J | undefined;
  const build = (): J => {
    const { components, rewrite } = schemaNamer(toOpenApiSchema, (name) => `#/components/schemas/${name}`, true);
    const paths: Record<string, J> = {};
    for (const r of routes) (paths[openApiPath(r.url)] ??= {})[r.method] = nameSchemas(operationOf(r.schema), rewrite);
    return {
      openapi: '3.1.0',
      info: { ...info, description: 'Boards, columns, cards (tasks), sprints and the task query gates. Paths under /api/v1 need a bearer JWT (POST /auth/v2/login) or a personal access token (bts_…, docs/auth.md).' },
      servers: [{ url: '/', description: 'The server that serves this document' }],
      tags: documentTags(routes.map((r) => r.schema)),
      paths,
      components: {
        schemas: components,
        securitySchemes: { [BEARER]: { type: 'http', scheme: 'bearer', description: 'A JWT from login, or a personal access token `bts_…`' } },
      },
    };
  };
  app.get(OPENAPI_PATH, { schema: { hide: true } }, async () => (doc ??= build()));
}
