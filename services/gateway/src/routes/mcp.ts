import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { SCOPES } from '@app/shared/contracts';
import { AppError } from '@app/shared/errors';
import type { LocalDeps, LocalRoute } from './local.js';

/** Why GET and DELETE on `/mcp` are refused: the endpoint keeps no sessions and opens no server-sent stream. */
const STATELESS = 'The MCP endpoint is stateless: send each JSON-RPC message with POST /mcp';

/** Where the MCP endpoint's protected resource metadata is (RFC 9728 §3.1: the resource's path after the well-known name). */
export const RESOURCE_METADATA_PATH = '/.well-known/oauth-protected-resource/mcp';

/** `scheme://host[:port]` the request was made to (behind a proxy: as Fastify's `trustProxy` sees it). */
export function originOf(req: FastifyRequest): string {
  return `${req.protocol}://${req.host}`;
}

/**
 * The `WWW-Authenticate` challenge of a 401 from `/mcp` (MCP 2025-06-18 "Authorization", RFC 9728
 * §5.1): a bearer challenge naming where the resource metadata is.
 */
export function mcpChallenge(req: FastifyRequest): string {
  return `Bearer resource_metadata="${originOf(req)}${RESOURCE_METADATA_PATH}"`;
}

/** RFC 9728 protected resource metadata of `/mcp`, as this gateway serves it. */
const ResourceMetadata = Type.Object({
  resource: Type.String({ description: 'the MCP endpoint, `<origin>/mcp`' }),
  authorization_servers: Type.Array(Type.String(), { description: 'the OpenID Connect issuer users sign in with' }),
  bearer_methods_supported: Type.Array(Type.String(), { description: '`header`: `Authorization: Bearer <token>`' }),
  scopes_supported: Type.Array(Type.String(), { description: 'the scopes of an access token' }),
  resource_name: Type.String(),
  resource_documentation: Type.String({ description: 'where the endpoint is described' }),
}, { description: 'RFC 9728 protected resource metadata' });

/**
 * The metadata document (RFC 9728 §2) when OpenID Connect is configured: the resource is this
 * server's `/mcp` and its authorization server the issuer. Without OpenID Connect there is no
 * authorization server a client could get a token from (access tokens are made in the web app or
 * with `POST /api/v1/tokens`), so the document is a JSON 404 naming that.
 */
function resourceMetadata(req: FastifyRequest, deps: LocalDeps): unknown {
  if (!deps.oidc || !deps.config.OIDC_ISSUER) {
    throw new AppError('NOT_FOUND', { message: 'No OAuth authorization server is configured: call /mcp with an access token (POST /api/v1/tokens) or a JWT from login (docs/agents.md)' });
  }
  const origin = originOf(req);
  return {
    resource: `${origin}/mcp`,
    authorization_servers: [deps.config.OIDC_ISSUER.replace(/\/$/, '')],
    bearer_methods_supported: ['header'],
    scopes_supported: [...SCOPES],
    resource_name: 'Board and Task Service MCP endpoint',
    resource_documentation: `${origin}/docs`,
  };
}

/** A JSON-RPC 2.0 message as POST /mcp takes it (MCP 2025-06-18 "Base protocol"). */
const JsonRpcMessage = Type.Object({
  jsonrpc: Type.Literal('2.0', { description: 'always `2.0`' }),
  id: Type.Optional(Type.Union([Type.String(), Type.Integer()], { description: 'the request id; absent in a notification' })),
  method: Type.Optional(Type.String({ description: 'e.g. `initialize`, `tools/list`, `tools/call`, `resources/read`' })),
  params: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'the method\'s parameters' })),
  result: Type.Optional(Type.Unknown({ description: 'a response\'s result' })),
  error: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'a response\'s error' })),
}, { additionalProperties: true, description: 'One JSON-RPC 2.0 request, notification or response' });

/**
 * The MCP endpoint (docs/agents.md): Streamable HTTP, stateless, authenticated by an access token
 * or a JWT (a 401 names the resource metadata in `WWW-Authenticate`). Each tool it lists maps to
 * one route of the table (mcp/tools.ts). Beside it, the RFC 9728 metadata a client discovers the
 * authorization server from.
 */
export const mcpRoutes: LocalRoute[] = [
  {
    method: 'POST',
    url: '/mcp',
    summary: 'Model Context Protocol (Streamable HTTP, stateless, JSON answers): the curated tools and resources of docs/agents.md',
    tag: 'mcp',
    authenticated: true,
    authChallenge: mcpChallenge,
    body: JsonRpcMessage,
    response: Type.Object({}, { additionalProperties: true, description: 'the JSON-RPC response (202 with no body for a notification)' }),
    stream: (req, reply, deps) => deps.mcp.handle(req, reply),
  },
  ...(['GET', 'DELETE'] as const).map((method): LocalRoute => ({
    method,
    url: '/mcp',
    summary: `${method} is not served: the MCP endpoint is stateless (405)`,
    tag: 'mcp',
    authenticated: true,
    authChallenge: mcpChallenge,
    undocumented: true,
    status: 405,
    async handle() {
      throw new AppError('METHOD_NOT_ALLOWED', { message: STATELESS });
    },
  })),
  {
    method: 'GET',
    url: RESOURCE_METADATA_PATH,
    aliases: ['/.well-known/oauth-protected-resource'],
    operationId: 'getMcpResourceMetadata',
    summary: 'OAuth protected resource metadata of /mcp (RFC 9728): its OpenID Connect issuer; 404 without OpenID Connect',
    tag: 'mcp',
    response: ResourceMetadata,
    stream: async (req, reply, deps) => {
      const body = resourceMetadata(req, deps);
      await reply.code(200).header('cache-control', 'public, max-age=300').send(body);
    },
  },
];
