import {
  BoardQueryBody, BoardQueryParams, BoardQueryResult, BoardSummaryResult, ColumnQueryBody, ColumnQueryParams, ColumnQueryResult,
  QueryOps, SummaryQuerystring, TasksQueryBody, TasksQueryResult,
} from '@app/shared/contracts';
import { route, type RouteSpec } from './route.js';

/** The body when the client sent none: every field of these bodies is optional. */
const bodyOf = <B>(body: unknown): B => (body ?? {}) as B;

/**
 * Routes of the query family (SPEC "Sprint rhythm / POST /api/v1/tasks/query", "Board
 * day-to-day"; DESIGN §1: every read of task lists). Draft ops exist only at target paths.
 */
export const queryRoutes: RouteSpec[] = [
  route({
    method: 'POST',
    url: '/api/v1/tasks/query',
    legacy: [{ url: '/api/v1/todolist/query' }],
    op: QueryOps.tasks,
    input: (req) => bodyOf<TasksQueryBody>(req.body),
    summary: 'Query the tasks the caller can read (backlog views, sprint member lists, ad-hoc slices)',
    tag: 'tasks',
    maturity: 'live',
    body: TasksQueryBody,
    response: TasksQueryResult,
  }),
  route({
    method: 'POST',
    url: '/api/v1/boards/:boardId/query',
    legacy: [{ url: '/api/v1/kanban/boards/:boardId/query' }],
    op: QueryOps.board,
    input: (req) => ({ boardId: req.params.boardId!, ...bodyOf<BoardQueryBody>(req.body) }),
    summary: "Free query within one board's visibility scope",
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
    input: (req) => ({ boardId: req.params.boardId!, columnId: req.params.columnId!, ...bodyOf<ColumnQueryBody>(req.body) }),
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
    input: (req) => ({ boardId: req.params.boardId!, ...(req.query as SummaryQuerystring) }),
    summary: 'Per-column card counts, title previews and WIP flags of a board',
    tag: 'boards',
    maturity: 'draft',
    params: BoardQueryParams,
    querystring: SummaryQuerystring,
    response: BoardSummaryResult,
  }),
];
