import { Type, type Static } from '@sinclair/typebox';
import { Board } from './boards.js';
import { op } from './op.js';
import { busRequest, MetadataObject, Page, PageSize, PathId, StringEnum } from './schemas.js';
import { Task, TaskLease } from './tasks.js';

/** Query text in the query language (docs/architecture.md §6). */
const QueryText = Type.String({ description: 'query language text, e.g. `status = \'todo\' ORDER BY metadata.order ASC`' });
/** `active` (default: the board's running sprint), `none` (no sprint clause) or a sprint id (docs/query-service.md "Choices where SPEC is silent"). */
const SprintChoice = Type.String({ minLength: 1, default: 'active', description: '`active`, `none` or a sprint id' });

/** Sort override of the global query (SortDTO): an API field and a direction. */
export const SortDTO = Type.Object(
  {
    column: Type.String({ minLength: 1, description: 'a query field, e.g. `created_at`, `title`, `metadata.order`, `cf.priority`' }),
    direction: StringEnum(['asc', 'desc']),
  },
);
export type SortDTO = Static<typeof SortDTO>;

/*
 * HTTP body schemas carry `additionalProperties: false` (an unknown field: 400 on the target paths,
 * dropped on the legacy ones, docs/compat.md); the bus requests are built from the same properties
 * without it (`busRequest`).
 */

/** Body of `POST /api/v1/tasks/query` (docs/query-service.md). */
export const TasksQueryBody = Type.Object(
  {
    query: Type.Optional(QueryText),
    sort: Type.Optional(SortDTO),
    page: Type.Optional(Page),
    pageSize: Type.Optional(PageSize),
    view: Type.Optional(StringEnum(['', 'full', 'lite'], { description: '`lite` omits description' })),
  },
  { additionalProperties: false },
);
export type TasksQueryBody = Static<typeof TasksQueryBody>;

/** Reply of the global query: a page of tasks (`view` applied) with `total` and `totalPages`. */
export const TasksQueryResult = Type.Object({
  data: Type.Array(Task),
  total: Type.Integer(),
  page: Type.Integer(),
  pageSize: Type.Integer(),
  totalPages: Type.Integer(),
});

/** Body of `POST /api/v1/boards/:boardId/query` (docs/query-service.md). */
export const BoardQueryBody = Type.Object(
  {
    query: Type.Optional(QueryText),
    page: Type.Optional(Page),
    page_size: Type.Optional(PageSize),
  },
  { additionalProperties: false },
);
export type BoardQueryBody = Static<typeof BoardQueryBody>;

/** Reply of the board query: a page of full task objects within the board's scope. */
export const BoardQueryResult = Type.Object({
  data: Type.Array(Task),
  total: Type.Integer(),
  page: Type.Integer(),
});

/** Body of `POST /api/v1/boards/:boardId/columns/:columnId/query` (Draft). */
export const ColumnQueryBody = Type.Object(
  {
    sprint: Type.Optional(SprintChoice),
    filter: Type.Optional(Type.String({ description: 'query fragment ANDed onto the column query' })),
    page: Type.Optional(Page),
    page_size: Type.Optional(PageSize),
  },
  { additionalProperties: false },
);
export type ColumnQueryBody = Static<typeof ColumnQueryBody>;

/**
 * A card as the column read returns it. Metadata keys are the API keys (`app.sprint`). `assignee`
 * is absent when unset (the web board shows it on the card); `lease` only on a claimed card.
 */
export const ColumnCard = Type.Object({
  id: Type.String(),
  title: Type.String(),
  status: Type.String(),
  tags: Type.Array(Type.String()),
  assignee: Type.Optional(Type.String()),
  metadata: MetadataObject(),
  lease: Type.Optional(TaskLease),
});
export type ColumnCard = Static<typeof ColumnCard>;

/** Reply of the column read (Draft): a page of cards and the `effective_query` that selected them. */
export const ColumnQueryResult = Type.Object({
  data: Type.Array(ColumnCard),
  total: Type.Integer(),
  page: Type.Integer(),
  page_size: Type.Integer(),
  effective_query: Type.String({ description: 'the server-built query, in canonical form' }),
});

/** Query string of `GET /api/v1/boards/:boardId/summary` (Draft). */
export const SummaryQuerystring = Type.Object(
  {
    sprint: Type.Optional(SprintChoice),
    preview: Type.Optional(Type.Integer({ minimum: 0, maximum: 200, default: 3, description: 'card titles per column; 0 = counts only' })),
  },
  { additionalProperties: false },
);
export type SummaryQuerystring = Static<typeof SummaryQuerystring>;

/** One column of the board summary: its card count and the titles of its first `preview` cards. */
export const ColumnSummary = Type.Object({
  column_id: Type.String(),
  name: Type.String(),
  total: Type.Integer(),
  preview: Type.Array(Type.String(), { description: 'titles of the first cards in column order' }),
  wip_limit: Type.Optional(Type.Integer()),
  over_wip_limit: Type.Optional(Type.Boolean({ description: 'total > wip_limit; present when the column has a WIP limit' })),
});

