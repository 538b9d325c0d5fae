import { Type, type Static, type TProperties } from '@sinclair/typebox';
import { op } from './op.js';
import { busRequest, METADATA_KEY_MAX, MetadataObject, MetadataValue, Tags, Timestamp } from './schemas.js';

/**
 * Contracts of the task detail family (docs/tasks.md; docs/architecture.md §1, §9):
 * task create, detail, update, soft delete, one-key metadata writes, folder move and notes.
 *
 * HTTP body schemas are exported so the gateway's route rows reuse them (one schema source). Body
 * schemas carry `additionalProperties: false`: the gateway refuses an unknown field on the target
 * paths (400 naming it) and drops it on the legacy paths (docs/compat.md); the bus request schemas
 * are built from the same properties without it, so the bus ignores unknown fields. All schemas are Swagger-2.0-safe (no unions, enums or nullables).
 * Semantic rules (title trim and length, dates, folder paths, metadata nulls, references) live in
 * `domain/task-write.ts`; wrong JSON types are rejected here.
 */

/** Maximum title length in characters. */
export const TITLE_MAX = 500;
/** Maximum description length in characters. */
export const DESCRIPTION_MAX = 200_000;
/** Longest `status` in characters (docs/tasks.md "Limits"); longer → 400 naming `/status`. */
export const STATUS_MAX = 64;
/**
 * Largest task, as the UTF-8 bytes of the JSON of its API object (docs/tasks.md "Limits"): 256 KiB.
 * A write that would make a task larger is a 413 `PAYLOAD_TOO_LARGE` naming the task's largest
 * field (`details.field`), with nothing written. It keeps every event about a task within
 * `EVENT_MAX_BYTES` (a `task.updated` carries the task and the changed fields' old and new values).
 */
export const TASK_MAX_BYTES = 256 * 1024;

/**
 * The lease a card is claimed under (docs/boards.md "Claiming a card under a lease"), as task reads, column reads and events show
 * it: who holds it and until when. The lease is live while `expires_at` is in the future; past it
 * the card is claimable again (a card whose expired lease nobody has taken yet still shows it).
 */
export const TaskLease = Type.Object({
  id: Type.String({ description: 'the lease id the claim answered; renew, complete and release name it' }),
  holder: Type.String({ description: 'user id of the claimer' }),
  holder_token: Type.Optional(Type.String({ description: 'id of the access token the claim was made with (docs/auth.md "Access tokens"); absent for a claim made with a login' })),
  holder_token_name: Type.Optional(Type.String({ description: 'the name that token had when it claimed (so a board shows which agent holds the card); absent for a claim made with a login' })),
  board_id: Type.String({ description: 'the board the card was claimed on' }),
  column_id: Type.String({ description: 'the column the card was claimed from' }),
  claimed_at: Type.String({ format: 'date-time' }),
  expires_at: Type.String({ format: 'date-time', description: 'the lease is live before this instant' }),
});
export type TaskLease = Static<typeof TaskLease>;

/**
 * The task object of the API (docs/tasks.md "Shapes"). Cleared optional fields are absent.
 * `toTask` (domain/task.ts) maps a stored task to it.
 */
export const Task = Type.Object(
  {
    id: Type.String(),
    title: Type.String(),
    description: Type.Optional(Type.String()),
    status: Type.String(),
    path: Type.String(),
    tags: Type.Array(Type.String()),
    checkInCount: Type.Integer(),
    lastCheckedInAt: Type.Optional(Type.String({ format: 'date-time', description: 'time of the last check-in; absent until the first' })),
    metadata: Type.Object({}, { additionalProperties: true }),
    created_at: Type.String({ format: 'date-time' }),
    created_by: Type.String(),
    updated_at: Type.String({ format: 'date-time' }),
    updated_by: Type.String(),
    version: Type.Integer({ minimum: 1, description: '1 on create, +1 on every committed change; the ETag' }),
    assignee: Type.Optional(Type.String()),
    kickoff: Type.Optional(Type.String({ format: 'date-time' })),
    deadline: Type.Optional(Type.String({ format: 'date-time' })),
    derivedFromId: Type.Optional(Type.String()),
    linkedToIds: Type.Optional(Type.Array(Type.String())),
    resourceIds: Type.Optional(Type.Array(Type.String())),
    lease: Type.Optional(TaskLease),
  },
  { $id: 'Task', additionalProperties: true },
);
export type Task = Static<typeof Task>;

