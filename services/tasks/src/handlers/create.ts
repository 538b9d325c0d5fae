import { type Handler } from '@app/shared/bus';
import type { Task, TaskCreateBody, TasksOps } from '@app/shared/contracts';
import { checkNewTaskRefs, checkSprintWindow, loadPrincipal, newTaskDoc, runWrite, SPRINT_KEY, taskCreatedEvent, toTask, type ServiceDeps, type WriteUnit } from '@app/shared/domain';
import { tasksOf } from '../task-store.js';

/**
 * Creates one task in the unit `w` (the single create and each item of a batch create): the
 * task rules of docs/tasks.md "Rules and choices", version 1, `task.created` emitted. Throws 400s naming the field;
 * 404/403 when `app.sprint` names a sprint the caller may not write (`checkNewTaskRefs`).
 */
export async function createTaskIn(deps: ServiceDeps, w: WriteUnit, input: TaskCreateBody): Promise<Task> {
  const doc = newTaskDoc(input, w.userId, w.now);
  checkSprintWindow(doc);
  // the caller's groups matter only for task references and the sprint (a batch of plain creates reads none)
  const refs = input.derived_from_id !== undefined || (input.linked_to_ids?.length ?? 0) > 0 || typeof (input.metadata as Record<string, unknown> | undefined)?.[SPRINT_KEY] === 'string';
  await checkNewTaskRefs(deps.store, refs ? await loadPrincipal(deps.store, w.userId, w.session) : { userId: w.userId, groupIds: [] }, input, w.session);
  await tasksOf(deps.store).insertOne(doc, { session: w.session });
  w.emit(taskCreatedEvent(doc));
  return toTask(doc);
}

/**
 * `tasks.create`: a task not on a board, private to its creator (docs/tasks.md "Rules and choices"), version 1; emits
 * `task.created` in the same transaction. Honours an Idempotency-Key.
 */
export const create = (deps: ServiceDeps): Handler<typeof TasksOps.create> => async (input, ctx) =>
  runWrite(deps, ctx, (w) => createTaskIn(deps, w, input));
