export { op, isExpensive, DEFAULT_TIMEOUT_MS, type Op, type AnyOp, type In, type Out } from './op.js';
export { HealthOps } from './health.js';
export { StringEnum, MAX_PAGE, Page, PageSize, PathId, Tags, MetadataObject, MetadataValue, Timestamp, busRequest,
  METADATA_MAX_DEPTH, METADATA_VALUE_MAX_BYTES, METADATA_KEY_MAX, METADATA_LIMITS_KEYWORD } from './schemas.js';
export {
  TITLE_MAX, DESCRIPTION_MAX, STATUS_MAX, TASK_MAX_BYTES, Task, TaskLease, TasksOps, TaskParams, MetadataKeyParams, TaskCreateFields, TaskCreateBody,
  TaskUpdateBody, MetadataSetBody,
  TaskMoveBody, NoteCreateBody, Note, NoteList, LinkedItem, TaskDetail, BATCH_MAX, TaskBatchCreateBody, TaskBatchUpdateItem, TaskBatchUpdateBody,
  BatchItemError, BatchItemResult, TaskBatchResult,
} from './tasks.js';
export {
  CheckInResult, TaskIdsBody, TaskItemsResult, BatchSameUpdateBody, UpdateEachItem, BatchUpdateEachBody, BatchDeleteBody,
  BatchTransferBody, BatchOutcomeItem, BatchOutcome, UpsertItem, BatchUpsertBody, UpsertOutcomeItem, BatchUpsertResult,
} from './tasks.js';
export {
  SPRINT_GOAL_MAX, SprintsOps, SprintParams, CloseSprintBody, CloseSprintRequest, CloseSprintResult, BACKLOG, NO_TARGET, SprintBoardParams,
  CreateSprintBody, ListSprintsQuerystring, SprintSummary, SprintList, StartSprintBody, StartSprintRequest, StartSprintResult,
  ReportItem, SprintReport, VelocityQuerystring, VelocityResult, Burndown, VELOCITY_LAST,
} from './sprints.js';
export {
  QueryOps, SortDTO, TasksQueryBody, TasksQueryResult, BoardQueryBody, BoardQueryResult, ColumnQueryBody,
  ColumnQueryResult, ColumnCard, SummaryQuerystring, ColumnSummary, BoardSummaryResult, BoardQueryParams, ColumnQueryParams,
  QueryValidateBody, QueryValidateResult, QueryFault,
} from './query.js';
export { BoardTasksQuerystring, BoardTasksResult } from './query.js';
export {
  BoardsOps, GroupsOps, BoardPathParams, BoardTaskParams, GroupParams, GroupMemberParams, ColumnAction, ColumnActionInput,
  Column, ColumnInput, Board, BoardList, BoardCreateBody, BoardUpdateBody, BoardShareBody, PreviewActionsBody,
  PreviewActionsResult, BoardTaskCreateBody, CardMoveBody, AppliedAction, CardMoveResult, WipState, Group, GroupCreateBody, GroupMemberBody,
  BoardMember, BoardMembers, BoardMemberParams, BoardMemberBody, BoardMemberPatchBody,
} from './boards.js';
export { BoardDryRunQuery, BoardPreview } from './boards.js';
export {
  LeasesOps, LEASE_SECONDS_MIN, LEASE_SECONDS_MAX, ClaimParams, LeaseTaskParams, ClaimBody, LeaseRenewBody, LeaseCompleteBody, LeaseReleaseBody,
  CardLease, LeaseCompleteResult,
} from './leases.js';
export {
  EVENT_TYPES, type EventType, FEED_DEFAULT_LIMIT, FEED_MAX_LIMIT, EVENT_MAX_BYTES, FEED_PAGE_MAX_BYTES, CURSOR_PATTERN, CursorText, EventEnvelope, EventsOps, WebhooksOps, FeedQuerystring, StreamQuerystring,
  FeedPage, WebhookCreateBody, WebhookUpdateBody, Webhook, WebhookList, DeliveryAttempt, Delivery, DeliveryList, WebhookParams, DeliveryParams,
} from './events.js';
export { ViewsOps, ViewParams, ViewCreateBody, ViewUpdateBody, View, ViewList, ViewQueryBody, ViewQueryResult } from './views.js';
export {
  SCOPES, type Scope, type TokenGrant, scopesAllow, OP_SCOPES, scopeOf, TOKEN_BOARDS_MAX, TokenCreateBody, AccessToken, CreatedAccessToken, TokenParams,
} from './tokens.js';
export { AUDIT_ACTIONS, AuditQuerystring, AuditEntry, AuditPage, type AuditAction } from './audit.js';
export { FlowOps, FlowParams, FlowQuerystring, FlowResult, FlowDay, FlowColumn, CycleTimeQuerystring, CycleTimeResult, FinishedCard, Percentiles, FlowSnapshotResult } from './flow.js';
export {
  IMPORT_MAX_BYTES, IMPORT_MAX_CARDS, EXPORT_PAGE_CARDS, ImportsOps, ExportOps, ImportMapping, ImportCreateBody, ImportProblem, ImportCounts, ImportJob,
  ImportPreview, ImportParams, ExportQuerystring, ExportCard, ExportPage,
} from './imports.js';
export {
  CUSTOM_FIELD_TYPES, type CustomFieldType, SELECT_TYPES, CUSTOM_FIELD_OPTIONS_MAX, CUSTOM_FIELDS_PER_OWNER_MAX, CustomFieldKey, CustomFieldOption,
  CustomFieldParams, CustomFieldCreateBody, CustomFieldUpdateBody, CustomField, CustomFieldListQuerystring, CustomFieldList, CustomFieldsOps,
} from './custom-fields.js';
