import { callerId, type Handler } from '@app/shared/bus';
import type { TasksOps } from '@app/shared/contracts';
import type { ServiceDeps } from '@app/shared/domain';
import { loadTask, taskDetailJson } from '../task-store.js';

/** `tasks.get`: task detail with notes, linked items and subtasks, encoded from memoized pieces ({@link taskDetailJson}). */
export const get = (deps: ServiceDeps): Handler<typeof TasksOps.get> => async (input, ctx) => {
  const { task, principal } = await loadTask(deps.store, ctx, input.taskId, 'read');
  return taskDetailJson(deps.store, principal, task, callerId(ctx));
};
