export { systemClock, fixedClock, type Clock } from './clock.js';
export { toTask, timeOrderedId, type TaskDoc, type TaskView, type Permission, type LeaseDoc, leaseView } from './task.js';
export { toBoard } from './board-view.js';
export { boardScopeFilter, type BoardDoc, type ColumnDef, type ColumnAction } from './board.js';
export {
  loadPrincipal, narrowToBoards, ownsOutright, readableTasksFilter, writableTasksFilter, canReadTask, canWriteTask, canReadBoard, canWriteBoard,
  type Principal, type GroupDoc, type GroupRole, type Shared,
} from './access.js';
export { bindOps, OutboxSignal, type ServiceDeps, type ServiceDefinition, type HandlerFactories, type BackgroundDeps, type BackgroundWork } from './service.js';
export {
  isUuid, validateTitle, normalizeDate, validatePath, encodeMetadataInput, checkMetadataEntry, nullMetadataValue, distinct, newTaskDoc,
  taskPatchUpdate, metadataSetUpdate, newNoteDoc, checkNewTaskRefs, checkAssignee, checkTaskRefs,
  SPRINT_KEY, checkSprintAssignment, checkSprintChange, checkSprintWindow, type NoteDoc,
} from './task-write.js';
export { mergeMoveActions, planMove, METADATA_FIELD, type MoveEffect, type MovePlan } from './move.js';
export { DEFAULT_COLUMNS, columnSlugId, backfillColumnIds, queryActions, columnsAsRead, actionView, normalizeColumns, cardCreateBody } from './columns.js';
export {
  appendEvents, OUTBOX_PART_BYTES, taskChanges, EVENT_INDEXES, EVENTS_COUNTER, taskCreatedEvent, taskUpdatedEvent, taskDeletedEvent, taskRestoredEvent, boardEvent,
  type EventDoc, type EventStamp, type EventType, type FieldChange, type NewEvent, type OutboxDoc, type PendingEvent,
} from './events.js';
export { parseIfMatch, noneMatchHits, versionOf, checkIfMatch, versionGuard, nextVersion, type IfMatch } from './versions.js';
export {
  runWrite, IDEMPOTENCY_INDEXES, IDEMPOTENCY_LEASE_MS, DEFAULT_IDEMPOTENCY_TTL_HOURS, type IdempotencyDoc, type WriteUnit,
} from './write-unit.js';
export { loadBoard, columnOf, type BoardNeed, type LoadedBoard } from './load-board.js';
export { queryLookups, resolveFor, compileColumn, countCards, splitCards, type CompiledColumn } from './query-context.js';
export {
  appendAudit, auditDoc, auditOf, auditHost, toAuditEntry, DEFAULT_AUDIT_RETENTION_DAYS, type AuditDoc, type AuditStamp, type NewAudit,
} from './audit.js';
export { checkTaskSize } from './events.js';
export {
  customFieldIndex, customFieldIndexes, customFieldsOf, userScope, groupScope, taskScope, boardScope, definitionsOf, fieldTypesFor, checkFieldValue, convertFieldValue,
  customValueInvalid, checkColumnActions, typedColumns, checkCustomFields, checkNewTaskFields, checkTaskUpdateFields, hasOptions, type CustomFieldDoc, type FieldValueCheck,
} from './custom-fields.js';
