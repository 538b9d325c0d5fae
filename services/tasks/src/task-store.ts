import { callerId, FrozenJsonMemo, jsonText, type CallContext, type EncodedJson } from '@app/shared/bus';
import type { LinkedItem, Note, TaskDetail } from '@app/shared/contracts';
import {
  canReadTask, canWriteTask, checkIfMatch, checkTaskUpdateFields, ownsOutright, checkSprintChange, distinct, isUuid, loadPrincipal, nextVersion, readableTasksFilter, toTask, versionGuard, versionOf,
  type NoteDoc, type Principal, type TaskDoc, type WriteUnit,
} from '@app/shared/domain';
import { AppError } from '@app/shared/errors';
import { Collections, decodeMetadata, type DocumentStore, type Session, type Update } from '@app/shared/store';

/** 404 for a task that is missing, soft-deleted, unreadable or not a UUID (never reveals existence). */
export function taskNotFound(taskId: string): AppError {
  return new AppError('TASK_NOT_FOUND', { details: { taskId } });
}

/*
 * How the tasks service's handlers read and write tasks: the collections, a task loaded with its
 * access checked (`loadTask`), the conditional write pinned at the version read (`writeTask`),
 * notes and the task detail. The access rules themselves are `@app/shared/domain`'s (access.ts).
 */

/** Most tasks derived from one task that its detail lists as `subtasks` (oldest first). */
export const SUBTASKS_MAX = 200;

/** The `tasks` collection. */
export const tasksOf = (store: DocumentStore) => store.collection<TaskDoc>(Collections.tasks);
/** The `notes` collection. */
export const notesOf = (store: DocumentStore) => store.collection<NoteDoc>(Collections.notes);

/**
 * A live task the caller may access. `principal()` gives the caller as access rules see it (its
 * groups); it is read at most once, and only when asked for.
 */
export interface Loaded {
  task: TaskDoc;
  userId: string;
  principal: () => Promise<Principal>;
}

/**
 * Loads live task `taskId` for the caller (docs/architecture.md §5, §9): not a UUID, missing, soft-deleted or
 * unreadable → 404 `TASK_NOT_FOUND`; `need: 'write'` and readable but not writable → 403 `FORBIDDEN`.
 * The task is read first; the caller's groups only when the caller is not its owner (an owner
 * may read and write its tasks whatever its groups, unless an access token narrows it to boards)
 * or when a handler asks for `principal()`.
 * A write passes its transaction `session` and is then also checked against the request's
 * `If-Match` (412 `PRECONDITION_FAILED`).
 */
export async function loadTask(
  store: DocumentStore, ctx: Pick<CallContext, 'userId' | 'ifMatch'>, taskId: string, need: 'read' | 'write', session?: Session,
): Promise<Loaded> {
  const userId = callerId(ctx);
  if (!isUuid(taskId)) throw taskNotFound(taskId);
  const s = session ? { session } : {};
  const task = await tasksOf(store).findOne({ _id: taskId, deleted: false }, s);
  return admit(store, task, taskId, userId, need, ctx.ifMatch, session);
}

/** Most documents the detail's first read takes: the task and one more subtask than are listed. */
const WITH_DERIVED_LIMIT = SUBTASKS_MAX + 2;

/**
 * {@link loadTask} for reading (`need: 'read'`) with the live tasks derived from it, in one read:
 * the live tasks that are `taskId` or name it as `derivedFromId`, at most
 * {@link WITH_DERIVED_LIMIT} (a detail lists at most {@link SUBTASKS_MAX} subtasks: a full answer
 * says there are more, and the detail reads them again sorted). `derived` holds every subtask read
 * (all of them when there are no more than {@link SUBTASKS_MAX}). When the answer is full and the
 * task is not in it, the task is read by itself.
 */
export async function loadTaskWithDerived(store: DocumentStore, ctx: Pick<CallContext, 'userId'>, taskId: string): Promise<Loaded & { derived: TaskDoc[] }> {
  const userId = callerId(ctx);
  if (!isUuid(taskId)) throw taskNotFound(taskId);
  const docs = await tasksOf(store).find({ deleted: false, $or: [{ _id: taskId }, { derivedFromId: taskId }] }, WITH_DERIVED_READ);
  let task: TaskDoc | null = null;
  const derived: TaskDoc[] = [];
  for (const d of docs) {
    if (d._id === taskId) task = d;
    if (d.derivedFromId === taskId) derived.push(d);
  }
  if (task === null && docs.length >= WITH_DERIVED_LIMIT) task = await tasksOf(store).findOne({ _id: taskId, deleted: false });
  return { ...(await admit(store, task, taskId, userId, 'read')), derived };
}

