import { canReadTask, canWriteTask, loadPrincipal, type Principal, type TaskDoc } from '@app/shared/domain';
import { AppError } from '@app/shared/errors';
import { Collections, type DocumentStore, type Session } from '@app/shared/store';
import { isSprint } from './members.js';

/** A sprint the caller may use, with the caller as access rules see it. */
export interface LoadedSprint {
  sprint: TaskDoc;
  principal: Principal;
}

/**
 * Loads sprint `sprintId` for `userId` (docs/architecture.md §4, §8), principal and task read concurrently
 * (one after the other inside a transaction `session`).
 * Missing, soft-deleted or unreadable → 404 `TASK_NOT_FOUND`; `need: 'write'` and not writable →
 * 403 `FORBIDDEN`; not a sprint (`app.type` ≠ `sprint`) → 400 `NOT_A_SPRINT`.
 */
export async function loadSprint(
  store: DocumentStore,
  userId: string,
  sprintId: string,
  need: 'read' | 'write',
  session?: Session,
): Promise<LoadedSprint> {
  const read = () => store.collection<TaskDoc>(Collections.tasks).findOne({ _id: sprintId, deleted: false }, session ? { session } : {});
  // One transaction's calls run one after another (a MongoDB session takes no parallel operations).
  const [principal, sprint] = session
    ? [await loadPrincipal(store, userId, session), await read()]
    : await Promise.all([loadPrincipal(store, userId), read()]);
  if (!sprint || !canReadTask(principal, sprint)) {
    throw new AppError('TASK_NOT_FOUND', { message: `Task ${sprintId} not found`, details: { id: sprintId } });
  }
  if (need === 'write' && !canWriteTask(principal, sprint)) {
    throw new AppError('FORBIDDEN', { message: `You may read sprint ${sprintId} but not change it`, details: { id: sprintId } });
  }
  if (!isSprint(sprint)) {
    throw new AppError('NOT_A_SPRINT', { message: `Task ${sprintId} is not a sprint (its app.type is not "sprint")`, details: { id: sprintId } });
  }
  return { sprint, principal };
}
