import type { Handler } from '@app/shared/bus';
import type { TasksOps } from '@app/shared/contracts';
import { runWrite, taskDeletedEvent, type ServiceDeps, type WriteUnit } from '@app/shared/domain';
import { loadTask, writeTask } from '../task-store.js';

/**
 * Soft-deletes task `taskId` in the unit `w` (the single DELETE and each id of batch-delete):
 * write access (404/403), `ifMatch` (412), then one conditional write; emits `task.deleted`.
 */
export async function removeTaskIn(deps: ServiceDeps, w: WriteUnit, ifMatch: string | undefined, taskId: string): Promise<void> {
  const { task } = await loadTask(deps.store, { userId: w.userId, ifMatch }, taskId, 'write', w.session);
  const after = await writeTask(deps.store, w, task, { $set: { deleted: true, deleted_at: w.now.toISOString(), deleted_by: w.userId } });
  w.emit(taskDeletedEvent(after));
}

/**
 * `tasks.remove`: soft delete (docs/tasks.md "Rules and choices"); the task then answers 404
 * everywhere until restored. Emits `task.deleted` `{task_id, task}`.
 */
export const remove = (deps: ServiceDeps): Handler<typeof TasksOps.remove> => async (input, ctx) =>
  runWrite(deps, ctx, async (w) => {
    await removeTaskIn(deps, w, ctx.ifMatch, input.taskId);
    return null;
  });
