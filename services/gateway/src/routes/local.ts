import type { TObject, TSchema } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Bus } from '@app/shared/bus';
import type { Scope } from '@app/shared/contracts';
import type { Clock } from '@app/shared/domain';
import type { Metrics } from '@app/shared/observability';
import type { BackupResult, DocumentStore } from '@app/shared/store';
import type { AccessTokenResolver } from '../auth/access-tokens.js';
import type { GatewayConfig } from '../config.js';
import type { McpEndpoint } from '../mcp/server.js';
import type { OidcSignIn } from '../auth/oidc.js';
import type { EventStreams } from '../events/stream.js';
import type { AccessClaims } from '../plugins/auth.js';
import type { Method, RequestOf } from './route.js';

/**
 * `{url, aliases}` of an auth route: at the root (`/auth/v2/login`, docs/architecture.md §5) and under the one
 * base URL a ud client is given (`/api/v1/auth/v2/login`, docs/compat.md).
 */
export function authAt(path: string): { url: string; aliases: string[] } {
  return { url: path, aliases: [`/api/v1${path}`] };
}

/** What a gateway-local route's handler may use. */
export interface LocalDeps {
  bus: Bus;
  store: DocumentStore;
  clock: Clock;
  config: GatewayConfig;
  /** Signs an access token (HS256, `JWT_EXPIRATION_MINUTES`). */
  signAccessToken(claims: AccessClaims): string;
  /** The event stream server. */
  streams: EventStreams;
  /** Resolves personal access tokens; the token routes evict a revoked one from it. */
  accessTokens: AccessTokenResolver;
  /** The MCP endpoint's tools and resources. */
  mcp: McpEndpoint;
  /** OpenID Connect sign-in, when configured (`OIDC_ISSUER` …; docs/auth.md). */
  oidc?: OidcSignIn;
  /** The process's metrics, served by `GET /metrics`; absent when metrics are off. */
  metrics?: Metrics;
  /** Backs up the running embedded store into a file (the admin route); absent on MongoDB. */
  backup?: (file: string) => Promise<BackupResult>;
}

/**
 * One row of the gateway's local table: routes answered by the gateway itself, without the bus
 * (auth, health, version: public, docs/architecture.md §5; the event stream: authenticated). Listed
 * in Swagger like the bus routes.
 */
export interface LocalRoute<B extends TObject | undefined = TObject | undefined, Q extends TObject | undefined = TObject | undefined> {
  method: Method;
  url: string;
  /**
   * More paths answering the same row: same handler, validation and rate-limit budget (one
   * counter per client IP across all of them). Auth answers at the root and under `/api/v1`.
   */
  aliases?: readonly string[];
  summary: string;
  /** The documents' `operationId` when the derived one reads badly (docs/http.md "Operation ids"; routes/operation-ids.ts). */
  operationId?: string;
  /** The documents' description of the operation; default: made from the row (summary, auth, rate limit). */
  description?: string;
  tag: string;
  params?: TObject;
  body?: B;
  querystring?: Q;
  /** Request headers the route reads (Swagger; validated like the other parts). */
  headers?: TObject;
  /**
   * Left out of both API documents: a path that answers only an error (405) and is no operation a
   * client calls, e.g. GET and DELETE on the stateless MCP endpoint.
   */
  undocumented?: boolean;
  /**
   * The `WWW-Authenticate` value a 401 from this route carries (the MCP endpoint names its
   * resource metadata, docs/agents.md "Discovery"); made from the request.
   */
  authChallenge?: (req: FastifyRequest) => string;
  /** Needs a bearer token (default false: public). */
  authenticated?: boolean;
  /** The scope a personal access token needs for this route (default `read`); a JWT has every scope. */
  scope?: Scope;
  /** Response media types for Swagger (default JSON), e.g. `text/event-stream`. */
  produces?: string[];
  /** Success response schema (Swagger only). */
  response?: TSchema;
  /** Success status; default 200. */
  status?: number;
  /** Rate limited per client IP (`RATE_LIMIT_AUTH_MAX` per minute): login and register. */
  rateLimited?: boolean;
  /** Returns the success body; errors are thrown as AppError. */
  handle?(req: RequestOf<B, Q, undefined>, deps: LocalDeps): Promise<unknown>;
  /** An answer written to the reply itself instead of `handle` (SSE, a redirect with a cookie); errors before it starts are thrown as AppError. */
  stream?(req: FastifyRequest, reply: FastifyReply, deps: LocalDeps): Promise<void>;
}

/**
 * Declares a local row: the body and query its `handle` reads are typed by the row's own schemas
 * (already validated). Returned as a plain {@link LocalRoute} for the table.
 */
export function localRoute<B extends TObject | undefined = undefined, Q extends TObject | undefined = undefined>(
  row: LocalRoute<B, Q>,
): LocalRoute {
  return row as unknown as LocalRoute;
}
