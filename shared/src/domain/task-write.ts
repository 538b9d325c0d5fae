import { randomUUID } from 'node:crypto';
import { METADATA_KEY_MAX, METADATA_VALUE_MAX_BYTES } from '../contracts/schemas.js';
import { TITLE_MAX, type TaskCreateBody, type TaskUpdateBody } from '../contracts/tasks.js';
import { AppError, invalidField, type FieldError } from '../errors/index.js';
import { Collections } from '../store/collections.js';
import { encodeMetadata, escapeKey, metadataPath } from '../store/keys.js';
import type { Doc, DocumentStore, Session, Update } from '../store/port.js';
import { jsonBytesOver } from '../util/json-size.js';
import { canReadTask, canWriteTask, loadPrincipal, readableTasksFilter, type Principal } from './access.js';
import { timeOrderedId, type TaskDoc } from './task.js';

/**
 * Task-writing rules shared by every service that creates or changes tasks (docs/tasks.md,
 * "Rules and choices"; docs/architecture.md §9): the tasks service and the boards service's card create.
 * Field names in errors are JSON pointers of the request body (`/title`, `/metadata/cf.x`).
 */

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** True when `s` is a UUID (any version, any case). */
export function isUuid(s: string): boolean {
  return UUID_RE.test(s);
}

/** Trims a title and checks it is 1..TITLE_MAX characters; throws 400 `VALIDATION_FAILED` naming `field`. */
export function validateTitle(value: string, field = '/title'): string {
  const title = value.trim();
  if (title === '') throw invalidField(field, 'must not be empty', 'required');
  if (title.length > TITLE_MAX) throw invalidField(field, `must be at most ${TITLE_MAX} characters`, 'maxLength');
  return title;
}

const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d+)?(Z|[+-](\d{2}):(\d{2}))$/;

/**
 * Normalizes a kickoff or deadline to a UTC instant (`toISOString()`): date-only `2026-12-01` →
 * `2026-12-01T00:00:00.000Z`; RFC 3339 with `Z` or an offset (`2026-12-01T10:00:00+02:00`) → the
 * same instant in UTC. A time without offset, an impossible date (`2026-02-30`) or any other form
 * → 400 `VALIDATION_FAILED` naming `field`.
 */
export function normalizeDate(field: string, value: string): string {
  const bad = () => invalidField(field, `"${value}" is not a date (YYYY-MM-DD) or an RFC 3339 date-time with offset`, 'format');
  const upper = value.toUpperCase();
  const m = DATE_ONLY.exec(upper) ?? DATE_TIME.exec(upper);
  if (!m) throw bad();
  const [y, mo, d, h = 0, mi = 0, s = 0, , , oh = 0, om = 0] = m.slice(1).map((x) => (x === undefined ? undefined : Number(x)));
  const day = new Date(Date.UTC(y!, mo! - 1, d!));
  const dateOk = day.getUTCFullYear() === y && day.getUTCMonth() === mo! - 1 && day.getUTCDate() === d;
  if (!dateOk || h > 23 || mi > 59 || s > 59 || oh > 23 || om > 59) throw bad();
  return m.length === 4 ? day.toISOString() : new Date(Date.parse(upper)).toISOString();
}

