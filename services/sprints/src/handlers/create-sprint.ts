import type { Handler } from '@app/shared/bus';
import type { SprintsOps } from '@app/shared/contracts';
import {
  boardEvent, checkSprintWindow, loadBoard, newTaskDoc, nextVersion, runWrite, taskCreatedEvent, toBoard, toTask, versionGuard,
  type BoardDoc, type ServiceDeps, type TaskDoc,
} from '@app/shared/domain';
import { AppError } from '@app/shared/errors';
import { Collections } from '@app/shared/store';
import { currentEventsSeq } from '../domain/outbox.js';
import { snapshotsOf, startResultOf, startSnapshot } from '../domain/snapshots.js';

/**
 * `sprints.create` — `POST /api/v1/boards/{boardId}/sprints`: creates the sprint task on
 * the board's scope (metadata `app.type = sprint`, `goal` as `app.goal`, the board's `default_tags`;
 * the board recorded; on a shared board the board's group and permission), status `todo`. With
 * `start: true` the start snapshot (no members yet) and the board's `activeSprintId` are written in
 * the same transaction. Emits `task.created`, and `board.updated` when started.
 *
 * Errors: 404 `BOARD_NOT_FOUND`, 403 `FORBIDDEN` (board not writable), 400 `VALIDATION_FAILED`
 * (`/title`, `/kickoff`, `/deadline`, `/goal`; `/kickoff` also when it is after the deadline),
 * 503 `STORE_UNAVAILABLE` (nothing written).
 */
export function createSprint(deps: ServiceDeps): Handler<typeof SprintsOps.create> {
  const { store } = deps;
  const tasks = store.collection<TaskDoc>(Collections.tasks);
  const boards = store.collection<BoardDoc>(Collections.boards);

  return async ({ boardId, title, goal, kickoff, deadline, start }, ctx) =>
    runWrite(deps, ctx, async (w) => {
      const { session, userId } = w;
      const { board } = await loadBoard(store, userId, boardId, 'write', session);
      const metadata: Record<string, unknown> = { 'app.type': 'sprint' };
      if (goal !== undefined && goal !== '') metadata['app.goal'] = goal;
      const doc: TaskDoc = {
        ...newTaskDoc({ title, metadata, tags: board.default_tags, ...(kickoff ? { kickoff } : {}), ...(deadline ? { deadline } : {}) }, userId, w.now),
        boardId: board._id,
      };
      checkSprintWindow(doc);
      if (board.board_type === 'shared' && board.groupId !== undefined) {
        doc.groupId = board.groupId;
        if (board.groupPermission !== undefined) doc.groupPermission = board.groupPermission;
      }
      await tasks.insertOne(doc, { session });
      w.emit(taskCreatedEvent(doc));
      if (start) {
        const now = w.now.toISOString();
        const eventsSeq = await currentEventsSeq(store, session);
        const snapshot = startSnapshot({ sprintId: doc._id, members: [], at: now, by: userId, boardIds: [board._id], eventsSeq });
        await snapshotsOf(store).insertOne(snapshot, { session });
        const change = { activeSprintId: doc._id, updated_at: now, updated_by: userId, ...nextVersion(board) };
        const pointed = await boards.updateOne({ _id: board._id, ...versionGuard(board) }, { $set: change }, { session });
        // The board changed since this transaction read it (a MongoDB write conflict normally retries first).
        if (pointed.matchedCount === 0) throw new AppError('CONFLICT', { details: { boardId } });
        w.emit(boardEvent('board.updated', toBoard({ ...board, ...change }, userId)));
        w.emit({ type: 'sprint.started', task_id: doc._id, board_id: board._id, data: { start: startResultOf(snapshot, false) } });
      }
      return toTask(doc);
    });
}
