import type { RouteSpec } from './route.js';

/** Routes of the tasks family (owned by the tasks service's author). */
export const taskRoutes: RouteSpec[] = [];
