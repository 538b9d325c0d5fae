import { Type, type TSchema } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema, onRequestHookHandler, RouteOptions } from 'fastify';
import { Headers, type Bus, type CallMeta, type ReplyMeta } from '@app/shared/bus';
import { scopeOf, scopesAllow, type Scope } from '@app/shared/contracts';
import { AppError } from '@app/shared/errors';
import { noneMatchHits } from '@app/shared/domain';
import { ErrorBodySchema } from '../http/error-mapping.js';
import { authenticate } from '../plugins/auth.js';
import { sendError } from '../plugins/errors.js';
import type { LocalDeps, LocalRoute } from './local.js';
import { idFromPath, operationIdOf } from './operation-ids.js';
import type { Method, RouteRequest, RouteSpec } from './route.js';

/** Name of the bearer scheme in Swagger's `securityDefinitions`. */
export const BEARER = 'bearerAuth';

/** Client requests per IP per minute on rate-limited routes is `RATE_LIMIT_AUTH_MAX` over this window. */
const RATE_WINDOW_MS = 60_000;

function toRouteRequest(req: FastifyRequest): RouteRequest {
  const out: RouteRequest = { params: req.params as Record<string, string>, query: req.query as Record<string, unknown>, body: req.body, requestId: req.id, ip: req.ip };
  if (req.user) out.user = req.user;
  return out;
}

/** `url` with its `:name` segments replaced by the request's (encoded) path parameters. */
export function fillPath(url: string, params: Record<string, string>): string {
  return url.replace(/:([A-Za-z0-9_]+)/g, (_, name: string) => encodeURIComponent(params[name] ?? ''));
}

/** Names of a path's `:params`, in order. */
export function pathParams(url: string): string[] {
  return [...url.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1]!);
}

/**
 * A missing or empty body reads as `{}` when the route has a body schema, so an all-optional body
 * may be omitted (close-sprint) and a missing required field is named, instead of "body must be object".
 */
async function defaultBody(req: FastifyRequest): Promise<void> {
  if (req.body === undefined || req.body === null) req.body = {};
}

/**
 * The per-token rate limit (docs/auth.md "Access tokens"): `max` requests per minute for each
 * personal access token, counted across every route; JWT requests are not counted here. Runs
 * after `authenticate` (it reads `req.user.grant`).
 */
export function tokenRateLimit(app: FastifyInstance, max: number): onRequestHookHandler {
  const limit = app.rateLimit({ max, timeWindow: RATE_WINDOW_MS, keyGenerator: (req) => `token:${req.user?.grant?.tokenId ?? ''}` });
  // A JWT request passes at once: the limiter is an async hook (a few awaits and a copy of the
  // route's options per call), which cost every read several µs (docs/bench.md "Where a
  // request's time goes"). A token's request runs it, its outcome passed on as the hook's.
  return (req, reply, done) => {
    if (!req.user?.grant) return done();
    (limit as unknown as (req: FastifyRequest, reply: FastifyReply) => Promise<void>)(req, reply).then(() => done(), done);
  };
}

/** `onRequest` hook of a gateway route needing `scope` from a personal access token: 403 `INSUFFICIENT_SCOPE` without it. */
export function requireScope(scope: Scope): onRequestHookHandler {
  return (req, _reply, done) => {
    const grant = req.user?.grant;
    if (grant && !scopesAllow(grant.scopes, scope)) {
      return done(new AppError('INSUFFICIENT_SCOPE', { message: `This access token lacks the ${scope} scope`, details: { required: scope, scopes: grant.scopes } }));
    }
    done();
  };
}

/** Operation ids already given on an app: every operation's id is unique in its documents. */
const givenIds = new WeakMap<FastifyInstance, Set<string>>();

/**
 * A unique operation id for a row on `app` (docs/http.md "Operation ids"): the row's id, or, when
 * another row already has it (two routes of one op), the one made from its method and path, then
 * with a number. Remembers the id (and its `Legacy`/`Alias` forms) as given.
 */
function uniqueOperationId(app: FastifyInstance, row: Parameters<typeof operationIdOf>[0]): string {
  let given = givenIds.get(app);
  if (!given) givenIds.set(app, (given = new Set()));
  const first = operationIdOf(row);
  let id = given.has(first) ? idFromPath(row.method, row.url) : first;
  for (let n = 2; given.has(id); n++) id = `${idFromPath(row.method, row.url)}${n}`;
  given.add(id);
  return id;
}

/** Methods that write: they accept `Idempotency-Key`. */
const WRITES = new Set<Method>(['POST', 'PUT', 'PATCH', 'DELETE']);