/** The options of {@link loadTaskWithDerived}'s read. */
const WITH_DERIVED_READ = { limit: WITH_DERIVED_LIMIT } as const;

/** {@link loadTask} once the task is read (`null`: none live): the caller's access to it, and a write's `If-Match`. */
async function admit(
  store: DocumentStore, task: TaskDoc | null, taskId: string, userId: string, need: 'read' | 'write', ifMatch?: CallContext['ifMatch'], session?: Session,
): Promise<Loaded> {
  if (!task) throw taskNotFound(taskId);
  let loading: Promise<Principal> | undefined;
  const principal = () => (loading ??= loadPrincipal(store, userId, session));
  if (!ownsOutright(userId, task.created_by)) {
    const p = await principal();
    if (!canReadTask(p, task)) throw taskNotFound(taskId);
    if (need === 'write' && !canWriteTask(p, task)) throw new AppError('FORBIDDEN', { details: { taskId } });
  }
  if (need === 'write') checkIfMatch(ifMatch, versionOf(task), { taskId });
  return { task, principal, userId };
}

/**
 * Applies `update` to live task `task` (as loaded in this unit's transaction) as ONE conditional
 * write pinned at the loaded version (`{_id, deleted:false, version}`), bumping the
 * version, and returns the task after it. A miss means the task changed under the transaction:
 * 409 `CONFLICT` (retry), nothing written.
 * Every write to an existing task passes here, so this is where the sprint rule is enforced: an
 * update that moves the task into another sprint (`app.sprint`) needs write access to that sprint
 * (`checkSprintChange`: 404 / 403 naming `sprintField`, the body field that carried it), and the
 * custom field rule: the metadata it sets must fit the task's definitions
 * (`checkTaskUpdateFields`: 400 `CUSTOM_FIELD_VALUE_INVALID`; stored values normalized).
 */
export async function writeTask(
  store: DocumentStore, w: WriteUnit, task: TaskDoc, update: Update & { $set: Record<string, unknown> }, sprintField = '/metadata/app.sprint',
): Promise<TaskDoc> {
  await checkSprintChange(store, w.userId, task, update, sprintField, w.session);
  await checkTaskUpdateFields(store, task, update.$set, w.session);
  const after = await tasksOf(store).findOneAndUpdate(
    { _id: task._id, deleted: false, ...versionGuard(task) },
    { ...update, $set: { ...update.$set, ...nextVersion(task) } },
    { returnDocument: 'after', session: w.session },
  );
  if (!after) throw new AppError('CONFLICT', { message: 'The task changed during the write; read it again and retry', details: { taskId: task._id } });
  return after;
}

/** Maps a stored note to the API note. */
export function toNote(n: NoteDoc): Note {
  return {
    id: n._id, task_id: n.task_id, content: n.content,
    created_at: n.created_at, created_by: n.created_by, updated_at: n.updated_at, updated_by: n.updated_by,
  };
}

/** How notes are read: oldest first, ties broken by id. */
const NOTES_ORDER = { sort: { created_at: 1, _id: 1 } } as const;

/** The stored notes of a task, oldest first (ties broken by id). */
function noteDocs(store: DocumentStore, taskId: string, session?: Session): Promise<NoteDoc[]> {
  return notesOf(store).find({ task_id: taskId }, session ? { ...NOTES_ORDER, session } : NOTES_ORDER);
}

/** The notes of a task, oldest first (ties broken by id). */
export async function listNotes(store: DocumentStore, taskId: string): Promise<Note[]> {
  return (await noteDocs(store, taskId)).map(toNote);
}

/** The stored fields a linked item is made of. */
const LINKED_PROJECTION = {
  _id: 1, title: 1, status: 1, created_at: 1, updated_at: 1, assignee: 1, kickoff: 1, deadline: 1, description: 1, tags: 1, metadata: 1,
} as const;

/**
 * A linked task as the detail view shows it (ud's `LinkedItemInfoDTO`): id, title, status and
 * timestamps always; assignee, kickoff, deadline, a non-empty description, non-empty tags and
 * metadata with keys (decoded) when set.
 */
