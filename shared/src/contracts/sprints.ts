import { Type, type Static } from '@sinclair/typebox';
import { op } from './op.js';
import { busRequest } from './schemas.js';

/** The rollover target meaning "take the unfinished members out of any sprint" (SPEC "Sprint rhythm"). */
export const BACKLOG = 'backlog';
/** The `target` reported when nothing was unfinished and no rollover was given (docs/sprints.md). */
export const NO_TARGET = 'none';

/** Path parameter `sprintId`. Any string: an unknown id is a 404 `TASK_NOT_FOUND`, not a 400. */
export const SprintParams = Type.Object({ sprintId: Type.String() });

/**
 * HTTP body of `POST /api/v1/tasks/{sprintId}/close-sprint` (SPEC "Sprint rhythm"). `rollover` is
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

/** Bus request of `sprints.close`: the path's sprint id plus the body's fields (unknown fields ignored). */
export const CloseSprintRequest = busRequest(SprintParams.properties, CloseSprintBody.properties);
export type CloseSprintRequest = Static<typeof CloseSprintRequest>;

/**
 * The close outcome (SPEC "Sprint rhythm", response 200). `target` is `backlog`, the target sprint
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
  velocity: Type.Number({ description: 'sum of the numeric `app.points` of the finished members' }),
});
export type CloseSprintResult = Static<typeof CloseSprintResult>;

/** Ops of the sprints service (DESIGN §1: sprints = close-sprint). */
export const SprintsOps = {
  /**
   * Closes a sprint in one transaction (DESIGN §8). Errors: 404 `TASK_NOT_FOUND`, 403 `FORBIDDEN`,
   * 400 `NOT_A_SPRINT` | `SPRINT_ROLLOVER_REQUIRED` | `SPRINT_ROLLOVER_INVALID` | `SPRINT_ALREADY_CLOSED`,
   * 503 `STORE_UNAVAILABLE` (nothing written).
   */
  close: op({ subject: 'sprints.close', request: CloseSprintRequest, response: CloseSprintResult, timeoutMs: 15_000 }),
} as const;
