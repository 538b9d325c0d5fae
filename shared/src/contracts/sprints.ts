import { Type, type Static } from '@sinclair/typebox';
import { op } from './op.js';
import { PathId, StringEnum, Timestamp, busRequest } from './schemas.js';
import { Task, TITLE_MAX } from './tasks.js';

/** The rollover target meaning "take the unfinished members out of any sprint" (docs/sprints.md "Close-sprint"). */
export const BACKLOG = 'backlog';
/** The `target` reported when nothing was unfinished and no rollover was given (docs/sprints.md). */
export const NO_TARGET = 'none';

/** Path parameter `sprintId`. Any string: an unknown id is a 404 `TASK_NOT_FOUND`, not a 400. */
export const SprintParams = Type.Object({ sprintId: Type.String() });

/**
 * HTTP body of `POST /api/v1/tasks/{sprintId}/close-sprint` (docs/sprints.md "Close-sprint"). `rollover` is
 * `backlog` or the id of another open sprint; it may be omitted (or the body left empty) only when
 * no member is unfinished. Swagger-2.0-safe (no unions).
 */
export const CloseSprintBody = Type.Object(
  {
    rollover: Type.Optional(
      Type.String({ minLength: 1, description: '`backlog` or the id of another open sprint; required when members are unfinished' }),
    ),
  },
  { additionalProperties: false },
);
export type CloseSprintBody = Static<typeof CloseSprintBody>;

/** Bus request of `sprints.close`: the path's sprint id plus the body's fields (unknown fields ignored on the bus). */
export const CloseSprintRequest = busRequest(SprintParams.properties, CloseSprintBody.properties);
export type CloseSprintRequest = Static<typeof CloseSprintRequest>;

/**
 * The close outcome (docs/sprints.md "Response 200"). `target` is `backlog`, the target sprint
 * id, or `none` when nothing was unfinished and no rollover was given. `velocity` is the sum of the
 * numeric `app.points` of the finished members (may be fractional).
 */
export const CloseSprintResult = Type.Object({
  sprintId: Type.String(),
  target: Type.String({ description: '`backlog`, the target sprint id, or `none` (nothing to roll, no rollover given)' }),
  completed: Type.Integer({ minimum: 0, description: 'finished members (status `done`)' }),
  rolledOver: Type.Integer({ minimum: 0, description: 'unfinished members moved to the target' }),
  rotatedBoardIds: Type.Array(Type.String(), { description: 'boards whose `activeSprintId` was repointed or cleared' }),
  skippedBoardIds: Type.Array(Type.String(), { description: 'boards pointing at the sprint that the caller can read but not write; left unchanged' }),
  skippedTaskIds: Type.Array(Type.String(), { description: 'unfinished members the caller can read but not write; left in the sprint, unchanged (members it cannot read are not counted or named)' }),
  velocity: Type.Number({ description: 'sum of the numeric `app.points` of the finished members' }),
  startedSprintId: Type.Optional(Type.String({
    description: 'the rollover target, when the close started it: it had no start snapshot and the close pointed boards at it, so it was started in the same transaction with the rolled-over members (absent when it was already running, or for `backlog`/`none`)',
  })),
});
export type CloseSprintResult = Static<typeof CloseSprintResult>;

/** Longest sprint goal (`goal` of a sprint create, kept as metadata `app.goal`), in characters (docs/http.md "Limits"). */
export const SPRINT_GOAL_MAX = 2_000;

/** Path parameter `boardId` of the board-scoped sprint routes. Unknown or unreadable → 404 `BOARD_NOT_FOUND`. */
export const SprintBoardParams = Type.Object({ boardId: PathId });

/**
 * HTTP body of `POST /api/v1/boards/{boardId}/sprints`: the sprint task to create on the
 * board. `goal` is kept as metadata `app.goal`; `kickoff`/`deadline` as on any task (date or RFC 3339
 * with offset). `start: true` also starts it (start snapshot + the board's `activeSprintId`) in the
 * same transaction.
 */
