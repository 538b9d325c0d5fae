import { currentGrant, type Handler } from '@app/shared/bus';
import { AppError } from '@app/shared/errors';
import type { Task, TaskCreateBody, TasksOps } from '@app/shared/contracts';
import { canReadTask, checkNewTaskFields, checkNewTaskRefs, checkSprintWindow, loadPrincipal, newTaskDoc, runWrite, SPRINT_KEY, taskCreatedEvent, toTask, type ServiceDeps, type WriteUnit } from '@app/shared/domain';
import { tasksOf } from '../task-store.js';

/**
 * Creates one task in the unit `w` (the single create and each item of a batch create): the
 * task rules of docs/tasks.md "Rules and choices", version 1, `task.created` emitted. Throws 400s naming the field;
 * 404/403 when `app.sprint` names a sprint the caller may not write (`checkNewTaskRefs`); 403
 * `FORBIDDEN` for an access token narrowed to boards shared with a group (the task would be out of
 * its reach); 400 `CUSTOM_FIELD_VALUE_INVALID` for a value its custom fields cannot hold (the
 * creator's definitions: the task is private), a required one missing taking its default.
 */
export async function createTaskIn(deps: ServiceDeps, w: WriteUnit, input: TaskCreateBody): Promise<Task> {
  const doc = newTaskDoc(input, w.userId, w.now);
  checkSprintWindow(doc);
  // the caller's groups matter only for task references and the sprint (a batch of plain creates
  // reads none), and for an access token narrowed to boards
  const refs = input.derived_from_id !== undefined || (input.linked_to_ids?.length ?? 0) > 0 || typeof (input.metadata as Record<string, unknown> | undefined)?.[SPRINT_KEY] === 'string';
  const narrowed = currentGrant()?.boardIds !== undefined;
  const principal = refs || narrowed ? await loadPrincipal(deps.store, w.userId, w.session) : { userId: w.userId, groupIds: [] };
  if (!canReadTask(principal, doc)) {
    // a token narrowed to boards reaches their scopes only (a shared board's group, a board's
    // default tags): the task it would create would be out of its own reach (docs/auth.md "Access tokens")
    throw new AppError('FORBIDDEN', {
      message: 'This access token reaches only the cards of its boards (their group, their default tags); create the card on one of its boards (POST /api/v1/boards/{boardId}/tasks)',
      details: { board_ids: principal.boardIds ?? [] },
    });
  }
  await checkNewTaskRefs(deps.store, principal, input, w.session);
  await checkNewTaskFields(deps.store, doc, w.session);
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
