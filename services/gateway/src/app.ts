import { randomUUID } from 'node:crypto';
import fastifyRateLimit from '@fastify/rate-limit';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, {
  LogController, type FastifyBaseLogger, type FastifyInstance, type FastifyReply, type FastifyRequest, type onResponseHookHandler, type RawReplyDefaultExpression, type RawRequestDefaultExpression, type RawServerDefault,
} from 'fastify';
import type { Bus } from '@app/shared/bus';
import type { Clock } from '@app/shared/domain';
import { AppError } from '@app/shared/errors';
import { OutboxPoller, relayOutbox, type EventHub } from '@app/shared/events';
import type { Logger } from '@app/shared/log';
import { statusClass, type HistogramSeries, type Metrics, type Tracer } from '@app/shared/observability';
import type { BackupResult, DocumentStore } from '@app/shared/store';
import { AccessTokenResolver, accessTokenIndexes } from './auth/access-tokens.js';
import { OidcSignIn, oidcSettings } from './auth/oidc.js';
import { auditIndexes } from './auth/audit.js';
import { authIndexes, findUserById } from './auth/users.js';
import { Admission, admissionLimits, AdmittedBus } from './admission/admission.js';
import { APP_NAME, type GatewayConfig } from './config.js';
import { McpEndpoint } from './mcp/server.js';
import { registerJwt } from './plugins/auth.js';
import { installErrorHandlers, sendError } from './plugins/errors.js';
import { registerOpenApi } from './plugins/openapi.js';
import { registerSwagger } from './plugins/swagger.js';
import { registerWeb, type SpaFallback } from './plugins/web.js';
import { registerUploads } from './plugins/uploads.js';
import { registerCompression } from './plugins/compress.js';
import { installValidators } from './http/validators.js';
import { DEFAULT_STREAM_OPTIONS, EventStreams, type StreamOptions } from './events/stream.js';
import type { LocalDeps } from './routes/local.js';
import type { RouteSpec } from './routes/route.js';
import { registerBusRoutes, registerLocalRoutes, tokenRateLimit } from './routes/register.js';
import { allRoutes, localRoutes } from './routes/table.js';

/** Largest accepted request body: 1 MiB; larger is 413 `PAYLOAD_TOO_LARGE`. */
export const BODY_LIMIT = 1024 * 1024;

/**
 * Longest path parameter the router matches (Fastify's default is 100, and a longer one was a 400
 * before authentication). Set to Node's default request-header limit (16 KiB), which already
 * bounds the whole request line, so any id that reaches the router is matched: the request is then
 * authenticated first (401) and an id that is no task's or board's answers 404 (docs/http.md).
 */
export const MAX_PARAM_LENGTH = 16 * 1024;

/** What the gateway is built from (docs/architecture.md §10: typed deps; `main.ts` creates them). */
export interface GatewayDeps {
  bus: Bus;
  store: DocumentStore;
  clock: Clock;
  log: Logger;
  config: GatewayConfig;
  /** The bus route table; default {@link allRoutes}. Tests pass small stub tables. */
  routes?: readonly RouteSpec[];
  /**
   * Folder of the built web board served at `/` (docs/web.md); default `web/dist` of
   * this repository. `false` serves no board (every unmatched path is the JSON 404).
   */
  webRoot?: string | false;
  /**
   * Live source of the event stream: `main.ts` passes the JetStream feed when on NATS;
   * default an {@link OutboxPoller} on `store` (the embedded default), closed with the app.
   */
  events?: EventHub;
  /** Stream limits and timing; defaults from the config (`EVENT_STREAMS_PER_USER`) and {@link DEFAULT_STREAM_OPTIONS}. */
  streamOptions?: Partial<StreamOptions>;
  /**
   * The process's metrics (docs/observability.md): HTTP request durations, open event streams,
   * and `GET /metrics` on `PORT` unless `METRICS_PORT` moves it. Absent: nothing is measured.
   */
  metrics?: Metrics | undefined;
  /**
   * The process's tracer when tracing is on (docs/observability.md "Traces"): HTTP requests then
   * become spans (@fastify/otel, of the tracer provider the process registered), and the default
   * outbox poller's polls make none (a relay pass of it that numbers writes is an `events.relay` span).
   */
  tracer?: Tracer | undefined;
  /** The HTTP client OpenID Connect sign-in uses to reach the provider (default the global `fetch`). */
  oidcFetch?: typeof fetch;
  /** Backs up the running embedded store (`POST /api/v1/admin/backup`); main.ts passes it when the store is the embedded one. */
  backup?: (file: string) => Promise<BackupResult>;
}