export const CreateSprintBody = Type.Object(
  {
    title: Type.String({ minLength: 1, description: `sprint title, 1..${TITLE_MAX} characters after trimming` }),
    goal: Type.Optional(Type.String({ maxLength: SPRINT_GOAL_MAX, description: `sprint goal, at most ${SPRINT_GOAL_MAX} characters; stored as metadata \`app.goal\`` })),
    kickoff: Type.Optional(Type.String({ maxLength: 64, description: 'planned start: YYYY-MM-DD or RFC 3339 with offset; not after `deadline`' })),
    deadline: Type.Optional(Type.String({ maxLength: 64, description: 'planned end: YYYY-MM-DD or RFC 3339 with offset; the burndown ideal line reaches 0 here' })),
    start: Type.Optional(Type.Boolean({ description: 'start the sprint now (start snapshot, board `activeSprintId`)', default: false })),
  },
  { additionalProperties: false },
);
export type CreateSprintBody = Static<typeof CreateSprintBody>;

/** Query string of `GET /api/v1/boards/{boardId}/sprints`: which sprints to list (default `all`). */
export const ListSprintsQuerystring = Type.Object(
  { state: Type.Optional(StringEnum(['open', 'closed', 'all'], { default: 'all', description: '`open` (status not done), `closed` (done) or `all`' })) },
  { additionalProperties: false },
);
export type ListSprintsQuerystring = Static<typeof ListSprintsQuerystring>;

/** One sprint of a board's sprint list. Points are sums of numeric `app.points`. */
export const SprintSummary = Type.Object({
  id: Type.String(),
  title: Type.String(),
  state: Type.String({ description: '`open` (status is not `done`) or `closed`' }),
  status: Type.String({ description: 'the sprint task\'s status' }),
  active: Type.Boolean({ description: 'true when it is the board\'s `activeSprintId`' }),
  kickoff: Type.Optional(Timestamp),
  deadline: Type.Optional(Timestamp),
  started_at: Type.Optional(Timestamp),
  closed_at: Type.Optional(Timestamp),
  member_count: Type.Integer({ minimum: 0, description: 'members now (open) or at close (closed)' }),
  points_committed: Type.Number({ description: 'points of the members in the start snapshot (not started: of the members now)' }),
  points_done: Type.Number({ description: 'points of the finished members (closed: the velocity)' }),
});
export type SprintSummary = Static<typeof SprintSummary>;

/** Reply of the board's sprint list: oldest first (`created_at`, then id). */
export const SprintList = Type.Array(SprintSummary);
export type SprintList = Static<typeof SprintList>;

/**
 * HTTP body of `POST /api/v1/tasks/{sprintId}/start-sprint`. `board_ids` default: the
 * board the sprint was created on, if any. Each id must be a board the caller can read.
 */
export const StartSprintBody = Type.Object(
  {
    board_ids: Type.Optional(
      Type.Array(Type.String({ minLength: 1 }), { maxItems: 100, description: 'boards whose `activeSprintId` should point at the sprint; default: the sprint\'s own board' }),
    ),
  },
  { additionalProperties: false },
);
export type StartSprintBody = Static<typeof StartSprintBody>;

/** Bus request of `sprints.start`. */
export const StartSprintRequest = busRequest(SprintParams.properties, StartSprintBody.properties);
export type StartSprintRequest = Static<typeof StartSprintRequest>;

/** Reply of start-sprint: the recorded start (replayed unchanged when the sprint was already started). */
export const StartSprintResult = Type.Object({
  sprintId: Type.String(),
  started_at: Timestamp,
  started_by: Type.String(),
  member_count: Type.Integer({ minimum: 0 }),
  total_points: Type.Number({ description: 'sum of the numeric `app.points` of the members at start' }),
  pointedBoardIds: Type.Array(Type.String(), { description: 'boards whose `activeSprintId` now points at the sprint' }),
  skippedBoardIds: Type.Array(Type.String(), { description: 'named boards the caller can read but not write; left unchanged' }),
  replayed: Type.Boolean({ description: 'true when the sprint was already started: nothing was written' }),
});
export type StartSprintResult = Static<typeof StartSprintResult>;