/** Path parameter `taskId`. Any string: a non-UUID id is a 404 `TASK_NOT_FOUND`, not a 400. */
export const TaskParams = Type.Object({ taskId: Type.String() });
/** Path parameters of the metadata key DELETE. */
export const MetadataKeyParams = Type.Object({ taskId: Type.String(), key: Type.String({ minLength: 1 }) });

/** Metadata as sent and returned: original (unescaped) keys, any JSON values except null. */
const Metadata = MetadataObject('keys such as `order`, `app.sprint`, `cf.priority`; values any JSON except null');
const Status = Type.String({ minLength: 1, maxLength: STATUS_MAX, description: `free string of 1..${STATUS_MAX} characters, e.g. \`todo\`, \`doing\`, \`done\`` });
const FolderPath = Type.String({ description: '`""` (unfiled), `/` (root) or `/seg/seg`; segments 1..64 chars without `\\:*?"<>|` and without leading/trailing space or dot' });
const Instant = (what: string) =>
  Type.String({ description: `${what}: date-only \`YYYY-MM-DD\` (midnight UTC) or RFC 3339 with offset; stored and returned as UTC \`toISOString()\`` });

/** Fields of a new task shared by the plain create and the board card create (docs/tasks.md "Shapes"). */
export const TaskCreateFields = {
  title: Type.String({ description: 'required; 1..500 characters after trimming' }),
  description: Type.Optional(Type.String({ maxLength: DESCRIPTION_MAX, description: 'Markdown body' })),
  status: Type.Optional(Status),
  tags: Type.Optional(Tags),
  metadata: Type.Optional(Metadata),
  assignee: Type.Optional(Type.String({ description: 'a user id; `""` means none' })),
  derived_from_id: Type.Optional(Type.String({ description: 'id of a task the caller can read' })),
  linked_to_ids: Type.Optional(Type.Array(Type.String(), { description: 'ids of tasks the caller can read' })),
  resourceIds: Type.Optional(Type.Array(Type.String())),
} satisfies TProperties;

/** Body of `POST /tasks` (legacy `POST /todolist`). */
export const TaskCreateBody = Type.Object(
  {
    ...TaskCreateFields,
    path: Type.Optional(FolderPath),
    kickoff: Type.Optional(Instant('start')),
    deadline: Type.Optional(Instant('due date')),
  },
  { additionalProperties: false },
);
export type TaskCreateBody = Static<typeof TaskCreateBody>;

/** Body of `PATCH /tasks/{taskId}`: every field optional, an omitted field is unchanged (docs/tasks.md "Rules and choices"). */
export const TaskUpdateBody = Type.Object(
  {
    title: Type.Optional(TaskCreateFields.title),
    description: TaskCreateFields.description,
    status: Type.Optional(Status),
    path: Type.Optional(FolderPath),
    tags: Type.Optional(Tags),
    assignee: Type.Optional(Type.String({ description: 'a user id; `""` clears it' })),
    kickoff: Type.Optional(Instant('start; `""` clears it')),
    deadline: Type.Optional(Instant('due date; `""` clears it')),
    derivedFromId: Type.Optional(Type.String({ description: 'id of a task the caller can read; `""` clears it' })),
    metadata: Type.Optional(MetadataObject('keys merged into the task metadata; null is refused (use DELETE …/metadata/{key})')),
  },
  { additionalProperties: false },
);
export type TaskUpdateBody = Static<typeof TaskUpdateBody>;

