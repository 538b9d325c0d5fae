import type { Handler } from '@app/shared/bus';
import type { Task, TasksOps, TaskUpdateBody } from '@app/shared/contracts';
import { checkAssignee, checkSprintWindow, checkTaskRefs, runWrite, taskPatchUpdate, taskUpdatedEvent, toTask, type ServiceDeps, type WriteUnit } from '@app/shared/domain';
import { invalidField } from '@app/shared/errors';
import { loadTask, writeTask } from '../task-store.js';

/**
 * Updates one task in the unit `w` (the single PATCH and each item of a batch PATCH). Access is
 * checked first (404/403), then `ifMatch` (412), then the body (400), then references; the write
 * is one conditional update pinned at the version read in the same transaction, which also
 * appends `task.updated` (only when an API field changed).
 */
export async function updateTaskIn(deps: ServiceDeps, w: WriteUnit, ifMatch: string | undefined, taskId: string, patch: TaskUpdateBody): Promise<Task> {
  const { task, principal } = await loadTask(deps.store, { userId: w.userId, ifMatch }, taskId, 'write', w.session);
  const change = taskPatchUpdate(patch, w.userId, w.now) as { $set: Record<string, unknown>; $unset?: Record<string, ''> };
  // the sprint window as it will be after the change
  const dated = (f: 'kickoff' | 'deadline') => (change.$unset?.[f] !== undefined ? undefined : (change.$set[f] as string | undefined) ?? task[f]);
  checkSprintWindow({ metadata: task.metadata, kickoff: dated('kickoff'), deadline: dated('deadline') });
  if (patch.assignee) await checkAssignee(deps.store, patch.assignee, '/assignee', w.session);
  if (patch.derivedFromId === taskId) throw invalidField('/derivedFromId', 'a task cannot be derived from itself', 'self');
  if (patch.derivedFromId) await checkTaskRefs(deps.store, await principal(), [{ field: '/derivedFromId', id: patch.derivedFromId }], w.session);
  const after = await writeTask(deps.store, w, task, change);
  const event = taskUpdatedEvent(task, after);
  if (event) w.emit(event);
  return toTask(after);
}

/** `tasks.update`: partial update (docs/tasks.md "Rules and choices"), see {@link updateTaskIn}. */
export const update = (deps: ServiceDeps): Handler<typeof TasksOps.update> => async (input, ctx) => {
  const { taskId, ...patch } = input;
  return runWrite(deps, ctx, (w) => updateTaskIn(deps, w, ctx.ifMatch, taskId, patch));
};