/** Reply of the board summary (Draft), columns in board order. */
export const BoardSummaryResult = Type.Object({
  board_id: Type.String(),
  name: Type.String(),
  active_sprint_id: Type.Optional(Type.String({ description: 'absent when the board has no running sprint' })),
  columns: Type.Array(ColumnSummary),
});

/** Query string of `GET /api/v1/boards/:boardId/tasks` (ud's board read). */
export const BoardTasksQuerystring = Type.Object(
  {
    page_size: Type.Optional(Type.Integer({ minimum: 0, maximum: 200, default: 20, description: 'cards per column (the first page), 0..200; 0 = counts only' })),
    sprint: Type.Optional(SprintChoice),
  },
  { additionalProperties: false },
);
export type BoardTasksQuerystring = Static<typeof BoardTasksQuerystring>;

/**
 * Reply of the board read (ud's `BoardTasksResponse`): the board, and per column id its full
 * card count and the first page of its cards (full task objects) in column order.
 */
export const BoardTasksResult = Type.Object({
  board: Board,
  column_counts: Type.Object({}, { additionalProperties: Type.Integer(), description: 'column id → number of cards in the column' }),
  column_tasks: Type.Object({}, { additionalProperties: Type.Array(Task), description: 'column id → its first `page_size` cards, in column order' }),
});

/** Path parameters of the board query and the summary. Any string: an unknown id is a 404. */
export const BoardQueryParams = Type.Object({ boardId: PathId });
/** Path parameters of the column read. */
export const ColumnQueryParams = Type.Object({ boardId: PathId, columnId: PathId });

/** Query service timeouts: list reads may scan more than point reads. */
const QUERY_TIMEOUT_MS = 10_000;

/**
 * The query service's bus API (docs/architecture.md §1: every read of task lists). Queue group `query`.
 * The caller's user id travels in the bus meta; every read is scoped to what it may read.
 */
/** Body of `POST /api/v1/tasks/query/validate`: the text to check, and the board it would run on. */
export const QueryValidateBody = Type.Object(
  {
    query: Type.String({ description: 'query language text to check (not run)' }),
    board_id: Type.Optional(Type.String({ minLength: 1, description: 'the board the query would run on (allows `activeSprint()`); 404 when the caller cannot read it' })),
  },
  { additionalProperties: false },
);
export type QueryValidateBody = Static<typeof QueryValidateBody>;

/** One fault of a checked query: where (0-based UTF-16 offset), how long, which error, and the nearest name. */
export const QueryFault = Type.Object({
  position: Type.Integer({ minimum: 0 }),
  length: Type.Integer({ minimum: 0 }),
  code: Type.String({ description: 'the error code running the query would answer, e.g. `QUERY_SYNTAX`' }),
  message: Type.String(),
  suggestion: Type.Optional(Type.String({ description: 'the nearest field or function, for an unknown one' })),
});

/** Reply of the validation: `canonical` is the canonical text of a valid query, else null. */
export const QueryValidateResult = Type.Object({
  valid: Type.Boolean(),
  errors: Type.Array(QueryFault),
  canonical: Type.Union([Type.String(), Type.Null()]),
});

export const QueryOps = {
  /** Global task query gate (`POST /api/v1/tasks/query`). */
  tasks: op({ subject: 'query.tasks', request: busRequest({}, TasksQueryBody.properties), response: TasksQueryResult, timeoutMs: QUERY_TIMEOUT_MS }),
  /** Free query within one board's scope (`POST /api/v1/boards/:boardId/query`). */
  board: op({ subject: 'query.board', request: busRequest(BoardQueryParams.properties, BoardQueryBody.properties), response: BoardQueryResult, timeoutMs: QUERY_TIMEOUT_MS }),
  /** One column's cards with the server-built effective query (Draft). */
  column: op({ subject: 'query.column', request: busRequest(ColumnQueryParams.properties, ColumnQueryBody.properties), response: ColumnQueryResult, timeoutMs: QUERY_TIMEOUT_MS }),
  /** The board with every column's count and first page of cards, in one request (ud's `GET /kanban/boards/{id}/tasks`). */
  boardTasks: op({ subject: 'query.boardTasks', request: busRequest(BoardQueryParams.properties, BoardTasksQuerystring.properties), response: BoardTasksResult, timeoutMs: QUERY_TIMEOUT_MS }),
  /** Per-column counts and previews of a board (Draft). */
  summary: op({ subject: 'query.summary', request: busRequest(BoardQueryParams.properties, SummaryQuerystring.properties), response: BoardSummaryResult, timeoutMs: QUERY_TIMEOUT_MS }),
  /** Checks query text without running it (`POST /api/v1/tasks/query/validate`, Draft). */
  validate: op({ subject: 'query.validate', request: busRequest({}, QueryValidateBody.properties), response: QueryValidateResult }),
} as const;