/** Body of `PATCH /tasks/{taskId}/metadata`: one key per call. */
export const MetadataSetBody = Type.Object(
  {
    key: Type.String({ minLength: 1, maxLength: METADATA_KEY_MAX, description: `1..${METADATA_KEY_MAX} characters` }),
    value: MetadataValue('any JSON value except null (remove a key with DELETE …/metadata/{key})'),
  },
  { additionalProperties: false },
);
export type MetadataSetBody = Static<typeof MetadataSetBody>;

/** Body of `PATCH /tasks/{taskId}/move` (folder move, not the kanban card move). */
export const TaskMoveBody = Type.Object({ path: FolderPath }, { additionalProperties: false });
export type TaskMoveBody = Static<typeof TaskMoveBody>;

/** Body of `POST /tasks/{taskId}/notes`. */
export const NoteCreateBody = Type.Object(
  { content: Type.String({ description: 'Markdown; not blank', maxLength: DESCRIPTION_MAX }) },
  { additionalProperties: false },
);
export type NoteCreateBody = Static<typeof NoteCreateBody>;

/** A note on a task (docs/architecture.md §9). */
export const Note = Type.Object({
  id: Type.String(),
  task_id: Type.String(),
  content: Type.String(),
  created_at: Timestamp,
  created_by: Type.String(),
  updated_at: Timestamp,
  updated_by: Type.String(),
});
export type Note = Static<typeof Note>;
/** Notes of a task, oldest first. */
export const NoteList = Type.Array(Note);

/**
 * Summary of a linked task in the detail view: ud's `LinkedItemInfoDTO`. `id`, `title`,
 * `status`, `created_at` and `updated_at` always; `assignee`, `kickoff`, `deadline`,
 * `description`, `tags` and `metadata` when set (absent when cleared, empty or without keys).
 */
export const LinkedItem = Type.Object({
  id: Type.String(),
  title: Type.String(),
  status: Type.String(),
  created_at: Timestamp,
  updated_at: Timestamp,
  assignee: Type.Optional(Type.String()),
  kickoff: Type.Optional(Timestamp),
  deadline: Type.Optional(Timestamp),
  description: Type.Optional(Type.String()),
  tags: Type.Optional(Type.Array(Type.String())),
  metadata: Type.Optional(Type.Object({}, { additionalProperties: true })),
});
export type LinkedItem = Static<typeof LinkedItem>;

/**
 * Task detail (GET, and the reply of the metadata writes): the task object plus its `notes`
 * (oldest first), `derivedFrom` and `linkedTo` summaries of the linked tasks the caller can read,
 * and `subtasks`, the readable tasks derived from it (ud's `LinkedItemInfoDTO` each).
 */
export const TaskDetail = Type.Object(
  {
    ...Task.properties,
    notes: Type.Array(Note),
    derivedFrom: Type.Optional(LinkedItem),
    linkedTo: Type.Array(LinkedItem),
    subtasks: Type.Optional(Type.Array(LinkedItem, { description: 'tasks derived from this one (derivedFromId), oldest first; absent when none' })),
  },
  { additionalProperties: true },
);
export type TaskDetail = Static<typeof TaskDetail>;

/** Most items of one batch write; more → 400. */
export const BATCH_MAX = 100;

const Atomic = Type.Optional(Type.Boolean({ default: false, description: 'true: all items or none, in one transaction; false (default): each item on its own' }));

/** Body of `POST /tasks/batch`: 1..100 create bodies, as `POST /tasks` takes them. */
export const TaskBatchCreateBody = Type.Object(
  { tasks: Type.Array(TaskCreateBody, { minItems: 1, maxItems: BATCH_MAX }), atomic: Atomic },
  { additionalProperties: false },
);
export type TaskBatchCreateBody = Static<typeof TaskBatchCreateBody>;

