import type { RouteSpec } from './route.js';

/** Routes of the boards family (owned by the boards service's author). */
export const boardRoutes: RouteSpec[] = [];
