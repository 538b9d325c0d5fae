import { callerId, type Handler } from '@app/shared/bus';
import type { TasksOps } from '@app/shared/contracts';
import { checkNewTaskRefs, loadPrincipal, newTaskDoc, toTask, type ServiceDeps } from '@app/shared/domain';
import { tasksOf } from '../task-access.js';

/** `tasks.create`: a task not on a board, private to its creator (SPEC "Task"). */
export const create = (deps: ServiceDeps): Handler<typeof TasksOps.create> => async (input, ctx) => {
  const userId = callerId(ctx);
  const doc = newTaskDoc(input, userId, deps.clock.now());
  await checkNewTaskRefs(deps.store, await loadPrincipal(deps.store, userId), input);
  await tasksOf(deps.store).insertOne(doc);
  return toTask(doc);
};