/** `Idempotency-Key`: 1..255 visible ASCII characters. */
const IdempotencyKey = Type.String({
  minLength: 1, maxLength: 255, pattern: '^[\\x21-\\x7E]+$',
  description: 'makes a retry safe: the first answer (not a 5xx) is stored 24 h per user, method and path, and replayed byte for byte with `Idempotency-Replayed: true`; another body with the same key → 422',
});
/** `If-Match`: `*` or a list of entity tags (RFC 9110). */
const IfMatch = Type.String({
  pattern: '^\\s*(\\*|(W/)?"[^"]*"(\\s*,\\s*(W/)?"[^"]*")*)\\s*$',
  description: 'write only if the resource is at this version (its ETag, e.g. `"3"`), else 412; `*`: if it exists',
});
const IfNoneMatch = Type.String({ description: 'an ETag seen before (e.g. `"3"`): 304 with no body while the resource is unchanged' });

/** The request headers a bus row declares (validated by Fastify, shown in Swagger), or none. */
function headersOf(spec: RouteSpec) {
  const write = WRITES.has(spec.method);
  if (!write && !spec.conditional) return undefined;
  const props: Record<string, TSchema> = {};
  if (write) props['idempotency-key'] = Type.Optional(IdempotencyKey);
  if (write && spec.conditional) props['if-match'] = Type.Optional(IfMatch);
  if (!write && spec.conditional) props['if-none-match'] = Type.Optional(IfNoneMatch);
  return Type.Object(props);
}

