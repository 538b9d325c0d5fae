import { Type, type Static } from '@sinclair/typebox';
import { AppliedAction } from './boards.js';
import { op } from './op.js';
import { busRequest, PathId } from './schemas.js';
import { Task } from './tasks.js';

/**
 * Contracts of cards claimed under a lease (docs/boards.md "Claiming a card under a lease"): claim
 * the first free card of a column, renew, complete (optionally moving the card) and release. Served
 * by the boards service beside the card move, subjects `boards.<verb>`. HTTP bodies carry
 * `additionalProperties: false`; bus requests are the path parameters plus the body's properties.
 * Swagger-2.0-safe.
 */

/** Shortest and longest lease a claim or renewal may ask for, in seconds. */
export const LEASE_SECONDS_MIN = 1;
export const LEASE_SECONDS_MAX = 3600;

const LeaseSeconds = (description: string) => Type.Integer({ minimum: LEASE_SECONDS_MIN, maximum: LEASE_SECONDS_MAX, description });
const LeaseId = Type.String({ minLength: 1, description: 'the `lease_id` the claim answered' });

/** Path parameters of the claim. */
export const ClaimParams = Type.Object({ boardId: PathId, columnId: PathId });
/** Path parameter of the lease operations on one card. */
export const LeaseTaskParams = Type.Object({ taskId: PathId });

/** Body of `POST /boards/{boardId}/columns/{columnId}/claim`. */
export const ClaimBody = Type.Object(
  {
    query: Type.Optional(Type.String({ maxLength: 10_000, description: 'query fragment ANDed onto the column query (as the column read\'s `filter`): only cards that match it are claimed' })),
    lease_seconds: LeaseSeconds(`how long the lease lasts, in seconds (${LEASE_SECONDS_MIN}..${LEASE_SECONDS_MAX}); it ends by itself unless renewed`),
  },
  { additionalProperties: false },
);
export type ClaimBody = Static<typeof ClaimBody>;

/** Body of `POST /tasks/{taskId}/lease/renew`. */
export const LeaseRenewBody = Type.Object(
  {
    lease_id: LeaseId,
    lease_seconds: Type.Optional(LeaseSeconds('the new lease length from now, in seconds; default the length the claim asked for')),
  },
  { additionalProperties: false },
);
export type LeaseRenewBody = Static<typeof LeaseRenewBody>;

/** Body of `POST /tasks/{taskId}/lease/complete`. */
export const LeaseCompleteBody = Type.Object(
  {
    lease_id: LeaseId,
    to_column_id: Type.Optional(Type.String({ minLength: 1, description: 'move the card from the column it was claimed from to this one (the column actions apply, exactly as a move); absent: the card stays where it is' })),
  },
  { additionalProperties: false },
);
export type LeaseCompleteBody = Static<typeof LeaseCompleteBody>;

/** Body of `POST /tasks/{taskId}/lease/release`. */
export const LeaseReleaseBody = Type.Object({ lease_id: LeaseId }, { additionalProperties: false });
export type LeaseReleaseBody = Static<typeof LeaseReleaseBody>;

/** Reply of a claim and of a renewal: the lease and the card as it is now (`task.lease` holds the same lease). */
export const CardLease = Type.Object({
  lease_id: Type.String(),
  expires_at: Type.String({ format: 'date-time', description: 'the lease is live before this instant' }),
  task: Task,
});
export type CardLease = Static<typeof CardLease>;

/** Reply of complete: the card after it (no lease), and the actions its move applied (empty without `to_column_id`). */
export const LeaseCompleteResult = Type.Object({
  task: Task,
  applied_actions: Type.Array(AppliedAction),
});
export type LeaseCompleteResult = Static<typeof LeaseCompleteResult>;

/**
 * The lease operations of the boards service. The claim replies `null` when no card is free
 * (HTTP 204). Errors: 404 `BOARD_NOT_FOUND` / `COLUMN_NOT_FOUND` / `TASK_NOT_FOUND`, 403 without
 * board write access, 400 for a bad `query`, 409 `LEASE_NOT_HELD` / `LEASE_EXPIRED` when the
 * caller does not hold a live lease with that id; complete with `to_column_id` also answers as a
 * move (409 `KANBAN_TASK_NOT_IN_SOURCE_COLUMN`, 422 `KANBAN_TARGET_COLUMN_UNREACHABLE`).
 */
export const LeasesOps = {
  claim: op({
    subject: 'boards.claim',
    request: busRequest(ClaimParams.properties, ClaimBody.properties),
    response: Type.Union([CardLease, Type.Null()]),
    versionOf: (r) => r?.task.version,
  }),
  renew: op({ subject: 'boards.renewLease', request: busRequest(LeaseTaskParams.properties, LeaseRenewBody.properties), response: CardLease, versionOf: (r) => r.task.version }),
  complete: op({
    subject: 'boards.completeLease',
    request: busRequest(LeaseTaskParams.properties, LeaseCompleteBody.properties),
    response: LeaseCompleteResult,
    versionOf: (r) => r.task.version,
  }),
  release: op({ subject: 'boards.releaseLease', request: busRequest(LeaseTaskParams.properties, LeaseReleaseBody.properties), response: Task, versionOf: (t) => t.version }),
} as const;
