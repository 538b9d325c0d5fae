import type { RouteSpec } from './route.js';

/** Routes of the sprints family (owned by the sprints service's author). */
export const sprintRoutes: RouteSpec[] = [];
