/**
 * The one error catalogue (docs/architecture.md §4). Every error the service returns has a code from here;
 * the HTTP status is decided here and nowhere else. `docs/errors.md` is generated from this
 * object (`npm run docs:errors`) and a unit test keeps the two in step.
 *
 * Each entry: `status` (HTTP status), `message` (default human message), `when` (docs text).
 */
export const ErrorCodes = {
  VALIDATION_FAILED: { status: 400, message: 'The request is invalid', when: 'A body, path or query field is missing, of the wrong type or out of range; `validationErrors` names each field.' },
  BAD_REQUEST: { status: 400, message: 'The request could not be read', when: 'Malformed JSON or an unreadable request.' },
  QUERY_SYNTAX: { status: 400, message: 'The query has a syntax error', when: 'A query, filter or column query does not parse; `details.position` is the 0-based offset of the fault.' },
  QUERY_UNKNOWN_FIELD: { status: 400, message: 'The query names an unknown field', when: 'A query uses a bare identifier that is not a field; `details.field`, `details.position` and `details.suggestion` say which.' },
  QUERY_UNKNOWN_FUNCTION: { status: 400, message: 'The query calls an unknown function', when: 'A query calls a function that does not exist; `details.function`, `details.position` and `details.suggestion` (the nearest function) say which.' },
  QUERY_FUNCTION_CONTEXT: { status: 400, message: 'The query function needs a board', when: '`activeSprint()` without a board id is used where the query runs on no board (the global query, a webhook without `board_id`, a view without `board_id`); `details.position` points at it.' },
  QUERY_TOO_LONG: { status: 400, message: 'The query is too long', when: 'Query text over 10,000 characters.' },
  QUERY_TOO_COSTLY: { status: 400, message: 'The query would cost too much to run', when: 'A query past a cost limit of docs/query-language.md "Cost limits" (nesting, list size, wildcard runs, a deep page sorted by title or description); `details: {rule, limit, position}`. Nothing was scanned.' },
  ASSIGNEE_NOT_FOUND: { status: 400, message: 'The assignee is not a known user', when: 'A task write names an assignee that is no user id.' },
  NOT_A_SPRINT: { status: 400, message: 'The task is not a sprint', when: 'A sprint operation (close, start, report, burndown) on a task whose `app.type` is not `sprint`.' },
  SPRINT_NOT_STARTED: { status: 400, message: 'The sprint has not been started', when: 'Burndown of an open sprint that has no start snapshot; start it with start-sprint first.' },
  SPRINT_ROLLOVER_REQUIRED: { status: 400, message: 'Unfinished members exist and no rollover target was given', when: 'close-sprint without `rollover` while members are unfinished; `details.unfinished` lists them.' },
  SPRINT_ROLLOVER_INVALID: { status: 400, message: 'The rollover target is not an open sprint', when: 'close-sprint with a `rollover` that is neither `backlog` nor the id of another open sprint.' },
  SPRINT_ALREADY_CLOSED: { status: 400, message: 'The sprint is already closed with another rollover', when: 'close-sprint again on a closed sprint with a different `rollover`, or start-sprint on a closed sprint.' },
  WEBHOOK_URL_REFUSED: { status: 400, message: 'The webhook URL is not allowed', when: 'A webhook URL that is not http(s), or (with `NODE_ENV=production`) resolves to a private, loopback or link-local address not listed in `WEBHOOK_ALLOWED_HOSTS`; `details.reason` says which.' },
  CUSTOM_FIELD_VALUE_INVALID: { status: 400, message: 'The value does not fit the custom field', when: 'A task write (create, update, metadata PATCH, batch, card create, import) sets a defined custom field (`cf.*`) to a value its type or options cannot hold, or leaves a required one unset; `details.field` (`metadata.cf.estimate`), `details.type` and `details.value` say which. Nothing is written.' },
  QUERY_OPERATOR_NOT_FOR_TYPE: { status: 400, message: 'The operator does not apply to the field type', when: 'A query compares a custom field with an operator its type lacks (`cf.estimate LIKE \'3%\'`), or with a value of another type or an unknown option; `details.position`, `details.field`, `details.type` and `details.operators` say which.' },
  UNAUTHORIZED: { status: 401, message: 'Authentication is required', when: 'Missing, malformed, expired or wrongly signed bearer token.' },
  INVALID_CREDENTIALS: { status: 401, message: 'Wrong username or password', when: 'Login with unknown user or wrong password.' },
  OIDC_SIGN_IN_FAILED: { status: 401, message: 'The sign-in with the identity provider failed', when: 'The OpenID Connect callback could not be verified: no or expired sign-in cookie, wrong `state`, a code that is unknown or already used, an ID token with a wrong nonce, audience, issuer or signature, or expired; `details.reason` says which (docs/auth.md).' },
  OIDC_CODE_INVALID: { status: 401, message: 'The sign-in code is invalid', when: '`POST /auth/oidc/exchange` with a code that is unknown, already exchanged or older than 60 s.' },
  REFRESH_TOKEN_INVALID: { status: 401, message: 'The refresh token is invalid', when: 'Unknown, expired, revoked or reused refresh token (reuse revokes its whole family).' },
  FORBIDDEN: { status: 403, message: 'You may read this resource but not change it', when: 'The caller can read the resource but lacks write permission (or is not the board owner for owner-only operations).' },
  INSUFFICIENT_SCOPE: { status: 403, message: 'The access token lacks the scope this needs', when: 'A request made with an access token whose scopes do not cover the operation (`read`, `write` or `admin`); `details.required` names the scope needed. Also a token asking to create a token with more than it has.' },
  REGISTRATION_DISABLED: { status: 403, message: 'Registration is disabled', when: 'Register while `REGISTRATION_ENABLED=false`, in production without `INVITE_CODE` unless `REGISTRATION_ENABLED=true`, or with a wrong invite code.' },
  OIDC_DOMAIN_NOT_ALLOWED: { status: 403, message: 'Your e-mail domain may not sign in here', when: 'OpenID Connect sign-in of an account whose verified e-mail domain is not in `OIDC_ALLOWED_DOMAINS`.' },
  LOCAL_LOGIN_DISABLED: { status: 403, message: 'Sign-in with a password is turned off; sign in with the identity provider', when: 'Password login or registration while `LOCAL_LOGIN=false`.' },
  ADMIN_ONLY: { status: 403, message: 'Only an administrator may do this', when: 'Reading the audit log as a user who is neither the `ADMIN_USERNAME` account nor has the admin role (docs/audit.md).' },
  NOT_GROUP_MEMBER: { status: 403, message: 'You are not a member of that group', when: 'Sharing a board with a group the caller does not belong to, or managing a group the caller does not administer.' },
  NOT_FOUND: { status: 404, message: 'Not found', when: 'No such route.' },
  TASK_NOT_FOUND: { status: 404, message: 'Task not found', when: 'The task does not exist, is soft-deleted, or the caller cannot read it.' },
  BOARD_NOT_FOUND: { status: 404, message: 'Board not found', when: 'The board does not exist or the caller cannot read it.' },
  COLUMN_NOT_FOUND: { status: 404, message: 'Column not found on this board', when: 'A column id that is not on the board.' },
  GROUP_NOT_FOUND: { status: 404, message: 'Group not found', when: 'The group does not exist or the caller is not a member.' },
  USER_NOT_FOUND: { status: 404, message: 'User not found', when: 'A group member operation names an unknown user.' },
  METADATA_KEY_NOT_FOUND: { status: 404, message: 'The task has no such metadata key', when: 'DELETE of a metadata key the task does not carry.' },
  VIEW_NOT_FOUND: { status: 404, message: 'View not found', when: 'The saved view does not exist, or is neither the caller\'s own nor shared through a board the caller can read.' },
  TOKEN_NOT_FOUND: { status: 404, message: 'Access token not found', when: 'The access token does not exist or belongs to another user.' },
  WEBHOOK_NOT_FOUND: { status: 404, message: 'Webhook not found', when: 'The webhook does not exist or belongs to another user.' },
  DELIVERY_NOT_FOUND: { status: 404, message: 'Delivery not found', when: 'No such delivery on this webhook.' },
  CUSTOM_FIELD_NOT_FOUND: { status: 404, message: 'Custom field not found', when: 'The custom field definition does not exist, or belongs to another user or to a group the caller is not a member of.' },
  METHOD_NOT_ALLOWED: { status: 405, message: 'This method is not served here', when: '`GET` or `DELETE` on `/mcp`: the MCP endpoint is stateless and answers `POST` only (docs/agents.md).' },
  KANBAN_TASK_NOT_IN_SOURCE_COLUMN: { status: 409, message: 'The card no longer matches the source column', when: 'Move whose card does not match `from_column_id`; the body carries the current `task` snapshot.' },
  LEASE_NOT_HELD: { status: 409, message: 'You do not hold a lease on this card', when: 'Renew, complete or release of a card that has no lease, or whose lease is another claimer\'s or has another `lease_id`; `details.lease` shows the current lease (holder, expiry) when there is one.' },
  LEASE_EXPIRED: { status: 409, message: 'Your lease on this card has expired', when: 'Renew, complete or release after the lease\'s `expires_at`: the card is free to claim again (claim it anew); nothing is written.' },
  USERNAME_TAKEN: { status: 409, message: 'That username is taken', when: 'Register with an existing username.' },
  OIDC_USERNAME_TAKEN: { status: 409, message: 'An account with that username already exists; it is not joined to your identity provider account', when: 'First OpenID Connect sign-in whose username claim names an existing user (a local account or another provider account); never merged silently. `details.username` names it.' },
  WIP_LIMIT_REACHED: { status: 409, message: 'The column is at its WIP limit', when: 'A move or card create into a column whose `wip_policy` is `block` and that already holds `wip_limit` cards (counted like the board summary); `details` name the column, its `wip_limit` and `count`; dry runs report it too; nothing is written.' },
  CONFLICT: { status: 409, message: 'The resource changed concurrently', when: 'A write lost a race (duplicate key or a concurrent transaction); retry.' },
  IDEMPOTENCY_KEY_IN_PROGRESS: { status: 409, message: 'A request with this Idempotency-Key is still running', when: 'A repeat of a request (same user, method, path and Idempotency-Key) while the first is still running; retry later.' },
  CUSTOM_FIELD_KEY_TAKEN: { status: 409, message: 'The owner already defines this key', when: 'A custom field create whose `key` the same owner (the caller, or the group) already defines; `details.key` and `details.fieldId` name it.' },
  CUSTOM_FIELD_TYPE_CONFLICT: { status: 409, message: 'Stored values do not fit the new definition', when: 'A custom field change (type or options) while tasks hold values the new definition cannot hold and that cannot be converted; `details.incompatible` counts them and `details.examples` lists some.' },
  EVENTS_EXPIRED: { status: 410, message: 'Events after this cursor are past the retention window', when: 'Feed or stream `after` (or `Last-Event-ID`) older than `EVENT_RETENTION_DAYS`; `details.oldest_available_after` is the oldest cursor still served. Re-read the current state, then follow from the feed\'s latest `next_after`.' },
  PRECONDITION_FAILED: { status: 412, message: 'The resource is not at the version If-Match names', when: 'A write with `If-Match` whose versions do not include the current one; `details.current_version` says which it is; nothing is written.' },
  PAYLOAD_TOO_LARGE: { status: 413, message: 'The request body is too large', when: 'Body over 1 MiB; a write that would make a task larger than 256 KiB of JSON (`details.field` names its largest field) or an event larger than 960 KiB (docs/tasks.md "Limits", docs/events.md "Sizes"); or a stored document larger than MongoDB\'s 16 MiB limit (`details.max_bytes`); nothing is written.' },
  KANBAN_TARGET_COLUMN_UNREACHABLE: { status: 422, message: 'The card would not match the target column after the move', when: 'Move whose actions cannot make the card match the target column query; nothing is written.' },
  IDEMPOTENCY_KEY_REUSED: { status: 422, message: 'The Idempotency-Key was used with another request body', when: 'A repeat of an Idempotency-Key (same user, method and path) with a different body.' },
  BATCH_ITEM_NOT_APPLIED: { status: 424, message: 'Not applied: another item of the atomic batch failed', when: 'In the `results` of an atomic batch write that failed (`atomic: true`): the items that were rolled back or not tried; `details.failed_index` names the item that failed.' },
  TOO_MANY_STREAMS: { status: 429, message: 'Too many open event streams', when: 'A user opening more event streams than `EVENT_STREAMS_PER_USER` at once; close one first.' },
  RATE_LIMITED: { status: 429, message: 'Too many requests', when: 'Login or register called too often, an access token used more than `RATE_LIMIT_TOKEN_MAX` times a minute, or a user or token over its admission bounds or cost budget (docs/http.md "Fair use"; `details.reason`: `in_flight` or `budget`). Always with `Retry-After`.' },
  INTERNAL: { status: 500, message: 'Internal error', when: 'An unexpected fault; the log has the details under the `traceId`.' },
  OIDC_PROVIDER_UNAVAILABLE: { status: 503, message: 'The identity provider cannot be reached', when: 'OpenID Connect discovery or the code exchange could not reach the provider (network fault or an answer that is not OpenID Connect).' },
  SERVICE_UNAVAILABLE: { status: 503, message: 'A service is unavailable', when: 'No service answers on the bus, or the bus is down (then at once, with `Retry-After`).' },
  QUERY_TIMEOUT: { status: 503, message: 'The query took too long', when: 'A read ran past its time limit (2 s of scanning on the embedded store, `maxTimeMS` on MongoDB) and was stopped; nothing was written. Narrow the query (a status, tag or board condition) and retry.' },
  STORE_UNAVAILABLE: { status: 503, message: 'The store is unavailable', when: 'The database could not be reached; nothing was written.' },
  UPSTREAM_TIMEOUT: { status: 504, message: 'A service did not answer in time', when: 'A bus request timed out.' },
  IMPORT_INVALID: { status: 400, message: 'The export has cards that cannot be imported', when: 'An import (not a dry run) whose export has problems of level `error` (a card without a title, a card on an unknown list, a repeated id); `details.problems` lists each with its row or card, field and reason, as the dry run does; nothing is written (docs/import-export.md).' },
  IMPORT_TOO_MANY_CARDS: { status: 400, message: 'The export has more cards than one import takes', when: 'An import of more than `IMPORT_MAX_CARDS` cards (10,000); `details.max_cards` and `details.cards` say how many; split the export.' },
  IMPORT_TOO_LARGE: { status: 413, message: 'The import file is too large', when: 'An import body or uploaded file over `IMPORT_MAX_BYTES` (4 MiB); `details.max_bytes` names the limit.' },
  IMPORT_NOT_FOUND: { status: 404, message: 'Import not found', when: 'The import job does not exist or is another user\'s.' },
  BACKUP_NOT_SUPPORTED: { status: 409, message: 'This deployment is not backed up through the service', when: '`POST /api/v1/admin/backup` on a deployment whose store is MongoDB: back it up with mongodump (docs/store.md "Backup and restore").' },
} as const satisfies Record<string, { status: number; message: string; when: string }>;

/** Every error code the service can return. */
export type ErrorCode = keyof typeof ErrorCodes;

/** True when `code` is a catalogue code. */
export function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === 'string' && Object.prototype.hasOwnProperty.call(ErrorCodes, code);
}
