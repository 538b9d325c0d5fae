import type { Handler } from '@app/shared/bus';
import type { SprintsOps } from '@app/shared/contracts';
import {
  boardEvent, canReadBoard, canWriteBoard, nextVersion, runWrite, toBoard, versionGuard, type BoardDoc, type ServiceDeps,
} from '@app/shared/domain';
import { AppError } from '@app/shared/errors';
import { Collections } from '@app/shared/store';
import { DONE } from '../domain/members.js';
import { currentEventsSeq } from '../domain/outbox.js';
import { readMembers, snapshotsOf, startResultOf, startSnapshot, startSnapshotId, type StartSnapshotDoc } from '../domain/snapshots.js';
import { loadSprint } from '../domain/load-sprint.js';

/**
 * `sprints.start` — `POST /api/v1/tasks/{sprintId}/start-sprint`, in ONE transaction:
 * writes the start snapshot (members with status and `app.points`, total points, time, the outbox
 * counter) and points the named boards' `activeSprintId` at the sprint (`board_ids`, default the
 * board the sprint was created on). Boards the caller can read but not write are skipped and listed,
 * like close-sprint's. A started sprint replays its recorded start (200, `replayed: true`, nothing
 * written, whatever `board_ids` says). The sprint's status is left as it is. Each board whose pointer
 * changes gets its version bumped and a `board.updated` event, in one bulk write.
 *
 * Errors (in this order): 404 `TASK_NOT_FOUND`, 403 `FORBIDDEN` (sprint not writable), 400
 * `NOT_A_SPRINT`, 400 `SPRINT_ALREADY_CLOSED` (status `done`), 404 `BOARD_NOT_FOUND` (a named board
 * is unknown or unreadable; `details.field` = `/board_ids/<i>`), 503 `STORE_UNAVAILABLE`.
 */
export function startSprint(deps: ServiceDeps): Handler<typeof SprintsOps.start> {
  const { store } = deps;
  const boards = store.collection<BoardDoc>(Collections.boards);

  return async ({ sprintId, board_ids }, ctx) =>
    runWrite(deps, ctx, async (w) => {
      const { session, userId } = w;
      const { sprint, principal } = await loadSprint(store, userId, sprintId, 'write', session);
      if (sprint.status === DONE) {
        throw new AppError('SPRINT_ALREADY_CLOSED', {
          message: `Sprint ${sprintId} is closed (status done); reopen it (set another status) to start it`,
          details: { sprintId },
        });
      }
      const existing = (await snapshotsOf(store).findOne({ _id: startSnapshotId(sprintId) }, { session })) as StartSnapshotDoc | null;
      if (existing) return startResultOf(existing, true);

      const wanted = [...new Set(board_ids ?? (sprint.boardId === undefined ? [] : [sprint.boardId]))];
      const found = wanted.length === 0 ? [] : await boards.find({ _id: { $in: wanted } }, { session, sort: { _id: 1 } });
      const byId = new Map(found.map((b) => [b._id, b]));
      wanted.forEach((id, i) => {
        const b = byId.get(id);
        if (!b || !canReadBoard(principal, b)) {
          throw new AppError('BOARD_NOT_FOUND', { message: `board_ids/${i}: board ${id} not found`, details: { boardId: id, field: `/board_ids/${i}` } });
        }
      });
      const writable = found.filter((b) => canWriteBoard(principal, b));
      const pointed = writable.map((b) => b._id);
      const skipped = found.filter((b) => !canWriteBoard(principal, b)).map((b) => b._id);

      const now = w.now.toISOString();
      // the start records the members its caller can read (docs/sprints.md)
      const members = await readMembers(store, sprintId, session, principal);
      const eventsSeq = await currentEventsSeq(store, session);
      const snapshot = startSnapshot({ sprintId, members, at: now, by: userId, boardIds: pointed, skippedBoardIds: skipped, eventsSeq });
      await snapshotsOf(store).insertOne(snapshot, { session });
      // Boards already pointing at the sprint do not change.
      const moving = writable.filter((b) => b.activeSprintId !== sprintId);
      if (moving.length > 0) {
        const change = (b: BoardDoc) => ({ activeSprintId: sprintId, updated_at: now, updated_by: userId, ...nextVersion(b) });
        const res = await boards.bulkWrite(
          moving.map((b) => ({ updateOne: { filter: { _id: b._id, ...versionGuard(b) }, update: { $set: change(b) } } })),
          { session },
        );
        // A board changed since this transaction read it (a MongoDB write conflict normally retries first).
        if (res.matchedCount !== moving.length) throw new AppError('CONFLICT', { details: { sprintId } });
        for (const b of moving) w.emit(boardEvent('board.updated', toBoard({ ...b, ...change(b) }, userId)));
      }
      const result = startResultOf(snapshot, false);
      if (pointed.length === 0) w.emit({ type: 'sprint.started', task_id: sprintId, data: { start: result } });
      for (const board_id of pointed) w.emit({ type: 'sprint.started', task_id: sprintId, board_id, data: { start: result } });
      return result;
    });
}