/** A sprint member in a report list: id, title and numeric `app.points` (absent when not a number). */
export const ReportItem = Type.Object({
  id: Type.String(),
  title: Type.String(),
  points: Type.Optional(Type.Number()),
  status: Type.Optional(Type.String({ description: 'status at close (open sprint: now); on rolled-over and remaining items' })),
  target: Type.Optional(Type.String({ description: 'rolled-over items: `backlog` or the sprint they moved to' })),
});
export type ReportItem = Static<typeof ReportItem>;

/** Header of a recorded snapshot (the member lists are the report's lists). */
export const SnapshotHeader = Type.Object({
  taken_at: Timestamp,
  taken_by: Type.String(),
  member_count: Type.Integer({ minimum: 0 }),
  total_points: Type.Number(),
  by_close: Type.Optional(Type.Boolean({ description: 'start snapshot written by the close because the sprint was never started' })),
  target: Type.Optional(Type.String({ description: 'close snapshot: the rollover target (`backlog`, a sprint id, or `none`)' })),
  target_title: Type.Optional(Type.String({ description: 'close snapshot whose target is a sprint: that sprint\'s title at the close' })),
});

/**
 * Reply of `GET /api/v1/tasks/{sprintId}/report` (formulas in docs/sprints.md). A closed
 * sprint's report is read from its frozen snapshots only; an open sprint's (`live: true`) is computed
 * now against its start snapshot (or, not started, its members now).
 */
export const SprintReport = Type.Object({
  sprint_id: Type.String(),
  title: Type.String(),
  state: Type.String({ description: '`open` or `closed`' }),
  live: Type.Boolean({ description: 'true when the figures are computed now (open sprint, or closed before snapshots existed)' }),
  start: Type.Optional(SnapshotHeader),
  close: Type.Optional(SnapshotHeader),
  committed: Type.Array(ReportItem, { description: 'members in the start snapshot, with their points at start' }),
  added: Type.Array(ReportItem, { description: 'members at close (or now) that were not in the start snapshot' }),
  removed: Type.Array(ReportItem, { description: 'start members that were no longer members at close (or now)' }),
  completed: Type.Array(ReportItem, { description: 'members at close (or now) with status `done`' }),
  rolled_over: Type.Array(ReportItem, { description: 'closed: the unfinished members moved at close, with `target`' }),
  remaining: Type.Array(ReportItem, { description: 'open: the unfinished members now' }),
  committed_points: Type.Number(),
  added_points: Type.Number(),
  removed_points: Type.Number(),
  completed_points: Type.Number({ description: 'points of the completed members that were committed' }),
  rolled_over_points: Type.Number(),
  remaining_points: Type.Number(),
  velocity: Type.Number({ description: 'points of every completed member (committed or added)' }),
  completion_ratio: Type.Optional(Type.Number({ description: 'velocity ÷ committed_points, 6 decimals; absent when nothing was committed' })),
});
export type SprintReport = Static<typeof SprintReport>;

/** `last` of the velocity history: default and maximum. */
export const VELOCITY_LAST = { default: 6, max: 50 } as const;

/** Query string of `GET /api/v1/boards/{boardId}/velocity`. */
export const VelocityQuerystring = Type.Object(
  {
    last: Type.Optional(
      Type.Integer({ minimum: 1, maximum: VELOCITY_LAST.max, default: VELOCITY_LAST.default, description: 'how many of the latest closed sprints, 1..50' }),
    ),
  },
  { additionalProperties: false },
);
export type VelocityQuerystring = Static<typeof VelocityQuerystring>;

/** One closed sprint in the velocity history. */
export const VelocityEntry = Type.Object({
  sprint_id: Type.String(),
  title: Type.String({ description: 'the sprint title at close' }),
  closed_at: Timestamp,
  committed_points: Type.Number(),
  completed_points: Type.Number({ description: 'committed points that were completed' }),
  velocity: Type.Number({ description: 'all completed points, added work included' }),
});