/** One header value (the first, when repeated). */
function header(req: FastifyRequest, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** Sets the reply headers a bus reply's meta calls for: `ETag` and `Idempotency-Replayed`. */
function applyMeta(reply: FastifyReply, meta: ReplyMeta): void {
  if (meta.version !== undefined) reply.header('etag', `"${meta.version}"`);
  if (meta.replayed) reply.header(Headers.replayed, 'true');
}

/** What the registrar needs to register and describe one route (bus or local). */
interface RouteDescription {
  method: Method;
  url: string;
  summary: string;
  /** The document's `operationId` (docs/http.md "Operation ids"). */
  operationId: string;
  /** The operation's description: what it does beyond the summary (auth, versions, dry run). */
  description: string;
  tag: string;
  isPublic: boolean;
  params?: TSchema | undefined;
  querystring?: TSchema | undefined;
  body?: TSchema | undefined;
  response?: TSchema | undefined;
  headers?: TSchema | undefined;
  status: number;
  /** More success answers for Swagger (status → schema and description), e.g. a dry run's 200. */
  alternatives?: Record<number, { schema: TSchema; description: string }> | undefined;
  extra?: Record<string, unknown>;
  bodyLimit?: number | undefined;
}

/** The Fastify `schema` of a route: validation parts plus the Swagger fields. */
function schemaOf(d: RouteDescription): FastifySchema {
  const success = d.response ?? (d.status === 204 ? Type.Null() : Type.Unknown());
  const schema: Record<string, unknown> = {
    summary: d.summary,
    operationId: d.operationId,
    description: d.description,
    tags: [d.tag],
    security: d.isPublic ? [] : [{ [BEARER]: [] }],
    response: {
      ...Object.fromEntries(Object.entries(d.alternatives ?? {}).map(([code, alt]) => [code, { ...alt.schema, description: alt.description }])),
      [d.status]: { ...success, description: d.status === 204 ? 'No content' : 'Success' },
      default: { ...Type.Ref(ErrorBodySchema), description: 'Error (see docs/errors.md)' },
    },
    ...d.extra,
  };
  if (d.params) schema.params = d.params;
  if (d.querystring) schema.querystring = d.querystring;
  if (d.body) schema.body = d.body;
  if (d.headers) schema.headers = d.headers;
  return schema as FastifySchema;
}

function routeOptions(d: RouteDescription, handler: RouteOptions['handler'], onRequest: onRequestHookHandler[], challenge?: (req: FastifyRequest) => string): RouteOptions {
  return {
    method: d.method,
    url: d.url,
    schema: schemaOf(d),
    onRequest,
    ...(challenge ? { onSend: challengeOn401(challenge) } : {}),
    ...(d.body ? { preValidation: defaultBody } : {}),
    ...(d.bodyLimit !== undefined ? { bodyLimit: d.bodyLimit } : {}),
    handler,
  };
}

/** An `onSend` hook adding `WWW-Authenticate: <challenge(req)>` to the route's 401 answers. */
function challengeOn401(challenge: (req: FastifyRequest) => string) {
  return async (req: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    if (reply.statusCode === 401) reply.header('www-authenticate', challenge(req));
    return payload;
  };
}

/** The other success answers of a row for Swagger: a dry run's 200, the 204 of a `null` reply. */
function alternativesOf(spec: RouteSpec, status: number): RouteDescription['alternatives'] {
  const alts: NonNullable<RouteDescription['alternatives']> = {};
  if (spec.dryRun && status !== 200) alts[200] = { schema: spec.dryRun.response, description: 'Success (dry run: nothing written)' };
  if (spec.noContentWhenNull) alts[204] = { schema: Type.Null(), description: 'No content (nothing to answer, e.g. no card free to claim)' };
  return Object.keys(alts).length > 0 ? alts : undefined;
}

/**
 * The description of a bus route's operation in the API documents, from its row: the summary,
 * then what the row adds (versions, dry run, the 204, draft). Pure.
 */
function busDescription(spec: RouteSpec): string {
  const parts = [`${spec.summary}.`, 'Needs a bearer token (a JWT from login, or an access token with the scope the operation needs: docs/auth.md).'];
  if (spec.conditional) {
    parts.push(WRITES.has(spec.method)
      ? 'The answer carries the resource\'s `ETag`; `If-Match` makes the write conditional (412 when the version moved on).'
      : 'The answer carries the resource\'s `ETag`; `If-None-Match` with it answers 304 while unchanged.');
  }
  if (spec.dryRun) parts.push('`?dry_run=true` answers what would be written (200) and writes nothing.');
  if (spec.noContentWhenNull) parts.push('204 when there is nothing to answer.');
  if (WRITES.has(spec.method)) parts.push('`Idempotency-Key` makes a retry safe (docs/http.md).');
  if (spec.maturity === 'draft') parts.push('Draft: the shape may still change.');
  return parts.join(' ');
}

/** The description of a gateway-local route's operation in the API documents, from its row. Pure. */
function localDescription(r: LocalRoute): string {
  const parts = [`${r.summary}.`];
  parts.push(r.authenticated ? `Needs a bearer token (an access token needs the \`${r.scope ?? 'read'}\` scope).` : 'Public: no token needed.');
  if (r.rateLimited) parts.push('Rate limited per client address (429 with `Retry-After`).');
  if (r.aliases?.length) parts.push(`Also answers at ${r.aliases.join(', ')}.`);
  return parts.join(' ');
}

/**
 * Registers every bus route of the table (docs/architecture.md §9) at its target path and at each legacy path.
 * Each request: auth (onRequest) → schema validation → exactly one `bus.requestReply` → the reply
 * text passed through unparsed (204: no body). Legacy answers carry `Deprecation: true` and a
 * `Link` to the target path. Throws at start-up for a draft route with legacy paths.
 * A row with `dryRun` sends a request carrying `?dry_run=true` to its dry-run op instead, answered 200.
 * `If-Match` and `Idempotency-Key` travel as bus headers (the key scoped to the method
 * and path); the reply's version becomes the `ETag`, and a GET whose `If-None-Match` names it
 * answers 304 with no body; a replayed answer carries `Idempotency-Replayed: true`.
 * A request made with a personal access token carries its grant to the service (which checks the
 * op's scope and the token's boards) and counts against `perToken` (the per-token rate limit).
 */
export function registerBusRoutes(app: FastifyInstance, bus: Bus, routes: readonly RouteSpec[], perToken: onRequestHookHandler[] = []): void {
  for (const spec of routes) {
    if (spec.maturity === 'draft' && spec.legacy?.length) {
      throw new Error(`Draft route ${spec.method} ${spec.url} must not have legacy paths (docs/architecture.md §9)`);
    }
    const status = spec.status ?? 200;
    const write = WRITES.has(spec.method);
    const forward = async (req: FastifyRequest, reply: FastifyReply) => {
      const meta: CallMeta = { requestId: req.id, userId: req.user.sub, sourceAddress: req.ip };
      if (req.user.grant) meta.grant = req.user.grant;
      const traceparent = req.headers.traceparent;
      if (typeof traceparent === 'string') meta.traceparent = traceparent;
      if (write) {
        const key = header(req, 'idempotency-key');
        if (key !== undefined) {
          meta.idempotencyKey = key;
          meta.idempotencyScope = `${req.method} ${req.url.split('?')[0]}`;
        }
        const ifMatch = spec.conditional ? header(req, 'if-match') : undefined;
        if (ifMatch !== undefined) meta.ifMatch = ifMatch;
      }
      // `?dry_run=true`, or `dry_run: true` in a body whose schema has it (imports)
      const dryRun = spec.dryRun !== undefined && ((req.query as Record<string, unknown>).dry_run === true || (req.body as Record<string, unknown> | undefined)?.dry_run === true);
      const out = await bus.requestReply(dryRun ? spec.dryRun!.op : spec.op, spec.input(toRouteRequest(req)), meta);
      applyMeta(reply, out.meta);
      if (!out.ok) return sendError(out.error, req, reply, out.meta.traceId);
      if (dryRun) return reply.code(200).type('application/json').send(out.text);
      if (status === 204 || (spec.noContentWhenNull && out.text === 'null')) return reply.code(204).send();
      if (!write && out.meta.version !== undefined) {
        const noneMatch = header(req, 'if-none-match');
        if (noneMatch !== undefined && noneMatchHits(noneMatch, out.meta.version)) return reply.code(304).send();
      }
      return reply.code(status).type('application/json').send(out.text);
    };
    const operationId = uniqueOperationId(app, spec);
    const target: RouteDescription = {
      method: spec.method,
      url: spec.url,
      summary: spec.summary,
      operationId,
      description: spec.description ?? busDescription(spec),
      tag: spec.tag,
      isPublic: false,
      params: spec.params,
      querystring: spec.querystring,
      body: spec.body,
      response: spec.response,
      headers: headersOf(spec),
      status,
      alternatives: alternativesOf(spec, status),
      extra: { 'x-maturity': spec.maturity },
      bodyLimit: spec.bodyLimit,
    };
    // the token's scope is checked before the body's schema (docs/auth.md): a request the token may
    // not make learns nothing about its input; the service checks it again
    const scoped = requireScope(scopeOf(spec.op));
    app.route(routeOptions(target, forward, [authenticate, ...perToken, scoped]));
    for (const [i, legacy] of (spec.legacy ?? []).entries()) {
      const successor: onRequestHookHandler = async (req, reply) => {
        const q = req.url.indexOf('?');
        const successorUrl = fillPath(spec.url, req.params as Record<string, string>) + (q >= 0 ? req.url.slice(q) : '');
        reply.header('deprecation', 'true').header('link', `<${successorUrl}>; rel="successor-version"`);
      };
      const legacyDescription: RouteDescription = {
        ...target,
        method: legacy.method ?? spec.method,
        url: legacy.url,
        summary: `${spec.summary} (legacy path)`,
        operationId: `${operationId}Legacy${i === 0 ? '' : i + 1}`,
        description: `Deprecated: use ${spec.method} ${spec.url.replace(/:([A-Za-z0-9_]+)/g, '{$1}')} (\`${operationId}\`), which answers the same. ${target.description}`,
        extra: { ...target.extra, deprecated: true },
      };
      app.route(routeOptions(legacyDescription, forward, [successor, authenticate, ...perToken, scoped]));
    }
  }
}

/**
 * Registers the gateway's own routes (auth, health, version, the event stream) with the same
 * validation and Swagger treatment as bus routes: public unless `authenticated`; `rateLimited`
 * rows get @fastify/rate-limit per client IP (one budget across the row's path and `aliases`);
 * an authenticated row counts against `perToken` (the per-token limit) and needs its `scope` from a token;
 * `stream` rows write their own long-lived answer; each row answers at `url` and at its `aliases`.
 */
export function registerLocalRoutes(app: FastifyInstance, deps: LocalDeps, routes: readonly LocalRoute[], perToken: onRequestHookHandler[] = []): void {
  for (const r of routes) {
    const status = r.status ?? 200;
    const handler = r.stream
      ? async (req: FastifyRequest, reply: FastifyReply) => r.stream!(req, reply, deps)
      : async (req: FastifyRequest, reply: FastifyReply) => reply.code(status).send(await r.handle!(toRouteRequest(req), deps));
    // One limiter per row, shared by all of its paths: a client gets one budget, not one per alias.
    const onRequest: onRequestHookHandler[] = [];
    if (r.rateLimited) onRequest.push(app.rateLimit({ max: deps.config.RATE_LIMIT_AUTH_MAX, timeWindow: RATE_WINDOW_MS }));
    if (r.authenticated) onRequest.push(authenticate, ...perToken, requireScope(r.scope ?? 'read'));
    const operationId = uniqueOperationId(app, r);
    const description = r.description ?? localDescription(r);
    for (const [i, url] of [r.url, ...(r.aliases ?? [])].entries()) {
      app.route(routeOptions(
        {
          method: r.method, url, summary: r.summary, tag: r.tag, description,
          operationId: i === 0 ? operationId : `${operationId}Alias${i === 1 ? '' : i}`, isPublic: !r.authenticated, params: r.params, body: r.body,
          querystring: r.querystring, headers: r.headers, response: r.response, status,
          extra: { ...(r.produces ? { produces: r.produces } : {}), ...(r.undocumented ? { hide: true } : {}) },
        },
        handler,
        onRequest,
        r.authChallenge,
      ));
    }
  }
}