const PATH_SEGMENT_MAX = 64;
const PATH_FORBIDDEN = /[\\:*?"<>|]/;

/**
 * Checks a folder path: `""` (unfiled), `/` (root) or `/seg/seg…` where each segment has 1..64
 * characters, none of `\:*?"<>|`, and no leading or trailing space or dot. Returns it unchanged;
 * throws 400 `VALIDATION_FAILED` naming `field`.
 */
export function validatePath(field: string, value: string): string {
  if (value === '' || value === '/') return value;
  if (!value.startsWith('/')) throw invalidField(field, 'must be "", "/" or start with "/"', 'format');
  for (const seg of value.slice(1).split('/')) {
    const fault =
      seg === '' ? 'has an empty segment'
      : seg.length > PATH_SEGMENT_MAX ? `has a segment longer than ${PATH_SEGMENT_MAX} characters`
      : PATH_FORBIDDEN.test(seg) ? `segment "${seg}" contains one of \\:*?"<>|`
      : /^[ .]|[ .]$/.test(seg) ? `segment "${seg}" starts or ends with a space or dot`
      : undefined;
    if (fault) throw invalidField(field, fault, 'format');
  }
  return value;
}

/**
 * Checks API metadata for storage and escapes its keys (docs/architecture.md §2): keys must be non-empty and
 * values must not be null (a key is removed with DELETE, docs/tasks.md "Rules and choices"); keys and the field
 * names inside values must be storable ({@link checkMetadataEntry}).
 */
export function encodeMetadataInput(meta: Record<string, unknown>, field = '/metadata'): Record<string, unknown> {
  for (const [key, value] of Object.entries(meta)) {
    if (key === '') throw invalidField(field, 'metadata keys must not be empty', 'key');
    if (value === null) throw nullMetadataValue(`${field}/${key}`, key);
    checkMetadataEntry(key, value, `${field}/${key}`);
  }
  return encodeMetadata(meta);
}

/**
 * Checks that one metadata entry can be stored (docs/tasks.md "Metadata keys"; the store's rules,
 * `store/rules.ts`): neither the key nor a field name of an object inside the value holds a NUL
 * byte, which MongoDB cannot store in a field name (dots and a leading `$` in the key are escaped,
 * so those are fine), the key has at most `METADATA_KEY_MAX` (256) characters and the value's JSON
 * at most `METADATA_VALUE_MAX_BYTES` (64 KiB) bytes (docs/tasks.md "Limits": the gateway checks the
 * same on the HTTP body; this holds them on every path). Throws 400 `VALIDATION_FAILED` naming `keyField` for the key, or
 * `valueField` (default `keyField`) for the value.
 */
export function checkMetadataEntry(key: string, value: unknown, keyField: string, valueField = keyField): void {
  if (key.includes('\0')) throw invalidField(keyField, 'a metadata key must not contain a NUL byte (U+0000)', 'key');
  if (key.length > METADATA_KEY_MAX) throw invalidField(keyField, `a metadata key of ${key.length} characters, over the ${METADATA_KEY_MAX}-character limit`, 'maxLength');
  // the value's JSON is made only when its bound does not rule the limit out
  const bytes = jsonBytesOver(value, METADATA_VALUE_MAX_BYTES);
  if (bytes !== undefined) throw invalidField(valueField, `${bytes} bytes of JSON, over the ${METADATA_VALUE_MAX_BYTES}-byte limit of a metadata value`, 'maxBytes');
  const bad = nulName(value, 0);
  if (bad !== undefined) throw invalidField(valueField, `the field name ${JSON.stringify(bad)} inside the value contains a NUL byte (U+0000)`, 'key');
}

/** The first field name inside `value` holding a NUL byte (any depth up to the body's own limit of 64). */
function nulName(value: unknown, depth: number): string | undefined {
  if (typeof value !== 'object' || value === null || depth > 64) return undefined;
  if (Array.isArray(value)) {
    for (const v of value) {
      const bad = nulName(v, depth + 1);
      if (bad !== undefined) return bad;
    }
    return undefined;
  }
  for (const [k, v] of Object.entries(value)) {
    if (k.includes('\0')) return k;
    const bad = nulName(v, depth + 1);
    if (bad !== undefined) return bad;
  }
  return undefined;
}

/** The 400 for a null metadata value, pointing to the DELETE route. */
export function nullMetadataValue(field: string, key: string): AppError {
  return invalidField(field, `null is not a metadata value; remove the key with DELETE /api/v1/tasks/{taskId}/metadata/${key}`, 'null');
}

/** Drops repeated values (tags, ids), keeping first occurrences in order; a new array. */
export function distinct(values: readonly string[]): string[] {
  // none or one value repeats nothing: no set is built (a detail read asks for every task)
  return values.length < 2 ? values.slice() : [...new Set(values)];
}

/**
 * A new stored task from a create body (docs/tasks.md "Rules and choices"): id {@link timeOrderedId} (a UUID v7), title trimmed, status
 * default `todo`, path default `""`, `checkInCount` 0, dates from `now` (ISO 8601 UTC),
 * `created_by`/`updated_by` = `userId`, metadata keys escaped. `""` for assignee, kickoff or
 * deadline means none. Pure apart from the id: references (assignee, links) are checked by
 * {@link checkAssignee} / {@link checkTaskRefs}. Throws 400 `VALIDATION_FAILED` naming the field.
 * Callers add sharing fields (`groupId`, `groupPermission`, `boardId`) themselves.
 */
export function newTaskDoc(body: TaskCreateBody, userId: string, now: Date): TaskDoc {
  const at = now.toISOString();
  const doc: TaskDoc = {
    _id: timeOrderedId(),
    title: validateTitle(body.title),
    description: body.description ?? '',
    status: body.status ?? 'todo',
    path: validatePath('/path', body.path ?? ''),
    tags: distinct(body.tags ?? []),
    checkInCount: 0,
    metadata: encodeMetadataInput(body.metadata ?? {}),
    created_at: at,
    created_by: userId,
    updated_at: at,
    updated_by: userId,
    linkedToIds: distinct(body.linked_to_ids ?? []),
    resourceIds: body.resourceIds ?? [],
    deleted: false,
    version: 1,
  };
  if (body.assignee) doc.assignee = body.assignee;
  if (body.kickoff) doc.kickoff = normalizeDate('/kickoff', body.kickoff);
  if (body.deadline) doc.deadline = normalizeDate('/deadline', body.deadline);
  if (body.derived_from_id) doc.derivedFromId = body.derived_from_id;
  return doc;
}

/**
 * The MongoDB update for a partial task update (docs/tasks.md "Rules and choices"): omitted fields stay;
 * `""` for assignee, kickoff, deadline or derivedFromId `$unset`s the field (absent from the task
 * object afterwards); dates are normalized; `metadata` keys are merged one by one (escaped);
 * `updated_at`/`updated_by` are always set. Throws 400 `VALIDATION_FAILED` naming the field.
 * References are checked separately ({@link checkAssignee}, {@link checkTaskRefs}).
 */
export function taskPatchUpdate(patch: TaskUpdateBody, userId: string, now: Date): Update {
  const $set: Record<string, unknown> = {};
  const $unset: Record<string, ''> = {};
  if (patch.title !== undefined) $set.title = validateTitle(patch.title);
  if (patch.description !== undefined) $set.description = patch.description;
  if (patch.status !== undefined) $set.status = patch.status;
  if (patch.path !== undefined) $set.path = validatePath('/path', patch.path);
  if (patch.tags !== undefined) $set.tags = distinct(patch.tags);
  const clearable = {
    assignee: (v: string) => v,
    kickoff: (v: string) => normalizeDate('/kickoff', v),
    deadline: (v: string) => normalizeDate('/deadline', v),
    derivedFromId: (v: string) => v,
  } as const;
  for (const [field, normalize] of Object.entries(clearable) as Array<[keyof typeof clearable, (v: string) => string]>) {
    const v = patch[field];
    if (v === '') $unset[field] = '';
    else if (v !== undefined) $set[field] = normalize(v);
  }
  for (const [key, value] of Object.entries(encodeMetadataInput(patch.metadata ?? {}))) $set[`metadata.${key}`] = value;
  $set.updated_at = now.toISOString();
  $set.updated_by = userId;
  return Object.keys($unset).length > 0 ? { $set, $unset } : { $set };
}

/** `$set` of one metadata key (escaped path) plus the update stamp. */
export function metadataSetUpdate(key: string, value: unknown, userId: string, now: Date): Update {
  return { $set: { [metadataPath(key)]: value, updated_at: now.toISOString(), updated_by: userId } };
}

/**
 * A note on a task as stored in the `notes` collection (docs/architecture.md §9); `_id` is the note id.
 * Listed oldest first (`created_at`, then `_id`).
 */
export interface NoteDoc extends Doc {
  _id: string;
  task_id: string;
  content: string;
  created_at: string;
  created_by: string;
  updated_at: string;
  updated_by: string;
}

/**
 * A new note on task `taskId` (also used for the close-sprint retro note). `content` is stored
 * as given; a blank one is a 400 `VALIDATION_FAILED` on `/content`.
 */
export function newNoteDoc(taskId: string, content: string, userId: string, now: Date): NoteDoc {
  if (content.trim() === '') throw invalidField('/content', 'must not be empty', 'required');
  const at = now.toISOString();
  return { _id: randomUUID(), task_id: taskId, content, created_at: at, created_by: userId, updated_at: at, updated_by: userId };
}

/**
 * Checks the references of a new task in the order assignee, `derived_from_id`, `linked_to_ids`
 * (see {@link checkAssignee} and {@link checkTaskRefs}); the first fault is thrown.
 */
export async function checkNewTaskRefs(
  store: DocumentStore,
  p: Principal,
  body: Pick<TaskCreateBody, 'assignee' | 'derived_from_id' | 'linked_to_ids' | 'metadata'>,
  session?: Session,
): Promise<void> {
  if (body.assignee) await checkAssignee(store, body.assignee, '/assignee', session);
  const refs = (body.linked_to_ids ?? []).map((id, i) => ({ field: `/linked_to_ids/${i}`, id }));
  if (body.derived_from_id) refs.unshift({ field: '/derived_from_id', id: body.derived_from_id });
  await checkTaskRefs(store, p, refs, session);
  const sprint = (body.metadata as Record<string, unknown> | undefined)?.[SPRINT_KEY];
  if (sprint !== undefined) await checkSprintAssignment(store, p, sprint, `/metadata/${SPRINT_KEY}`, session);
}

/**
 * The sprint window rule (docs/sprints.md): a sprint task (metadata `app.type` = `sprint`) with
 * both dates must not start after it ends: `kickoff` > `deadline` → 400 `VALIDATION_FAILED`
 * naming `/kickoff`. Other tasks are not checked. `task` holds the stored (normalized UTC) dates
 * as they will be after the write.
 */
export function checkSprintWindow(task: Pick<TaskDoc, 'metadata' | 'kickoff' | 'deadline'>): void {
  if (task.metadata?.[escapeKey('app.type')] !== 'sprint') return;
  if (task.kickoff !== undefined && task.deadline !== undefined && task.kickoff > task.deadline) {
    throw invalidField('/kickoff', `${task.kickoff} is after the sprint's deadline ${task.deadline}`, 'order');
  }
}

/** The metadata key whose value makes a task a member of that sprint (docs/architecture.md §8). */
export const SPRINT_KEY = 'app.sprint';

/**
 * The rule for joining a sprint (docs/sprints.md "Who may put a task into a sprint"): setting
 * metadata `app.sprint` to a task id needs WRITE access to that task, because the sprint's
 * close-sprint later writes to its members. Checked on every write that sets the key: task
 * create, card create, PATCH, the one-key metadata PATCH, and every batch item (through
 * {@link checkNewTaskRefs} and {@link checkSprintChange}). A value that is not a string names no
 * task and is let through; `sprintId` missing, soft-deleted or unreadable → 404 `TASK_NOT_FOUND`
 * (`details.field` names the body field); readable but not writable → 403 `FORBIDDEN`.
 * `p` is the caller, or a function giving it (read only when a check is needed).
 */
export async function checkSprintAssignment(
  store: DocumentStore,
  p: Principal | (() => Promise<Principal>),
  sprintId: unknown,
  field: string,
  session?: Session,
): Promise<void> {
  if (typeof sprintId !== 'string') return;
  const details = { taskId: sprintId, field };
  const sprint = isUuid(sprintId)
    ? await store
      .collection<TaskDoc>(Collections.tasks)
      .findOne({ _id: sprintId, deleted: false }, { projection: { _id: 1, created_by: 1, groupId: 1, groupPermission: 1 }, ...(session ? { session } : {}) })
    : null;
  const principal = typeof p === 'function' ? await p() : p;
  if (!sprint || !canReadTask(principal, sprint)) {
    throw new AppError('TASK_NOT_FOUND', { message: `${field.slice(1)}: no sprint with id "${sprintId}" that you can read`, details });
  }
  if (!canWriteTask(principal, sprint)) {
    throw new AppError('FORBIDDEN', { message: `${field.slice(1)}: you may read sprint ${sprintId} but not write it, so you cannot add tasks to it`, details });
  }
}

/**
 * {@link checkSprintAssignment} for a write to an existing task: `update` is the store update about
 * to be applied to `task` (the API-level writes build it with {@link taskPatchUpdate} or
 * {@link metadataSetUpdate}); when it sets `app.sprint` to a value other than the task's current
 * one, the caller must be allowed to write that sprint. Keeping a task in the sprint it is already
 * in needs nothing (a share removed after planning does not block unrelated edits).
 */
export async function checkSprintChange(
  store: DocumentStore,
  userId: string,
  task: Pick<TaskDoc, 'metadata'>,
  update: Update,
  field: string,
  session?: Session,
): Promise<void> {
  const path = metadataPath(SPRINT_KEY);
  const set = (update as { $set?: Record<string, unknown> }).$set;
  if (!set || !(path in set)) return;
  const value = set[path];
  if (value === task.metadata?.[path.slice('metadata.'.length)]) return;
  await checkSprintAssignment(store, () => loadPrincipal(store, userId, session), value, field, session);
}

/**
 * Checks that `assignee` is the `_id` of a user (`users` collection); else 400
 * `ASSIGNEE_NOT_FOUND` naming `field`. Read in `session` when given (a write's transaction).
 */
export async function checkAssignee(store: DocumentStore, assignee: string, field = '/assignee', session?: Session): Promise<void> {
  const user = await store.collection<Doc>(Collections.users).findOne({ _id: assignee }, { projection: { _id: 1 }, ...(session ? { session } : {}) });
  if (user) return;
  const message = `no user with id "${assignee}"`;
  throw new AppError('ASSIGNEE_NOT_FOUND', { message: `${field.slice(1)}: ${message}`, details: { assignee }, validationErrors: [{ field, code: 'not_found', message }] });
}

/**
 * Checks, in one read, that every referenced task id (`derived_from_id`, `linked_to_ids`, …) is a
 * live task the principal can read; else 400 `VALIDATION_FAILED` listing each bad reference by
 * field (an unreadable task is reported like a missing one, docs/architecture.md §4). Read in
 * `session` when given (a write's transaction).
 */
export async function checkTaskRefs(store: DocumentStore, p: Principal, refs: ReadonlyArray<{ field: string; id: string }>, session?: Session): Promise<void> {
  if (refs.length === 0) return;
  const ids = [...new Set(refs.map((r) => r.id).filter(isUuid))];
  const found = ids.length === 0 ? [] : await store
    .collection<TaskDoc>(Collections.tasks)
    .find({ $and: [readableTasksFilter(p), { _id: { $in: ids } }] }, { projection: { _id: 1 }, ...(session ? { session } : {}) });
  const known = new Set(found.map((t) => t._id));
  const errors: FieldError[] = refs
    .filter((r) => !known.has(r.id))
    .map((r) => ({ field: r.field, code: 'not_found', message: `no task with id "${r.id}" that you can read` }));
  const first = errors[0];
  if (first) throw new AppError('VALIDATION_FAILED', { message: `${first.field.slice(1)}: ${first.message}`, validationErrors: errors });
}
