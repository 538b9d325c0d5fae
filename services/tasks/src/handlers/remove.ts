import type { Handler } from '@app/shared/bus';
import type { TasksOps } from '@app/shared/contracts';
import type { ServiceDeps } from '@app/shared/domain';
import { loadTask, writeTask } from '../task-access.js';

/** `tasks.remove`: soft delete (SPEC "States and transitions"); the task then answers 404 everywhere. */
export const remove = (deps: ServiceDeps): Handler<typeof TasksOps.remove> => async (input, ctx) => {
  const { userId } = await loadTask(deps.store, ctx, input.taskId, 'write');
  await writeTask(deps.store, input.taskId, { $set: { deleted: true, deleted_at: deps.clock.now().toISOString(), deleted_by: userId } });
  return null;
};
