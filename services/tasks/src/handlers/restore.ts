import type { Handler } from '@app/shared/bus';
import type { TasksOps } from '@app/shared/contracts';
import {
  canWriteTask, checkIfMatch, ownsOutright, isUuid, loadPrincipal, nextVersion, runWrite, taskRestoredEvent, toTask, versionGuard, versionOf, type ServiceDeps,
} from '@app/shared/domain';
import { AppError } from '@app/shared/errors';
import { taskNotFound, tasksOf } from '../task-store.js';

/**
 * `tasks.restore` (`POST /tasks/{id}/restore`, legacy `/todolist/{id}/restore`): makes a
 * soft-deleted task live again. Only its owner or a member of its group with `rw` may restore it;
 * for anyone else, and for a task that is live or does not exist, the answer is 404
 * `TASK_NOT_FOUND` (a deleted task's existence is never revealed). `If-Match` is honoured (412).
 * One conditional write pinned at the version read (409 `CONFLICT` if it moved): `deleted`
 * false, `deleted_at`/`deleted_by` removed, the update stamp and version bumped. Emits
 * `task.restored` `{task}` and answers the restored task.
 */
export const restore = (deps: ServiceDeps): Handler<typeof TasksOps.restore> => async ({ taskId }, ctx) =>
  runWrite(deps, ctx, async (w) => {
    if (!isUuid(taskId)) throw taskNotFound(taskId);
    const tasks = tasksOf(deps.store);
    const task = await tasks.findOne({ _id: taskId, deleted: true }, { session: w.session });
    if (!task) throw taskNotFound(taskId);
    if (!ownsOutright(w.userId, task.created_by) && !canWriteTask(await loadPrincipal(deps.store, w.userId, w.session), task)) throw taskNotFound(taskId);
    checkIfMatch(ctx.ifMatch, versionOf(task), { taskId });
    const at = w.now.toISOString();
    const after = await tasks.findOneAndUpdate(
      { _id: taskId, deleted: true, ...versionGuard(task) },
      { $set: { deleted: false, updated_at: at, updated_by: w.userId, ...nextVersion(task) }, $unset: { deleted_at: '', deleted_by: '' } },
      { returnDocument: 'after', session: w.session },
    );
    if (!after) throw new AppError('CONFLICT', { message: 'The task changed during the restore; read it again and retry', details: { taskId } });
    w.emit(taskRestoredEvent(after));
    return toTask(after);
  });