/** One item of `PATCH /tasks/batch`: the task id, an optional expected version, the PATCH body. */
export const TaskBatchUpdateItem = Type.Object(
  {
    id: Type.String({ description: 'the task id' }),
    if_match: Type.Optional(Type.String({ description: 'as the If-Match header of a single PATCH: `"3"`, a list, or `*`' })),
    changes: TaskUpdateBody,
  },
  { additionalProperties: false },
);
export type TaskBatchUpdateItem = Static<typeof TaskBatchUpdateItem>;

/** Body of `PATCH /tasks/batch`: 1..100 updates, each obeying the rules of a single PATCH. */
export const TaskBatchUpdateBody = Type.Object(
  { updates: Type.Array(TaskBatchUpdateItem, { minItems: 1, maxItems: BATCH_MAX }), atomic: Atomic },
  { additionalProperties: false },
);
export type TaskBatchUpdateBody = Static<typeof TaskBatchUpdateBody>;

/** The error of one batch item: the body a single request would have answered (without traceId). */
export const BatchItemError = Type.Object(
  {
    code: Type.String(),
    message: Type.String(),
    details: Type.Optional(Type.Object({}, { additionalProperties: true })),
    validationErrors: Type.Optional(Type.Array(Type.Object({ field: Type.String(), code: Type.String(), message: Type.String() }))),
  },
  { additionalProperties: true },
);

/** One result of a batch write, in input order: `task` on success (201 create, 200 update), else `error`. */
export const BatchItemResult = Type.Object({
  index: Type.Integer({ minimum: 0, description: '0-based position in the request' }),
  status: Type.Integer({ description: 'the HTTP status the single request would have had; 424 = not applied because another item of an atomic batch failed' }),
  task: Type.Optional(Task),
  error: Type.Optional(BatchItemError),
});
export type BatchItemResult = Static<typeof BatchItemResult>;

/** Reply of both batch writes. */
export const TaskBatchResult = Type.Object({ results: Type.Array(BatchItemResult) });
export type TaskBatchResult = Static<typeof TaskBatchResult>;

/** Reply of the check-in: the task's check-in count after it. */
export const CheckInResult = Type.Object({ checkInCount: Type.Integer({ minimum: 1 }) });
export type CheckInResult = Static<typeof CheckInResult>;

/*
 * The batch family of ud's clients (`/todolist/batch*`, Swagger `BatchGetTodolistItemsDTO` and
 * friends): 1..100 ids or items, each checked as its single request would be; one item's failure
 * is reported in its result and the others stand (docs/tasks.md "Batch family").
 */

/** 1..100 task ids; a repeated id counts once. */
const BatchIds = Type.Array(Type.String(), { minItems: 1, maxItems: BATCH_MAX, description: '1..100 task ids' });

/** Body of `POST /tasks/batch-get` (legacy `POST /todolist/batch`): read tasks by id. */
export const TaskIdsBody = Type.Object({ ids: BatchIds }, { additionalProperties: false });
export type TaskIdsBody = Static<typeof TaskIdsBody>;

/** Reply of the batch read: the live tasks the caller can read, in the order of the ids; others left out. */
export const TaskItemsResult = Type.Object({ items: Type.Array(Task) });
export type TaskItemsResult = Static<typeof TaskItemsResult>;

/** Body of `POST /tasks/batch-update`: the same changes (a task PATCH body) to every id. */
export const BatchSameUpdateBody = Type.Object({ ids: BatchIds, updates: TaskUpdateBody }, { additionalProperties: false });
export type BatchSameUpdateBody = Static<typeof BatchSameUpdateBody>;

/** One item of `PATCH /tasks/batch-update-each`: a task's description and/or its links (wikilinks resolved by the client). */
export const UpdateEachItem = Type.Object(
  {
    id: Type.String({ description: 'the task id' }),
    description: Type.Optional(TaskCreateFields.description),
    links_to: Type.Optional(Type.Array(Type.String(), { maxItems: 1000, description: 'replaces `linkedToIds`: ids of tasks the caller can read' })),
  },
  { additionalProperties: false },
);
export type UpdateEachItem = Static<typeof UpdateEachItem>;