export function toLinkedItem(t: Pick<TaskDoc, keyof typeof LINKED_PROJECTION>): LinkedItem {
  const item: LinkedItem = { id: t._id, title: t.title, status: t.status, created_at: t.created_at, updated_at: t.updated_at };
  if (t.assignee !== undefined) item.assignee = t.assignee;
  if (t.kickoff !== undefined) item.kickoff = t.kickoff;
  if (t.deadline !== undefined) item.deadline = t.deadline;
  if (t.description) item.description = t.description;
  if (t.tags?.length) item.tags = t.tags;
  if (t.metadata && Object.keys(t.metadata).length > 0) item.metadata = decodeMetadata(t.metadata);
  return item;
}

/** Summaries of the linked tasks (ids `linkIds`) the principal can read; deleted ones left out. */
async function linkedItems(store: DocumentStore, principal: () => Promise<Principal>, linkIds: string[], session?: Session): Promise<Map<string, LinkedItem>> {
  const filter = { $and: [readableTasksFilter(await principal()), { _id: { $in: linkIds } }] };
  const linked = await tasksOf(store).find(filter, { projection: LINKED_PROJECTION, ...(session ? { session } : {}) });
  return new Map(linked.map((t) => [t._id, toLinkedItem(t)]));
}



/** The stored fields a subtask summary is made of, with those its access check needs. */
const SUBTASK_PROJECTION = { ...LINKED_PROJECTION, created_by: 1, groupId: 1, tags: 1 } as const;

/** The first read of a task's subtasks: unsorted, at most one more than are listed. */
const SUBTASKS_FIRST_READ = { projection: SUBTASK_PROJECTION, limit: SUBTASKS_MAX + 1 } as const;

/** No linked items (shared, so frozen: a caller copies it before handing it out). */
const NO_ITEMS = Object.freeze([]) as unknown as LinkedItem[];
/** No linked tasks by id (shared: never changed, only read). */
const NO_LINKS: ReadonlyMap<string, LinkedItem> = new Map();

/** Oldest first, ties by id: the order of `subtasks` (ISO timestamps and UUIDs compare as text). */
const byCreation = (a: Pick<TaskDoc, 'created_at' | '_id'>, b: Pick<TaskDoc, 'created_at' | '_id'>): number =>
  a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : a._id < b._id ? -1 : a._id > b._id ? 1 : 0;

/**
 * Summaries of the live tasks derived from `taskId` (their `derivedFromId` is it), oldest first
 * (ties by id), at most {@link SUBTASKS_MAX} read, those the caller cannot read left out. The
 * caller's groups are read only when one of them is not the caller's own.
 * Every detail read asks, and most tasks have no subtask: the first read is an unsorted one of at
 * most {@link SUBTASKS_MAX} + 1 (an index lookup, docs/bench.md "Where a request's time goes"),
 * sorted here; only a task with more subtasks than that is read again, sorted and cut by the store.
 * `read`: that first read made already (the subtasks {@link loadTaskWithDerived} read with the task).
 */
async function subtaskItems(
  store: DocumentStore, principal: () => Promise<Principal>, taskId: string, userId: string, session?: Session, read?: TaskDoc[],
): Promise<LinkedItem[]> {
  const filter = { derivedFromId: taskId, deleted: false };
  let derived = read ?? await tasksOf(store).find(filter, session ? { ...SUBTASKS_FIRST_READ, session } : SUBTASKS_FIRST_READ);
  if (derived.length === 0) return NO_ITEMS;
  if (derived.length > SUBTASKS_MAX) {
    derived = await tasksOf(store).find(filter, { projection: SUBTASK_PROJECTION, sort: { created_at: 1, _id: 1 }, limit: SUBTASKS_MAX, ...(session ? { session } : {}) });
  } else derived.sort(byCreation);
  const p = derived.every((t) => t.created_by === userId) ? undefined : await principal();
  return derived.filter((t) => !p || canReadTask(p, t)).map(toLinkedItem);
}

/** What a task detail adds to the task: its notes (stored) and the summaries of its readable links and subtasks. */
interface DetailParts {
  notes: NoteDoc[];
  linkedTo: LinkedItem[];
  derivedFrom: LinkedItem | undefined;
  subtasks: LinkedItem[];
}

/**
 * Reads the parts of a task detail: notes, links and subtasks concurrently, all links in one
 * batched read; the caller's groups (`principal`, see {@link Loaded}) only when the task has links
 * or a subtask of someone else. Deleted or unreadable links and subtasks are left out.
 */
