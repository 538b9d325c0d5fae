import { type Handler } from '@app/shared/bus';
import type { TasksOps } from '@app/shared/contracts';
import { checkNewTaskRefs, loadPrincipal, newTaskDoc, runWrite, taskCreatedEvent, toTask, type ServiceDeps } from '@app/shared/domain';
import { tasksOf } from '../task-access.js';

/**
 * `tasks.create`: a task not on a board, private to its creator (SPEC "Task"), version 1; emits
 * `task.created` in the same transaction (issue 10). Honours an Idempotency-Key (issue 11).
 */
export const create = (deps: ServiceDeps): Handler<typeof TasksOps.create> => async (input, ctx) =>
  runWrite(deps, ctx, async (w) => {
    const doc = newTaskDoc(input, w.userId, w.now);
    await checkNewTaskRefs(deps.store, await loadPrincipal(deps.store, w.userId), input);
    await tasksOf(deps.store).insertOne(doc, { session: w.session });
    w.emit(taskCreatedEvent(doc));
    return toTask(doc);
  });
