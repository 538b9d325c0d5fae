import { adminRoutes } from './admin.js';
import { auditRoutes } from './audit.js';
import { authRoutes } from './auth.js';
import { boardRoutes } from './boards.js';
import { customFieldRoutes } from './custom-fields.js';
import { eventRoutes, eventStreamRoutes } from './events.js';
import { exportRoutes } from './exports.js';
import { flowRoutes } from './flow.js';
import { healthRoutes } from './health.js';
import { importRoutes } from './imports.js';
import { leaseRoutes } from './leases.js';
import type { LocalRoute } from './local.js';
import { mcpRoutes } from './mcp.js';
import { oidcRoutes } from './oidc.js';
import { queryRoutes } from './query.js';
import type { RouteSpec } from './route.js';
import { sprintRoutes } from './sprints.js';
import { taskRoutes } from './tasks.js';
import { tokenRoutes } from './tokens.js';
import { viewRoutes } from './views.js';

/**
 * The gateway's route table (docs/architecture.md §9), as data: every bus-forwarded route of the four families.
 * Registration, Swagger and the route tests all read it.
 */
export const allRoutes: readonly RouteSpec[] = [...taskRoutes, ...boardRoutes, ...leaseRoutes, ...queryRoutes, ...sprintRoutes, ...eventRoutes, ...viewRoutes, ...flowRoutes, ...importRoutes, ...customFieldRoutes];

/** Routes the gateway answers itself: auth (password and OpenID Connect), health, version (public), the event stream, access tokens, the audit log and MCP (authenticated). */
export const localRoutes: readonly LocalRoute[] = [...authRoutes, ...oidcRoutes, ...healthRoutes, ...eventStreamRoutes, ...tokenRoutes, ...auditRoutes, ...mcpRoutes, ...exportRoutes, ...adminRoutes];