/** Reply of the velocity history: the last `last` closed sprints of the board, oldest first, with mean and median velocity. */
export const VelocityResult = Type.Object({
  board_id: Type.String(),
  last: Type.Integer(),
  sprints: Type.Array(VelocityEntry),
  mean: Type.Number({ description: 'mean velocity of `sprints` (0 when empty), 6 decimals' }),
  median: Type.Number({ description: 'median velocity of `sprints` (0 when empty)' }),
});
export type VelocityResult = Static<typeof VelocityResult>;

/** One day of the burndown series (UTC dates). */
export const BurndownDay = Type.Object({
  date: Type.String({ description: 'UTC day, YYYY-MM-DD' }),
  remaining: Type.Union([Type.Number(), Type.Null()], { description: 'points of the unfinished members at the end of the day (today: now; close day: at close); null on days still to come (up to the deadline) and on kickoff days before the start' }),
  scope: Type.Union([Type.Number(), Type.Null()], { description: 'points of all members at the end of the day; null where `remaining` is' }),
  ideal: Type.Number({ description: 'the ideal line: start remaining on the first day (kickoff, or start when earlier) falling linearly to 0 on the deadline (or the last day), 0 after it' }),
});

/**
 * Reply of `GET /api/v1/tasks/{sprintId}/burndown` (computed from the events outbox): one day per
 * UTC day from the kickoff (or the start, when earlier) to the deadline (or the end, when there is
 * none or the sprint ran past it).
 */
export const Burndown = Type.Object({
  sprint_id: Type.String(),
  started_at: Timestamp,
  end: Timestamp,
  closed: Type.Boolean(),
  days: Type.Array(BurndownDay),
});
export type Burndown = Static<typeof Burndown>;

/** Ops of the sprints service (docs/architecture.md §1: sprints = close-sprint; lifecycle and reports). */
export const SprintsOps = {
  /**
   * Closes a sprint in one transaction (docs/architecture.md §8). Errors: 404 `TASK_NOT_FOUND`, 403 `FORBIDDEN`,
   * 400 `NOT_A_SPRINT` | `SPRINT_ROLLOVER_REQUIRED` | `SPRINT_ROLLOVER_INVALID` | `SPRINT_ALREADY_CLOSED`,
   * 503 `STORE_UNAVAILABLE` (nothing written).
   */
  close: op({ subject: 'sprints.close', request: CloseSprintRequest, response: CloseSprintResult, timeoutMs: 15_000 }),
  /**
   * Creates a sprint task on a board, optionally started. Errors: 404 `BOARD_NOT_FOUND`,
   * 403 `FORBIDDEN` (board not writable), 400 `VALIDATION_FAILED`, 503.
   */
  create: op({ subject: 'sprints.create', request: busRequest(SprintBoardParams.properties, CreateSprintBody.properties), response: Task }),
  /** The board's sprints with state and figures. Errors: 404 `BOARD_NOT_FOUND`, 503. */
  list: op({ subject: 'sprints.list', request: busRequest(SprintBoardParams.properties, ListSprintsQuerystring.properties), response: SprintList }),
  /**
   * Starts a sprint: start snapshot + boards' `activeSprintId`. Errors: 404
   * `TASK_NOT_FOUND` | `BOARD_NOT_FOUND`, 403 `FORBIDDEN`, 400 `NOT_A_SPRINT` | `SPRINT_ALREADY_CLOSED`, 503.
   */
  start: op({ subject: 'sprints.start', request: StartSprintRequest, response: StartSprintResult, timeoutMs: 15_000 }),
  /** The sprint report. Errors: 404 `TASK_NOT_FOUND`, 400 `NOT_A_SPRINT`, 503. */
  report: op({ subject: 'sprints.report', request: SprintParams, response: SprintReport }),
  /** Velocity history of a board. Errors: 404 `BOARD_NOT_FOUND`, 400 `VALIDATION_FAILED` (`last`), 503. */
  velocity: op({ subject: 'sprints.velocity', request: busRequest(SprintBoardParams.properties, VelocityQuerystring.properties), response: VelocityResult }),
  /** Burndown series. Errors: 404 `TASK_NOT_FOUND`, 400 `NOT_A_SPRINT` | `SPRINT_NOT_STARTED`, 503. */
  burndown: op({ subject: 'sprints.burndown', request: SprintParams, response: Burndown }),
} as const;
