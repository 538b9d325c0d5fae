import { callerId, type Handler } from '@app/shared/bus';
import type { BoardsOps } from '@app/shared/contracts';
import {
  boardScope, cardCreateBody, checkNewTaskFields, typedColumns, checkNewTaskRefs, checkSprintWindow, columnOf, loadBoard, newTaskDoc, runWrite, taskCreatedEvent, toTask, type ServiceDeps, type TaskDoc,
} from '@app/shared/domain';
import { Collections } from '@app/shared/store';
import { checkWip, guardEntry } from '../wip.js';

/**
 * `boards.createTask` (docs/boards.md "Card create on a board"; docs/architecture.md §5, §7): board write access;
 * the task rules are the tasks service's (`newTaskDoc`, `checkNewTaskRefs`). default_tags are
 * merged into tags; with `column_id` (Draft) the column's enter actions give initial values and
 * the active sprint is stamped (see `cardCreateBody`); unknown column → 404 `COLUMN_NOT_FOUND`.
 * The task records the board, and on a shared board takes the board's group and permission.
 * `app.sprint` (sent, or stamped from the board's active sprint) needs write access to that sprint
 * (404/403, `checkNewTaskRefs`). With `column_id`, a column whose `wip_policy` is `block` and that is
 * at its `wip_limit` refuses the card: 409 `WIP_LIMIT_REACHED`. Emits `task.created` in the insert's transaction; honours an Idempotency-Key.
 */
export function createBoardTask(deps: ServiceDeps): Handler<typeof BoardsOps.createTask> {
  const { store } = deps;
  return async ({ boardId, column_id, ...fields }, ctx) => runWrite(deps, ctx, async (w) => {
    const { board, principal } = await loadBoard(store, callerId(ctx), boardId, 'write', w.session);
    // the column's actions set custom fields in their stored form (a select's label → its id)
    const column = column_id === undefined ? undefined : (await typedColumns(store, boardScope(board), [columnOf(board, column_id)], w.session))[0];
    const body = cardCreateBody(fields, column, board.default_tags, board.activeSprintId, principal.userId);
    const doc: TaskDoc = { ...newTaskDoc(body, principal.userId, w.now), boardId: board._id };
    checkSprintWindow(doc);
    if (board.board_type === 'shared' && board.groupId !== undefined) {
      doc.groupId = board.groupId;
      if (board.groupPermission !== undefined) doc.groupPermission = board.groupPermission;
    }
    await checkNewTaskRefs(store, principal, body, w.session);
    // the values it carries (sent, or set by the column's enter actions) fit the board scope's custom fields
    await checkNewTaskFields(store, doc, w.session);
    // a card created into a column counts against its WIP limit (docs/boards.md "WIP limits")
    if (column) {
      await checkWip(store, principal, board, column, w.now, w.session);
      // a concurrent entry into a blocking column conflicts with this one (docs/boards.md "WIP limits")
      await guardEntry(store, board, column, w.now, w.session);
    }
    await store.collection<TaskDoc>(Collections.tasks).insertOne(doc, { session: w.session });
    w.emit(taskCreatedEvent(doc));
    return toTask(doc);
  });
}