/**
 * The gateway's Fastify instance: Fastify's base logger and the TypeBox type provider, as in
 * `@fastify/type-provider-typebox`'s own examples.
 */
export type GatewayApp = FastifyInstance<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, FastifyBaseLogger, TypeBoxTypeProvider>;

/**
 * Times every HTTP answer into `http_request_duration_seconds` by route template (`unmatched` when
 * no route matched), method and status class.
 */
function measureRequests(app: FastifyInstance, metrics: Metrics): void {
  /**
   * The observer of one route template: its series by method and status class, each found once
   * (an observation builds no label string and no key: docs/bench.md "Per-request cost by layer").
   */
  const observerOf = (url: string) => {
    const byMethod = new Map<string, Array<HistogramSeries | undefined>>();
    return (req: FastifyRequest, reply: FastifyReply): void => {
      const status = reply.statusCode;
      const cls = Math.floor(status / 100);
      let byClass = byMethod.get(req.method);
      if (!byClass) byMethod.set(req.method, (byClass = []));
      let series = byClass[cls];
      if (!series) byClass[cls] = series = metrics.httpDuration.labels(url, req.method, statusClass(status));
      series.observe(reply.elapsedTime / 1000);
    };
  };
  // Each route's own hook knows its template: `req.routeOptions` would build a copy of the
  // route's options on every request (docs/bench.md "Where a request's time goes").
  app.addHook('onRoute', (route) => {
    const observe = observerOf(route.url);
    const measured: onResponseHookHandler = (req, reply, done) => {
      observe(req, reply);
      done();
    };
    const own = route.onResponse;
    route.onResponse = own === undefined ? [measured] : [...(Array.isArray(own) ? own : [own]), measured];
  });
  // a request no route matched (Fastify's 404 handler is no route)
  const unmatched = observerOf('unmatched');
  app.addHook('onResponse', (req, reply, done) => {
    if (req.is404) unmatched(req, reply);
    done();
  });
}

/**
 * JSON is the only body type (others: 400 `BAD_REQUEST`). An empty body sent as
 * `application/json` reads as no body (Fastify's default parser answers 400 to it); anything else
 * goes through Fastify's own JSON parser (prototype-poisoning safe).
 */
function jsonBodiesOnly(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    if (body === '') done(null, undefined);
    else parseJson(req, body as string, done);
  });
}

/** Longest client `x-request-id` kept, in characters (docs/http.md "Requests"). */
export const REQUEST_ID_MAX = 128;

/**
 * The id of a request: the client's `x-request-id` when it has 1..{@link REQUEST_ID_MAX}
 * characters and no control character (U+0000–U+001F, U+007F), else a new UUID, so what is echoed
 * and logged is always short and printable.
 */
export function requestId(header: string | string[] | undefined): string {
  const h = Array.isArray(header) ? header[0] : header;
  // eslint-disable-next-line no-control-regex
  return h !== undefined && h.length > 0 && h.length <= REQUEST_ID_MAX && !/[\u0000-\u001f\u007f]/.test(h) ? h : randomUUID();
}

/**
 * Builds the HTTP gateway (docs/architecture.md §1, §4, §5, §9) without listening: the route table forwarded
 * over `bus` (one round trip per request), local auth/health/token routes on `store`, JWT and
 * personal access token auth, rate limits on login/register and per access token, admission
 * control and cost budgets per principal in front of the bus (admission/admission.ts), Swagger 2.0 at `/api/v1/swagger.json` and the UI at `/docs`, OpenAPI 3.1 at `/api/v1/openapi.json`, and the
 * built web board at `/` (plugins/web.ts).
 * Ensures the auth indexes before returning a ready instance (the admin bootstrap is
 * `ensureAdmin`, called by `main.ts`). Tests call `app.inject()`; `main.ts` calls `listen()`.
 *
 * Validation (http/validators.ts, docs/http.md): bodies are not type-coerced, path and query
 * values are; an unknown body field is a 400 naming it on the target paths and dropped on the
 * legacy ones (docs/compat.md); `allErrors` names every field at fault.
 * Per-request log lines appear at `debug` level only; errors are logged where their status is decided.
 */
