import { Type, type TSchema } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest, FastifySchema, onRequestHookHandler, RouteOptions } from 'fastify';
import type { Bus, CallMeta } from '@app/shared/bus';
import { ErrorBodySchema } from '../http/error-mapping.js';
import { authenticate } from '../plugins/auth.js';
import type { LocalDeps, LocalRoute } from './local.js';
import type { Method, RouteRequest, RouteSpec } from './route.js';

/** Name of the bearer scheme in Swagger's `securityDefinitions`. */
export const BEARER = 'bearerAuth';

/** Client requests per IP per minute on rate-limited routes is `RATE_LIMIT_AUTH_MAX` over this window. */
const RATE_WINDOW_MS = 60_000;

function toRouteRequest(req: FastifyRequest): RouteRequest {
  return { params: req.params as Record<string, string>, query: req.query as Record<string, unknown>, body: req.body };
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

/** What the registrar needs to register and describe one route (bus or local). */
interface RouteDescription {
  method: Method;
  url: string;
  summary: string;
  tag: string;
  isPublic: boolean;
  params?: TSchema | undefined;
  querystring?: TSchema | undefined;
  body?: TSchema | undefined;
  response?: TSchema | undefined;
  status: number;
  extra?: Record<string, unknown>;
}

/** The Fastify `schema` of a route: validation parts plus the Swagger fields. */
function schemaOf(d: RouteDescription): FastifySchema {
  const success = d.response ?? (d.status === 204 ? Type.Null() : Type.Unknown());
  const schema: Record<string, unknown> = {
    summary: d.summary,
    tags: [d.tag],
    security: d.isPublic ? [] : [{ [BEARER]: [] }],
    response: {
      [d.status]: { ...success, description: d.status === 204 ? 'No content' : 'Success' },
      default: { ...Type.Ref(ErrorBodySchema), description: 'Error (see docs/errors.md)' },
    },
    ...d.extra,
  };
  if (d.params) schema.params = d.params;
  if (d.querystring) schema.querystring = d.querystring;
  if (d.body) schema.body = d.body;
  return schema as FastifySchema;
}

function routeOptions(d: RouteDescription, handler: RouteOptions['handler'], onRequest: onRequestHookHandler[]): RouteOptions {
  return {
    method: d.method,
    url: d.url,
    schema: schemaOf(d),
    onRequest,
    ...(d.body ? { preValidation: defaultBody } : {}),
    handler,
  };
}

/**
 * Registers every bus route of the table (DESIGN §9) at its target path and at each legacy path.
 * Each request: auth (onRequest) → schema validation → exactly one `bus.requestText` → the reply
 * text passed through unparsed (204: no body). Legacy answers carry `Deprecation: true` and a
 * `Link` to the target path. Throws at start-up for a draft route with legacy paths.
 */
export function registerBusRoutes(app: FastifyInstance, bus: Bus, routes: readonly RouteSpec[]): void {
  for (const spec of routes) {
    if (spec.maturity === 'draft' && spec.legacy?.length) {
      throw new Error(`Draft route ${spec.method} ${spec.url} must not have legacy paths (DESIGN §9)`);
    }
    const status = spec.status ?? 200;
    const forward = async (req: FastifyRequest, reply: FastifyReply) => {
      const meta: CallMeta = { requestId: req.id, userId: req.user.sub };
      const traceparent = req.headers.traceparent;
      if (typeof traceparent === 'string') meta.traceparent = traceparent;
      const text = await bus.requestText(spec.op, spec.input(toRouteRequest(req)), meta);
      if (status === 204) return reply.code(204).send();
      return reply.code(status).type('application/json').send(text);
    };
    const target: RouteDescription = {
      method: spec.method,
      url: spec.url,
      summary: spec.summary,
      tag: spec.tag,
      isPublic: false,
      params: spec.params,
      querystring: spec.querystring,
      body: spec.body,
      response: spec.response,
      status,
      extra: { 'x-maturity': spec.maturity },
    };
    app.route(routeOptions(target, forward, [authenticate]));
    for (const legacy of spec.legacy ?? []) {
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
        extra: { ...target.extra, deprecated: true, description: `Deprecated: use ${spec.method} ${spec.url.replace(/:([A-Za-z0-9_]+)/g, '{$1}')}.` },
      };
      app.route(routeOptions(legacyDescription, forward, [successor, authenticate]));
    }
  }
}

/**
 * Registers the gateway's own routes (auth, health, version, the event stream) with the same
 * validation and Swagger treatment as bus routes: public unless `authenticated`; `rateLimited`
 * rows get @fastify/rate-limit per client IP; `stream` rows write their own long-lived answer.
 */
export function registerLocalRoutes(app: FastifyInstance, deps: LocalDeps, routes: readonly LocalRoute[]): void {
  for (const r of routes) {
    const status = r.status ?? 200;
    const handler = r.stream
      ? async (req: FastifyRequest, reply: FastifyReply) => r.stream!(req, reply, deps)
      : async (req: FastifyRequest, reply: FastifyReply) => reply.code(status).send(await r.handle!(toRouteRequest(req), deps));
    const options = routeOptions(
      {
        method: r.method, url: r.url, summary: r.summary, tag: r.tag, isPublic: !r.authenticated, body: r.body,
        querystring: r.querystring, response: r.response, status, ...(r.produces ? { extra: { produces: r.produces } } : {}),
      },
      handler,
      r.authenticated ? [authenticate] : [],
    );
    if (r.rateLimited) options.config = { rateLimit: { max: deps.config.RATE_LIMIT_AUTH_MAX, timeWindow: RATE_WINDOW_MS } };
    app.route(options);
  }
}
