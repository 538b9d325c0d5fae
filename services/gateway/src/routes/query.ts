import {
  BoardQueryBody, BoardQueryParams, BoardQueryResult, BoardSummaryResult, ColumnQueryBody, ColumnQueryParams, ColumnQueryResult,
  QueryOps, QueryValidateBody, QueryValidateResult, SummaryQuerystring, TasksQueryBody, TasksQueryResult,
} from '@app/shared/contracts';
import { boardsAt, route, tasksAt, type RouteSpec } from './route.js';

/** The body when the client sent none: every field of these bodies is optional. */

/**
 * Routes of the query family (docs/query-service.md: the global task query and the board
 * reads; docs/architecture.md §1: every read of task lists). Draft ops exist only at target paths.
 */
export const queryRoutes: RouteSpec[] = [
  route({
    method: 'POST',
    ...tasksAt('/query'),
    op: QueryOps.tasks,
    input: (req) => req.body,
    summary: 'Query the tasks the caller can read (backlog views, sprint member lists, ad-hoc slices)',
    tag: 'tasks',
    maturity: 'live',
    body: TasksQueryBody,
    response: TasksQueryResult,
  }),
  route({
    method: 'POST',
    url: '/api/v1/tasks/query/validate',
    op: QueryOps.validate,
    input: (req) => req.body,
    summary: 'Check query text without running it: faults with position, length and suggestion, and the canonical text',
    tag: 'tasks',
    maturity: 'draft',
    body: QueryValidateBody,
    response: QueryValidateResult,
  }),
  route({
    method: 'POST',
    ...boardsAt('/:boardId/query'),
    op: QueryOps.board,
    input: (req) => ({ ...req.body, boardId: req.params.boardId! }),
    summary: "Free query within one board's scope (what its readers can read)",
    tag: 'boards',
    maturity: 'live',
    params: BoardQueryParams,
    body: BoardQueryBody,
    response: BoardQueryResult,
  }),
  route({
    method: 'POST',
    url: '/api/v1/boards/:boardId/columns/:columnId/query',
    op: QueryOps.column,
    input: (req) => ({ ...req.body, boardId: req.params.boardId!, columnId: req.params.columnId! }),
    summary: 'Read one column: column query + default_tags + sprint + filter, echoed as effective_query',
    tag: 'boards',
    maturity: 'draft',
    params: ColumnQueryParams,
    body: ColumnQueryBody,
    response: ColumnQueryResult,
  }),
  route({
    method: 'GET',
    url: '/api/v1/boards/:boardId/summary',
    op: QueryOps.summary,
    input: (req) => ({ ...req.query, boardId: req.params.boardId! }),
    summary: 'Per-column card counts, title previews and WIP flags of a board',
    tag: 'boards',
    maturity: 'draft',
    params: BoardQueryParams,
    querystring: SummaryQuerystring,
    response: BoardSummaryResult,
  }),
];