/** Body of `PATCH /tasks/batch-update-each`: 1..100 per-task updates. */
export const BatchUpdateEachBody = Type.Object(
  { items: Type.Array(UpdateEachItem, { minItems: 1, maxItems: BATCH_MAX }) },
  { additionalProperties: false },
);
export type BatchUpdateEachBody = Static<typeof BatchUpdateEachBody>;

/** Body of `POST /tasks/batch-delete`: soft-delete every id. */
export const BatchDeleteBody = Type.Object({ ids: BatchIds }, { additionalProperties: false });
export type BatchDeleteBody = Static<typeof BatchDeleteBody>;

/** Body of `POST /tasks/batch-transfer`: give the caller's tasks to another user. */
export const BatchTransferBody = Type.Object(
  { ids: BatchIds, newOwnerId: Type.String({ minLength: 1, description: 'the id of an existing user' }) },
  { additionalProperties: false },
);
export type BatchTransferBody = Static<typeof BatchTransferBody>;

/** One result of the id batches, in input order: `success`, else `error` (the message) with its `code` and `status`. */
export const BatchOutcomeItem = Type.Object({
  id: Type.String(),
  success: Type.Boolean(),
  error: Type.Optional(Type.String({ description: 'what the single request would have answered: `CODE: message`' })),
  code: Type.Optional(Type.String({ description: 'the error code (docs/errors.md)' })),
  status: Type.Optional(Type.Integer({ description: 'the HTTP status the single request would have had' })),
});
export type BatchOutcomeItem = Static<typeof BatchOutcomeItem>;

/** Reply of batch-update, batch-update-each, batch-delete and batch-transfer (Swagger `BatchUpdateResultDTO`). */
export const BatchOutcome = Type.Object({
  totalCount: Type.Integer(),
  successCount: Type.Integer(),
  failCount: Type.Integer(),
  results: Type.Array(BatchOutcomeItem),
});
export type BatchOutcome = Static<typeof BatchOutcome>;

/** One item of `POST /tasks/batch-upsert`: a create body whose `metadata.obsidianPath` identifies the task. */
export const UpsertItem = Type.Object(
  {
    title: TaskCreateFields.title,
    description: TaskCreateFields.description,
    status: TaskCreateFields.status,
    tags: TaskCreateFields.tags,
    assignee: TaskCreateFields.assignee,
    kickoff: Type.Optional(Instant('start')),
    deadline: Type.Optional(Instant('due date')),
    metadata: Type.Optional(MetadataObject('must carry `obsidianPath` (a non-empty string): the key the item is matched on')),
  },
  { additionalProperties: false },
);
export type UpsertItem = Static<typeof UpsertItem>;

/** Body of `POST /tasks/batch-upsert`: 1..100 items. */
export const BatchUpsertBody = Type.Object({ items: Type.Array(UpsertItem, { minItems: 1, maxItems: BATCH_MAX }) }, { additionalProperties: false });
export type BatchUpsertBody = Static<typeof BatchUpsertBody>;

/** One result of the upsert, in input order. */
export const UpsertOutcomeItem = Type.Object({
  action: Type.String({ description: '`created`, `updated`, `skipped` (nothing to change) or `failed` (see `error`)' }),
  id: Type.Optional(Type.String({ description: 'the task created or matched' })),
  obsidianPath: Type.Optional(Type.String()),
  error: Type.Optional(Type.String({ description: '`CODE: message` of a failed item' })),
  code: Type.Optional(Type.String()),
  status: Type.Optional(Type.Integer()),
});
export type UpsertOutcomeItem = Static<typeof UpsertOutcomeItem>;