async function detailParts(
  store: DocumentStore, principal: () => Promise<Principal>, task: TaskDoc, userId: string, session?: Session, derived?: TaskDoc[],
): Promise<DetailParts> {
  const linked = task.linkedToIds.length > 0 || Boolean(task.derivedFromId); // linkIdsOf(task) is not empty
  // in a transaction one read at a time, in its session; outside it concurrently (a task without
  // links whose subtasks were read with it: the notes' read alone)
  let notes: NoteDoc[];
  let byId: ReadonlyMap<string, LinkedItem> = NO_LINKS;
  let subtasks: LinkedItem[];
  if (session) {
    notes = await noteDocs(store, task._id, session);
    if (linked) byId = await linkedItems(store, principal, linkIdsOf(task), session);
    subtasks = await subtaskItems(store, principal, task._id, userId, session);
  } else if (linked) {
    [notes, byId, subtasks] = await Promise.all([noteDocs(store, task._id), linkedItems(store, principal, linkIdsOf(task)), subtaskItems(store, principal, task._id, userId, undefined, derived)]);
  } else if (derived?.length === 0) {
    notes = await noteDocs(store, task._id);
    subtasks = NO_ITEMS;
  } else {
    [notes, subtasks] = await Promise.all([noteDocs(store, task._id), subtaskItems(store, principal, task._id, userId, undefined, derived)]);
  }
  return {
    notes,
    linkedTo: task.linkedToIds.length === 0 ? NO_ITEMS : task.linkedToIds.flatMap((id) => byId.get(id) ?? []),
    derivedFrom: task.derivedFromId !== undefined ? byId.get(task.derivedFromId) : undefined,
    subtasks,
  };
}

/** The ids of the tasks `task` links to (`derivedFromId` first), each once. */
function linkIdsOf(task: TaskDoc): string[] {
  return distinct(task.derivedFromId ? [task.derivedFromId, ...task.linkedToIds] : task.linkedToIds);
}

/**
 * Task detail (docs/tasks.md "Shapes"): the task plus `notes`, and `derivedFrom`/`linkedTo`
 * summaries of the linked tasks the caller can read, and `subtasks` (tasks derived from it, when
 * there are any); deleted or unreadable links are left out. `userId` is the caller; `session`:
 * read in that transaction (a write's reply), one read after the other.
 */
export async function taskDetail(store: DocumentStore, principal: () => Promise<Principal>, task: TaskDoc, userId: string, session?: Session): Promise<TaskDetail> {
  const { notes, linkedTo, derivedFrom, subtasks } = await detailParts(store, principal, task, userId, session);
  // The API task is a fresh object: extended in place rather than copied.
  const detail = toTask(task) as TaskDetail;
  detail.notes = notes.map(toNote);
  detail.linkedTo = linkedTo === NO_ITEMS ? [] : linkedTo;
  if (derivedFrom) detail.derivedFrom = derivedFrom;
  if (subtasks.length > 0) detail.subtasks = subtasks;
  return detail;
}

const encodedTasks = new FrozenJsonMemo<TaskDoc>((t) => toTask(t));
const encodedNotes = new FrozenJsonMemo<NoteDoc>(toNote);

/**
 * {@link taskDetail} as the JSON text `JSON.stringify` gives for it, assembled from the memoized
 * encodings of the task and its notes (`version`: the task's, for the ETag). `derived`: the
 * task's subtasks as read with it ({@link loadTaskWithDerived}); without it they are read here.
 */
export async function taskDetailJson(
  store: DocumentStore, principal: () => Promise<Principal>, task: TaskDoc, userId: string, derived?: TaskDoc[],
): Promise<EncodedJson<TaskDetail>> {
  const { notes, linkedTo, derivedFrom, subtasks } = await detailParts(store, principal, task, userId, undefined, derived);
  const head = encodedTasks.json(task).slice(0, -1); // without its closing brace
  const noteTexts = notes.length === 1 ? encodedNotes.json(notes[0]!) : notes.map((n) => encodedNotes.json(n)).join(',');
  const from = derivedFrom ? `,"derivedFrom":${JSON.stringify(derivedFrom)}` : '';
  const subs = subtasks.length > 0 ? `,"subtasks":${JSON.stringify(subtasks)}` : '';
  const links = linkedTo.length === 0 ? '[]' : JSON.stringify(linkedTo);
  return jsonText<TaskDetail>(`${head},"notes":[${noteTexts}],"linkedTo":${links}${from}${subs}}`, versionOf(task));
}
