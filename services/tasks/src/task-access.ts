import { callerId, type CallContext } from '@app/shared/bus';
import type { LinkedItem, Note, TaskDetail } from '@app/shared/contracts';
import {
  canReadTask, canWriteTask, distinct, isUuid, loadPrincipal, readableTasksFilter, toTask,
  type NoteDoc, type Principal, type TaskDoc,
} from '@app/shared/domain';
import { AppError } from '@app/shared/errors';
import { Collections, type DocumentStore, type Filter, type Update } from '@app/shared/store';

/** 404 for a task that is missing, soft-deleted, unreadable or not a UUID (never reveals existence). */
export function taskNotFound(taskId: string): AppError {
  return new AppError('TASK_NOT_FOUND', { details: { taskId } });
}

export const tasksOf = (store: DocumentStore) => store.collection<TaskDoc>(Collections.tasks);
export const notesOf = (store: DocumentStore) => store.collection<NoteDoc>(Collections.notes);

/** A live task the caller may access, with the caller as access rules see it. */
export interface Loaded {
  task: TaskDoc;
  principal: Principal;
  userId: string;
}

/**
 * Loads live task `taskId` for the caller (DESIGN §5, §9): not a UUID, missing, soft-deleted or
 * unreadable → 404 `TASK_NOT_FOUND`; `need: 'write'` and readable but not writable → 403 `FORBIDDEN`.
 * The task and the caller's groups are read concurrently.
 */
export async function loadTask(store: DocumentStore, ctx: CallContext, taskId: string, need: 'read' | 'write'): Promise<Loaded> {
  const userId = callerId(ctx);
  if (!isUuid(taskId)) throw taskNotFound(taskId);
  const [principal, task] = await Promise.all([loadPrincipal(store, userId), tasksOf(store).findOne({ _id: taskId, deleted: false })]);
  if (!task || !canReadTask(principal, task)) throw taskNotFound(taskId);
  if (need === 'write' && !canWriteTask(principal, task)) throw new AppError('FORBIDDEN', { details: { taskId } });
  return { task, principal, userId };
}

/**
 * Applies `update` to live task `taskId` as ONE conditional write (`{_id, deleted:false}` plus
 * `extraFilter`) and returns the task after it. No match (deleted meanwhile, or `extraFilter`
 * failed) → the error from `onMiss` (default 404 `TASK_NOT_FOUND`); nothing is written then.
 */
export async function writeTask(
  store: DocumentStore,
  taskId: string,
  update: Update,
  extraFilter: Filter = {},
  onMiss: () => AppError = () => taskNotFound(taskId),
): Promise<TaskDoc> {
  const after = await tasksOf(store).findOneAndUpdate({ _id: taskId, deleted: false, ...extraFilter }, update, { returnDocument: 'after' });
  if (!after) throw onMiss();
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

/**
 * Task detail (SPEC "Task detail family"): the task plus `notes`, and `derivedFrom`/`linkedTo`
 * summaries of the linked tasks the caller can read; deleted or unreadable links are left out.
 * Notes and all links are read concurrently, the links in one batched read.
 */
export async function taskDetail(store: DocumentStore, p: Principal, task: TaskDoc): Promise<TaskDetail> {
  const linkIds = distinct([...(task.derivedFromId ? [task.derivedFromId] : []), ...task.linkedToIds]);
  const [notes, linked] = await Promise.all([
    listNotes(store, task._id),
    linkIds.length === 0
      ? Promise.resolve([])
      : tasksOf(store).find({ $and: [readableTasksFilter(p), { _id: { $in: linkIds } }] }, { projection: { _id: 1, title: 1, status: 1 } }),
  ]);
  const byId = new Map<string, LinkedItem>(linked.map((t) => [t._id, { id: t._id, title: t.title, status: t.status }]));
  const detail: TaskDetail = { ...toTask(task), notes, linkedTo: task.linkedToIds.flatMap((id) => byId.get(id) ?? []) };
  const from = task.derivedFromId === undefined ? undefined : byId.get(task.derivedFromId);
  if (from) detail.derivedFrom = from;
  return detail;
}
