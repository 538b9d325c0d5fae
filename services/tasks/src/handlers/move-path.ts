import type { Handler } from '@app/shared/bus';
import type { TasksOps } from '@app/shared/contracts';
import { runWrite, taskUpdatedEvent, toTask, validatePath, type ServiceDeps } from '@app/shared/domain';
import { loadTask, writeTask } from '../task-store.js';

/** `tasks.movePath`: moves a task to another folder `path` (not the kanban card move); `task.updated` when it changes. */
export const movePath = (deps: ServiceDeps): Handler<typeof TasksOps.movePath> => async (input, ctx) =>
  runWrite(deps, ctx, async (w) => {
    const { task } = await loadTask(deps.store, ctx, input.taskId, 'write', w.session);
    const path = validatePath('/path', input.path);
    const after = await writeTask(deps.store, w, task, { $set: { path, updated_at: w.now.toISOString(), updated_by: w.userId } });
    const event = taskUpdatedEvent(task, after);
    if (event) w.emit(event);
    return toTask(after);
  });
