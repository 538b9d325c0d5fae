import { callerId, type Handler } from '@app/shared/bus';
import type { TasksOps } from '@app/shared/contracts';
import type { ServiceDeps } from '@app/shared/domain';
import { loadTaskWithDerived, taskDetailJson } from '../task-store.js';

/**
 * `tasks.get`: task detail with notes, linked items and subtasks, encoded from memoized pieces
 * ({@link taskDetailJson}); the task and its subtasks are one read ({@link loadTaskWithDerived}).
 */
export const get = (deps: ServiceDeps): Handler<typeof TasksOps.get> => async (input, ctx) => {
  const { task, principal, derived } = await loadTaskWithDerived(deps.store, ctx, input.taskId);
  return taskDetailJson(deps.store, principal, task, callerId(ctx), derived);
};
