import type { RouteSpec } from './route.js';

/** Routes of the query family (owned by the query service's author). */
export const queryRoutes: RouteSpec[] = [];
