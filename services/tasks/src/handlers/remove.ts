import type { Handler } from '@app/shared/bus';
import type { TasksOps } from '@app/shared/contracts';
import { runWrite, taskDeletedEvent, type ServiceDeps } from '@app/shared/domain';
import { loadTask, writeTask } from '../task-access.js';

/**
 * `tasks.remove`: soft delete (SPEC "States and transitions"); the task then answers 404
 * everywhere. Emits `task.deleted` `{task_id, task}`.
 */
export const remove = (deps: ServiceDeps): Handler<typeof TasksOps.remove> => async (input, ctx) =>
  runWrite(deps, ctx, async (w) => {
    const { task } = await loadTask(deps.store, ctx, input.taskId, 'write', w.session);
    const after = await writeTask(deps.store, w, task, { $set: { deleted: true, deleted_at: w.now.toISOString(), deleted_by: w.userId } });
    w.emit(taskDeletedEvent(after));
    return null;
  });
