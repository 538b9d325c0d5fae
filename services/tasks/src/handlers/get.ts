import type { Handler } from '@app/shared/bus';
import type { TasksOps } from '@app/shared/contracts';
import type { ServiceDeps } from '@app/shared/domain';
import { loadTask, taskDetail } from '../task-access.js';

/** `tasks.get`: task detail with notes and linked items. */
export const get = (deps: ServiceDeps): Handler<typeof TasksOps.get> => async (input, ctx) => {
  const { task, principal } = await loadTask(deps.store, ctx, input.taskId, 'read');
  return taskDetail(deps.store, principal, task);
};
