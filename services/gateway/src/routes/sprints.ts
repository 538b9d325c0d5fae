import { CloseSprintBody, CloseSprintResult, SprintParams, SprintsOps } from '@app/shared/contracts';
import { route, tasksAt, type RouteSpec } from './route.js';

/** Routes of the sprints family (SPEC "Sprint rhythm"). */
export const sprintRoutes: RouteSpec[] = [
  route({
    method: 'POST',
    ...tasksAt('/:sprintId/close-sprint'),
    op: SprintsOps.close,
    // An omitted body arrives as {} (register.ts); it is legal when no member is unfinished.
    input: (req) => ({ ...(req.body as CloseSprintBody), sprintId: req.params.sprintId! }),
    summary: 'Close a sprint: roll unfinished members to the target, settle velocity, write the retro note, repoint boards',
    tag: 'sprints',
    maturity: 'live',
    params: SprintParams,
    body: CloseSprintBody,
    response: CloseSprintResult,
  }),
];
