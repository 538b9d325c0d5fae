import { AppError } from '@app/shared/errors';
import type { LocalRoute } from './local.js';

/** Why GET and DELETE on `/mcp` are refused: the endpoint keeps no sessions and opens no server-sent stream. */
const STATELESS = 'The MCP endpoint is stateless: send each JSON-RPC message with POST /mcp';

/**
 * The MCP endpoint (docs/agents.md): Streamable HTTP, stateless, authenticated by an access token
 * or a JWT. Each tool it lists maps to one route of the table (mcp/tools.ts).
 */
export const mcpRoutes: LocalRoute[] = [
  {
    method: 'POST',
    url: '/mcp',
    summary: 'Model Context Protocol (Streamable HTTP, stateless, JSON answers): the curated tools and resources of docs/agents.md',
    tag: 'mcp',
    authenticated: true,
    stream: (req, reply, deps) => deps.mcp.handle(req, reply),
  },
  ...(['GET', 'DELETE'] as const).map((method): LocalRoute => ({
    method,
    url: '/mcp',
    summary: `${method} is not served: the MCP endpoint is stateless (405)`,
    tag: 'mcp',
    authenticated: true,
    undocumented: true,
    status: 405,
    async handle() {
      throw new AppError('METHOD_NOT_ALLOWED', { message: STATELESS });
    },
  })),
];
