import type { Handler } from '@app/shared/bus';
import type { TasksOps } from '@app/shared/contracts';
import { checkAssignee, checkTaskRefs, taskPatchUpdate, toTask, type ServiceDeps } from '@app/shared/domain';
import { invalidField } from '@app/shared/errors';
import { loadTask, writeTask } from '../task-access.js';

/**
 * `tasks.update`: partial update (SPEC "Task detail family"). Access is checked first (404/403),
 * then the body (400), then references; the write is one conditional update.
 */
export const update = (deps: ServiceDeps): Handler<typeof TasksOps.update> => async (input, ctx) => {
  const { taskId, ...patch } = input;
  const { principal, userId } = await loadTask(deps.store, ctx, taskId, 'write');
  const change = taskPatchUpdate(patch, userId, deps.clock.now());
  if (patch.assignee) await checkAssignee(deps.store, patch.assignee);
  if (patch.derivedFromId === taskId) throw invalidField('/derivedFromId', 'a task cannot be derived from itself', 'self');
  if (patch.derivedFromId) await checkTaskRefs(deps.store, await principal(), [{ field: '/derivedFromId', id: patch.derivedFromId }]);
  return toTask(await writeTask(deps.store, taskId, change));
};
