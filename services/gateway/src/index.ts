export { buildApp, BODY_LIMIT, type GatewayApp, type GatewayDeps } from './app.js';
export { GatewayConfig, APP_NAME } from './config.js';
export { ensureAdmin } from './auth/users.js';
export { allRoutes, localRoutes } from './routes/table.js';
export type { RouteSpec, RouteRequest, Method } from './routes/route.js';
export { route } from './routes/route.js';
export type { LocalRoute } from './routes/local.js';
