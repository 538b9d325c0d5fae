import { callerId, type Handler } from '@app/shared/bus';
import type { SprintsOps } from '@app/shared/contracts';
import { loadBoard, newTaskDoc, toTask, type BoardDoc, type ServiceDeps, type TaskDoc } from '@app/shared/domain';
import { AppError } from '@app/shared/errors';
import { Collections } from '@app/shared/store';
import { currentEventsSeq } from '../domain/outbox.js';
import { snapshotsOf, startSnapshot } from '../domain/snapshots.js';

/**
 * `sprints.create` — `POST /api/v1/boards/{boardId}/sprints` (issue 12): creates the sprint task on
 * the board's scope (metadata `app.type = sprint`, `goal` as `app.goal`, the board's `default_tags`;
 * the board recorded; on a shared board the board's group and permission), status `todo`. With `start: true` the start
 * snapshot (no members yet) and the board's `activeSprintId` are written in the same transaction.
 *
 * Errors: 404 `BOARD_NOT_FOUND`, 403 `FORBIDDEN` (board not writable), 400 `VALIDATION_FAILED`
 * (`/title`, `/kickoff`, `/deadline`), 503 `STORE_UNAVAILABLE` (nothing written).
 */
export function createSprint({ store, clock }: ServiceDeps): Handler<typeof SprintsOps.create> {
  const tasks = store.collection<TaskDoc>(Collections.tasks);
  const boards = store.collection<BoardDoc>(Collections.boards);

  return async ({ boardId, title, goal, kickoff, deadline, start }, ctx) => {
    const userId = callerId(ctx);
    const { board } = await loadBoard(store, userId, boardId, 'write');
    const at = clock.now();
    const metadata: Record<string, unknown> = { 'app.type': 'sprint' };
    if (goal !== undefined && goal !== '') metadata['app.goal'] = goal;
    const doc: TaskDoc = {
      ...newTaskDoc({ title, metadata, tags: board.default_tags, ...(kickoff ? { kickoff } : {}), ...(deadline ? { deadline } : {}) }, userId, at),
      boardId: board._id,
    };
    if (board.board_type === 'shared' && board.groupId !== undefined) {
      doc.groupId = board.groupId;
      if (board.groupPermission !== undefined) doc.groupPermission = board.groupPermission;
    }
    if (!start) {
      await tasks.insertOne(doc);
      return toTask(doc);
    }
    const now = at.toISOString();
    await store.withTransaction(async (session) => {
      await tasks.insertOne(doc, { session });
      const eventsSeq = await currentEventsSeq(store, session);
      await snapshotsOf(store).insertOne(startSnapshot({ sprintId: doc._id, members: [], at: now, by: userId, boardIds: [board._id], eventsSeq }), { session });
      const pointed = await boards.updateOne({ _id: board._id }, { $set: { activeSprintId: doc._id, updated_at: now, updated_by: userId } }, { session });
      // The board was deleted since it was read: nothing is kept.
      if (pointed.matchedCount === 0) throw new AppError('BOARD_NOT_FOUND', { details: { boardId } });
    });
    return toTask(doc);
  };
}
