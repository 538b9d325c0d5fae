import { callerId, type CallContext } from '@app/shared/bus';
import type { LinkedItem, Note, TaskDetail } from '@app/shared/contracts';
import {
  canReadTask, canWriteTask, checkIfMatch, distinct, isUuid, loadPrincipal, nextVersion, readableTasksFilter, toTask, versionGuard, versionOf,
  type NoteDoc, type Principal, type TaskDoc, type WriteUnit,
} from '@app/shared/domain';
import { AppError } from '@app/shared/errors';
import { Collections, type DocumentStore, type Session, type Update } from '@app/shared/store';

/** 404 for a task that is missing, soft-deleted, unreadable or not a UUID (never reveals existence). */
export function taskNotFound(taskId: string): AppError {
  return new AppError('TASK_NOT_FOUND', { details: { taskId } });
}

export const tasksOf = (store: DocumentStore) => store.collection<TaskDoc>(Collections.tasks);
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
 * Loads live task `taskId` for the caller (DESIGN §5, §9): not a UUID, missing, soft-deleted or
 * unreadable → 404 `TASK_NOT_FOUND`; `need: 'write'` and readable but not writable → 403 `FORBIDDEN`.
 * The task is read first; the caller's groups only when the caller is not its owner (an owner
 * may read and write its tasks whatever its groups) or when a handler asks for `principal()`.
 * A write passes its transaction `session` and is then also checked against the request's
 * `If-Match` (412 `PRECONDITION_FAILED`, issue 11).
 */
export async function loadTask(
  store: DocumentStore, ctx: Pick<CallContext, 'userId' | 'ifMatch'>, taskId: string, need: 'read' | 'write', session?: Session,
): Promise<Loaded> {
  const userId = callerId(ctx);
  if (!isUuid(taskId)) throw taskNotFound(taskId);
  const s = session ? { session } : {};
  const task = await tasksOf(store).findOne({ _id: taskId, deleted: false }, s);
  if (!task) throw taskNotFound(taskId);
  let loading: Promise<Principal> | undefined;
  const principal = () => (loading ??= loadPrincipal(store, userId, session));
  if (task.created_by !== userId) {
    const p = await principal();
    if (!canReadTask(p, task)) throw taskNotFound(taskId);
    if (need === 'write' && !canWriteTask(p, task)) throw new AppError('FORBIDDEN', { details: { taskId } });
  }
  if (need === 'write') checkIfMatch(ctx.ifMatch, versionOf(task), { taskId });
  return { task, principal, userId };
}

/**
 * Applies `update` to live task `task` (as loaded in this unit's transaction) as ONE conditional
 * write pinned at the loaded version (`{_id, deleted:false, version}`, issue 11), bumping the
 * version, and returns the task after it. A miss means the task changed under the transaction:
 * 409 `CONFLICT` (retry), nothing written.
 */
export async function writeTask(store: DocumentStore, w: WriteUnit, task: TaskDoc, update: Update & { $set: Record<string, unknown> }): Promise<TaskDoc> {
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

/** The notes of a task, oldest first (ties broken by id). */
export async function listNotes(store: DocumentStore, taskId: string): Promise<Note[]> {
  const docs = await notesOf(store).find({ task_id: taskId }, { sort: { created_at: 1, _id: 1 } });
  return docs.map(toNote);
}

/** Summaries of the linked tasks (ids `linkIds`) the principal can read; deleted ones left out. */
async function linkedItems(store: DocumentStore, principal: () => Promise<Principal>, linkIds: string[]): Promise<Map<string, LinkedItem>> {
  const filter = { $and: [readableTasksFilter(await principal()), { _id: { $in: linkIds } }] };
  const linked = await tasksOf(store).find(filter, { projection: { _id: 1, title: 1, status: 1 } });
  return new Map(linked.map((t) => [t._id, { id: t._id, title: t.title, status: t.status }]));
}

/**
 * Task detail (SPEC "Task detail family"): the task plus `notes`, and `derivedFrom`/`linkedTo`
 * summaries of the linked tasks the caller can read; deleted or unreadable links are left out.
 * Notes and links are read concurrently, all links in one batched read; the caller's groups
 * (`principal`, see {@link Loaded}) are read only when the task has links.
 */
export async function taskDetail(store: DocumentStore, principal: () => Promise<Principal>, task: TaskDoc): Promise<TaskDetail> {
  const linkIds = distinct(task.derivedFromId ? [task.derivedFromId, ...task.linkedToIds] : task.linkedToIds);
  let notes: Note[];
  let byId: Map<string, LinkedItem> | undefined;
  if (linkIds.length === 0) notes = await listNotes(store, task._id);
  else [notes, byId] = await Promise.all([listNotes(store, task._id), linkedItems(store, principal, linkIds)]);
  // The API task is a fresh object: extended in place rather than copied.
  const detail = toTask(task) as TaskDetail;
  detail.notes = notes;
  detail.linkedTo = byId ? task.linkedToIds.flatMap((id) => byId.get(id) ?? []) : [];
  const from = byId && task.derivedFromId !== undefined ? byId.get(task.derivedFromId) : undefined;
  if (from) detail.derivedFrom = from;
  return detail;
}
