import { type Handler } from '@app/shared/bus';
import type { TaskCreateBody, TasksOps } from '@app/shared/contracts';
import { checkNewTaskRefs, loadPrincipal, newTaskDoc, runWrite, taskCreatedEvent, toTask, type ServiceDeps, type Task, type WriteUnit } from '@app/shared/domain';
import { tasksOf } from '../task-access.js';

/**
 * Creates one task in the unit `w` (the single create and each item of a batch create): the
 * task rules of SPEC "Task", version 1, `task.created` emitted. Throws 400s naming the field.
 */
export async function createTaskIn(deps: ServiceDeps, w: WriteUnit, input: TaskCreateBody): Promise<Task> {
  const doc = newTaskDoc(input, w.userId, w.now);
  await checkNewTaskRefs(deps.store, await loadPrincipal(deps.store, w.userId), input);
  await tasksOf(deps.store).insertOne(doc, { session: w.session });
  w.emit(taskCreatedEvent(doc));
  return toTask(doc);
}

/**
 * `tasks.create`: a task not on a board, private to its creator (SPEC "Task"), version 1; emits
 * `task.created` in the same transaction (issue 10). Honours an Idempotency-Key (issue 11).
 */
export const create = (deps: ServiceDeps): Handler<typeof TasksOps.create> => async (input, ctx) =>
  runWrite(deps, ctx, (w) => createTaskIn(deps, w, input));
