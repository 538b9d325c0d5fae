import type { Handler } from '@app/shared/bus';
import type { TasksOps } from '@app/shared/contracts';
import { toTask, validatePath, type ServiceDeps } from '@app/shared/domain';
import { loadTask, writeTask } from '../task-access.js';

/** `tasks.movePath`: moves a task to another folder `path` (not the kanban card move). */
export const movePath = (deps: ServiceDeps): Handler<typeof TasksOps.movePath> => async (input, ctx) => {
  const { userId } = await loadTask(deps.store, ctx, input.taskId, 'write');
  const path = validatePath('/path', input.path);
  const at = deps.clock.now().toISOString();
  return toTask(await writeTask(deps.store, input.taskId, { $set: { path, updated_at: at, updated_by: userId } }));
};