export async function buildApp(deps: GatewayDeps): Promise<GatewayApp> {
  const { bus, store, clock, log, config } = deps;
  const perRequestLogs = log.isLevelEnabled('debug');
  // The logger is typed as Fastify's base logger (pino's own Logger type is wider than Fastify's),
  // and the instance keeps its TypeBox type provider: a route declared on it with a TypeBox schema
  // reads `req.body` typed. Route table rows are typed by their own schemas (routes/route.ts).
  const app = Fastify<RawServerDefault, RawRequestDefaultExpression, RawReplyDefaultExpression, FastifyBaseLogger>({
    loggerInstance: log,
    // the client's x-request-id when it is a usable one, else a new UUID (requestId)
    requestIdHeader: false,
    genReqId: (req) => requestId(req.headers['x-request-id']),
    bodyLimit: BODY_LIMIT,
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    // Per-request lines only at debug level: they cost ~10% of throughput on the hot path.
    logController: new LogController({ disableRequestLogging: !perRequestLogs }),
    // Below debug level nothing logs per request but errors, which name the request id
    // themselves (plugins/errors.ts): no child logger is made per request (~3 % of a detail read).
    childLoggerFactory: (logger, bindings, opts) => (perRequestLogs ? logger.child(bindings, opts) : logger),
    frameworkErrors: (err, req, reply) => {
      sendError(err, req, reply);
    },
  }).withTypeProvider<TypeBoxTypeProvider>();
  if (deps.tracer) {
    // before every route and hook, so that each request's span covers them (the SDK is loaded only when tracing)
    const { FastifyOtelInstrumentation } = await import('@fastify/otel');
    await app.register(new FastifyOtelInstrumentation({ instrumentHooks: false }).plugin());
  }
  if (deps.metrics) measureRequests(app, deps.metrics);

  // The SPA fallback is filled in once the web plugin is registered; the 404 handler asks it first.
  let spaFallback: SpaFallback | undefined;
  installErrorHandlers(app, (req, reply) => spaFallback?.(req, reply) ?? false);
  installValidators(app);
  // Bus replies are passed through as JSON text; response schemas serve Swagger only.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  jsonBodiesOnly(app);
  await registerUploads(app);
  app.addHook('onRequest', (req, reply, done) => {
    reply.header('x-request-id', req.id);
    done();
  });

  await registerJwt(app, { secret: config.JWT_SECRET, expiresInSeconds: config.JWT_EXPIRATION_MINUTES * 60 });
  await app.register(fastifyRateLimit, { global: false, errorResponseBuilder: () => new AppError('RATE_LIMITED') });
  // before every route: the plugin attaches itself to each route as it is declared (plugins/compress.ts)
  await registerCompression(app);
  await registerSwagger(app, { title: APP_NAME, version: config.APP_VERSION });
  registerOpenApi(app, { title: APP_NAME, version: config.APP_VERSION });

  await store.ensureIndexes([...authIndexes, ...accessTokenIndexes, ...auditIndexes]);
  const accessTokens = new AccessTokenResolver(store, clock);
  app.decorate('accessTokens', accessTokens);
  app.decorate('userExists', async (userId: string) => (await findUserById(store, userId)) !== null);

  // The embedded default's poller also runs a relay pass before each read (numbering the outbox
  // when no running relay holds the lease, e.g. a gateway built without background work).
  const { tracer } = deps;
  const hub = deps.events ?? new OutboxPoller(store, { log, tracer, relay: () => relayOutbox(store, { tracer }) });
  const streams = new EventStreams(store, hub, { ...DEFAULT_STREAM_OPTIONS, perUser: config.EVENT_STREAMS_PER_USER, ...deps.streamOptions });
  app.addHook('preClose', async () => {
    streams.closeAll();
    if (!deps.events) await hub.close();
  });
  if (deps.metrics) {
    const stop = deps.metrics.observe('events_sse_streams_open', () => streams.total);
    app.addHook('onClose', async () => stop());
  }
  // admission control (docs/http.md "Fair use"): every request of a principal, REST or MCP, passes it before the bus
  const admission = new Admission(admissionLimits(config), deps.metrics);
  const gate = new AdmittedBus(bus, admission);
  app.addHook('onClose', async () => admission.close());
  const oidc = oidcSettings(config);
  const localDeps: LocalDeps = {
    ...(oidc ? { oidc: new OidcSignIn(oidc, clock, config.JWT_SECRET, deps.oidcFetch) } : {}),
    ...(deps.backup ? { backup: deps.backup } : {}),
    bus: gate, store, clock, config, streams, accessTokens, mcp: new McpEndpoint(gate, allRoutes, { name: APP_NAME, version: config.APP_VERSION }, { admission }), signAccessToken: (claims) => app.jwt.sign(claims), ...(deps.metrics ? { metrics: deps.metrics } : {}),
  };
  const perToken = [tokenRateLimit(app, config.RATE_LIMIT_TOKEN_MAX)];
  registerBusRoutes(app, gate, deps.routes ?? allRoutes, perToken);
  registerLocalRoutes(app, localDeps, localRoutes, perToken);
  if (deps.webRoot !== false) spaFallback = await registerWeb(app, deps.webRoot);
  await app.ready();
  return app;
}