/** Reply of the upsert (Swagger `BatchUpsertResultDTO`). */
export const BatchUpsertResult = Type.Object({
  totalCount: Type.Integer(),
  createdCount: Type.Integer(),
  updatedCount: Type.Integer(),
  skippedCount: Type.Integer(),
  failCount: Type.Integer(),
  results: Type.Array(UpsertOutcomeItem),
});
export type BatchUpsertResult = Static<typeof BatchUpsertResult>;

/** The ops of the tasks service, subjects `tasks.<verb>`. */
export const TasksOps = {
  create: op({ subject: 'tasks.create', request: busRequest(TaskCreateBody.properties), response: Task, versionOf: (t) => t.version }),
  get: op({ subject: 'tasks.get', request: busRequest(TaskParams.properties), response: TaskDetail, versionOf: (t) => t.version }),
  update: op({ subject: 'tasks.update', request: busRequest(TaskParams.properties, TaskUpdateBody.properties), response: Task, versionOf: (t) => t.version }),
  remove: op({ subject: 'tasks.remove', request: busRequest(TaskParams.properties), response: Type.Null() }),
  setMetadata: op({ subject: 'tasks.setMetadata', request: busRequest(TaskParams.properties, MetadataSetBody.properties), response: TaskDetail, versionOf: (t) => t.version }),
  deleteMetadata: op({ subject: 'tasks.deleteMetadata', request: busRequest(MetadataKeyParams.properties), response: TaskDetail, versionOf: (t) => t.version }),
  movePath: op({ subject: 'tasks.movePath', request: busRequest(TaskParams.properties, TaskMoveBody.properties), response: Task, versionOf: (t) => t.version }),
  addNote: op({ subject: 'tasks.addNote', request: busRequest(TaskParams.properties, NoteCreateBody.properties), response: Note }),
  listNotes: op({ subject: 'tasks.listNotes', request: busRequest(TaskParams.properties), response: NoteList }),
  createBatch: op({ subject: 'tasks.createBatch', request: busRequest(TaskBatchCreateBody.properties), response: TaskBatchResult, timeoutMs: 15_000 }),
  updateBatch: op({ subject: 'tasks.updateBatch', request: busRequest(TaskBatchUpdateBody.properties), response: TaskBatchResult, timeoutMs: 15_000 }),
  /** Makes a soft-deleted task live again (owner or `rw` group member; 404 otherwise). */
  restore: op({ subject: 'tasks.restore', request: busRequest(TaskParams.properties), response: Task, versionOf: (t) => t.version }),
  /** +1 check-in and `lastCheckedInAt` in one conditional write. */
  checkIn: op({ subject: 'tasks.checkIn', request: busRequest(TaskParams.properties), response: CheckInResult }),
  getMany: op({ subject: 'tasks.getMany', request: busRequest(TaskIdsBody.properties), response: TaskItemsResult }),
  updateMany: op({ subject: 'tasks.updateMany', request: busRequest(BatchSameUpdateBody.properties), response: BatchOutcome, timeoutMs: 15_000 }),
  updateEach: op({ subject: 'tasks.updateEach', request: busRequest(BatchUpdateEachBody.properties), response: BatchOutcome, timeoutMs: 15_000 }),
  deleteMany: op({ subject: 'tasks.deleteMany', request: busRequest(BatchDeleteBody.properties), response: BatchOutcome, timeoutMs: 15_000 }),
  /** Owner only per item; `newOwnerId` must be a user (400 naming it). */
  transfer: op({ subject: 'tasks.transfer', request: busRequest(BatchTransferBody.properties), response: BatchOutcome, timeoutMs: 15_000 }),
  /** Matched on `metadata.obsidianPath` among the caller's own live tasks. */
  upsert: op({ subject: 'tasks.upsert', request: busRequest(BatchUpsertBody.properties), response: BatchUpsertResult, timeoutMs: 15_000 }),
} as const;
