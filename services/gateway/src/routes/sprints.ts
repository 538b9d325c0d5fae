import { CloseSprintBody, CloseSprintResult, SprintParams, SprintsOps } from '@app/shared/contracts';
import { route, type RouteSpec } from './route.js';

/** Routes of the sprints family (SPEC "Sprint rhythm"). */
export const sprintRoutes: RouteSpec[] = [
  route({
    method: 'POST',
    url: '/api/v1/tasks/:sprintId/close-sprint',
    legacy: [{ url: '/api/v1/todolist/:sprintId/close-sprint' }],
    op: SprintsOps.close,
    // An omitted body arrives as {} (register.ts); it is legal when no member is unfinished.
    input: (req) => ({ sprintId: req.params.sprintId!, ...(req.body as CloseSprintBody) }),
    summary: 'Close a sprint: roll unfinished members to the target, settle velocity, write the retro note, repoint boards',
    tag: 'sprints',
    maturity: 'live',
    params: SprintParams,
    body: CloseSprintBody,
    response: CloseSprintResult,
  }),
];
