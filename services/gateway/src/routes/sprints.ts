import {
  Burndown, CloseSprintBody, CloseSprintResult, CreateSprintBody, ListSprintsQuerystring, SprintBoardParams, SprintList, SprintParams,
  SprintReport, SprintsOps, StartSprintBody, StartSprintResult, Task, VelocityQuerystring, VelocityResult,
} from '@app/shared/contracts';
import { route, tasksAt, type RouteSpec } from './route.js';

const draft = { tag: 'sprints', maturity: 'draft' } as const;
const BOARDS = '/api/v1/boards';
const TASKS = '/api/v1/tasks';

/**
 * Routes of the sprints family (docs/sprints.md; lifecycle, report, velocity,
 * burndown). All but close-sprint are Draft: target paths only. One bus request each.
 */
export const sprintRoutes: RouteSpec[] = [
  route({
    method: 'POST',
    ...tasksAt('/:sprintId/close-sprint'),
    op: SprintsOps.close,
    // An omitted body arrives as {} (register.ts); it is legal when no member is unfinished.
    input: (req) => ({ ...req.body, sprintId: req.params.sprintId! }),
    summary: 'Close a sprint: roll unfinished members to the target, settle velocity, write the retro note and the close snapshot, repoint boards',
    tag: 'sprints',
    maturity: 'live',
    params: SprintParams,
    body: CloseSprintBody,
    response: CloseSprintResult,
  }),
  route({
    ...draft,
    method: 'POST',
    url: `${BOARDS}/:boardId/sprints`,
    op: SprintsOps.create,
    input: (req) => ({ ...req.body, boardId: req.params.boardId! }),
    summary: 'Create a sprint on a board (app.type = sprint); with start: true also start it',
    params: SprintBoardParams,
    body: CreateSprintBody,
    response: Task,
    status: 201,
  }),
  route({
    ...draft,
    method: 'GET',
    url: `${BOARDS}/:boardId/sprints`,
    op: SprintsOps.list,
    input: (req) => ({ ...req.query, boardId: req.params.boardId! }),
    summary: "List a board's sprints with state, dates, member count and points",
    params: SprintBoardParams,
    querystring: ListSprintsQuerystring,
    response: SprintList,
  }),
  route({
    ...draft,
    method: 'POST',
    url: `${TASKS}/:sprintId/start-sprint`,
    op: SprintsOps.start,
    // An omitted body arrives as {}: the sprint's own board is pointed at it.
    input: (req) => ({ ...req.body, sprintId: req.params.sprintId! }),
    summary: "Start a sprint: record the start snapshot and point boards' activeSprintId at it (a started sprint replays)",
    params: SprintParams,
    body: StartSprintBody,
    response: StartSprintResult,
  }),
  route({
    ...draft,
    method: 'GET',
    url: `${TASKS}/:sprintId/report`,
    op: SprintsOps.report,
    input: (req) => ({ sprintId: req.params.sprintId! }),
    summary: 'Sprint report: committed, added, removed, completed, rolled over, velocity (frozen once closed)',
    params: SprintParams,
    response: SprintReport,
  }),
  route({
    ...draft,
    method: 'GET',
    url: `${BOARDS}/:boardId/velocity`,
    op: SprintsOps.velocity,
    input: (req) => ({ ...req.query, boardId: req.params.boardId! }),
    summary: "Velocity history of a board's closed sprints, oldest first, with mean and median",
    params: SprintBoardParams,
    querystring: VelocityQuerystring,
    response: VelocityResult,
  }),
  route({
    ...draft,
    method: 'GET',
    url: `${TASKS}/:sprintId/burndown`,
    op: SprintsOps.burndown,
    input: (req) => ({ sprintId: req.params.sprintId! }),
    summary: 'Daily burndown of remaining points from the start to the close (or today), with the ideal line',
    params: SprintParams,
    response: Burndown,
  }),
];
