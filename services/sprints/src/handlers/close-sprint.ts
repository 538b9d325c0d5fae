import { callerId, type Handler } from '@app/shared/bus';
import { SprintsOps, type CloseSprintResult } from '@app/shared/contracts';
import {
  canReadBoard, canReadTask, canWriteBoard, canWriteTask, loadPrincipal, newNoteDoc, runWrite, taskUpdatedEvent, versionOf,
  type BoardDoc, type NoteDoc, type Principal, type ServiceDeps, type TaskDoc,
} from '@app/shared/domain';
import { AppError } from '@app/shared/errors';
import { Collections, type Collection, type Session, type Update } from '@app/shared/store';
import { DONE, StoredKeys, isSprint, toMember, velocityOf } from '../domain/members.js';
import { renderRetroNote } from '../domain/retro-note.js';
import { currentEventsSeq } from '../domain/outbox.js';
import { readMembers, recordCloseSnapshot, snapshotsOf, startResultOf, startSnapshot, startSnapshotId, type StartSnapshotDoc } from '../domain/snapshots.js';
import { resolveTarget, targetValue, type Target } from '../domain/target.js';

/** The close outcome recorded on the sprint task (`TaskDoc.sprintClose`), replayed on a repeat close. */
type SprintCloseRecord = CloseSprintResult & { rollover?: string; closed_at: string; closed_by: string };

const SPRINT_PATH = `metadata.${StoredKeys.sprint}`;
const TYPE_PATH = `metadata.${StoredKeys.type}`;
const POINTS_PATH = `metadata.${StoredKeys.points}`;
const CARRIED_PATH = `metadata.${StoredKeys.carried}`;

/**
 * `sprints.close` (docs/sprints.md "Close-sprint", docs/architecture.md §8). Everything, reads included, runs in ONE
 * `store.withTransaction`, so any failure leaves nothing written and a retry starts afresh. Store
 * round trips are constant: the members are read with one find and rolled over with one
 * updateMany, and the boards are repointed with one updateMany. The same transaction bumps the
 * versions of every task and board it changes and appends `sprint.closed` `{result}` (one per
 * board it rotated, with that `board_id`; one without a board when it rotated none) plus one
 * `task.updated` per rolled-over member (through {@link runWrite}; docs/events.md "Types").
 *
 * Only members the closer may write are rolled over (docs/sprints.md "Who may put a task into a
 * sprint"): unfinished members it can read but not write are left unchanged and listed in
 * `skippedTaskIds`; members it cannot read are neither counted, named nor changed.
 *
 * Errors: 404 `TASK_NOT_FOUND` (missing, deleted or unreadable sprint), 403 `FORBIDDEN` (readable,
 * not writable), 400 `NOT_A_SPRINT`, `SPRINT_ALREADY_CLOSED`, `SPRINT_ROLLOVER_INVALID`,
 * `SPRINT_ROLLOVER_REQUIRED` (`details.unfinished: [{id, title, status}]`), 503 from the store.
 */
export function closeSprint(deps: ServiceDeps): Handler<typeof SprintsOps.close> {
  const { store } = deps;
  const tasks = store.collection<TaskDoc>(Collections.tasks);
  const boards = store.collection<BoardDoc>(Collections.boards);
  const notes = store.collection<NoteDoc>(Collections.notes);

  return async ({ sprintId, rollover }, ctx) => {
    const userId = callerId(ctx);

    return runWrite(deps, ctx, async (w) => {
      const session = w.session;
      const principal = await loadPrincipal(store, userId, session);
      // The sprint and the rollover candidate in one read.
      const found = await tasks.find({ _id: { $in: [sprintId, rollover ?? sprintId] }, deleted: false }, { session });
      const sprint = found.find((t) => t._id === sprintId);
      if (!sprint || !canReadTask(principal, sprint)) {
        throw new AppError('TASK_NOT_FOUND', { message: `Task ${sprintId} not found`, details: { id: sprintId } });
      }
      if (!canWriteTask(principal, sprint)) {
        throw new AppError('FORBIDDEN', { message: `You may read sprint ${sprintId} but not close it`, details: { id: sprintId } });
      }
      if (!isSprint(sprint)) {
        throw new AppError('NOT_A_SPRINT', { message: `Task ${sprintId} is not a sprint (its app.type is not "sprint")`, details: { id: sprintId } });
      }
      if (sprint.status === DONE) return replay(sprint, rollover);

      const target = resolveTarget(principal, sprintId, rollover, found.find((t) => t._id === rollover));
      // Sprint tasks are never members: a next sprint created on a board during this one carries
      // its app.sprint, and must neither block the close nor be rolled into itself.
      // Members the closer cannot read are not its to count, name or change: they are left out
      // entirely. Unfinished members it can read but not write stay where they are (skipped).
      const docs = (
        await tasks.find(
          { deleted: false, [SPRINT_PATH]: sprintId, [TYPE_PATH]: { $ne: 'sprint' } },
          { session, sort: { created_at: 1, _id: 1 }, projection: { _id: 1, title: 1, status: 1, [POINTS_PATH]: 1, [CARRIED_PATH]: 1, created_by: 1, groupId: 1, groupPermission: 1, tags: 1 } },
        )
      ).filter((t) => canReadTask(principal, t));
      const members = docs.map(toMember);
      const writable = new Set(docs.filter((t) => canWriteTask(principal, t)).map((t) => t._id));
      const finished = members.filter((m) => m.status === DONE);
      const unfinished = members.filter((m) => m.status !== DONE && writable.has(m.id));
      const skippedTasks = members.filter((m) => m.status !== DONE && !writable.has(m.id));
      if (unfinished.length > 0 && target.kind === 'none') {
        throw new AppError('SPRINT_ROLLOVER_REQUIRED', {
          message: `Sprint ${sprintId} has ${unfinished.length} unfinished member(s); send rollover "backlog" or the id of an open sprint`,
          details: { unfinished: unfinished.map(({ id, title, status }) => ({ id, title, status })) },
        });
      }
      const { rotated, skipped } = await boardsToRotate(principal, sprintId, session);

      const at = w.now;
      const now = at.toISOString();
      const stamp = { updated_at: now, updated_by: userId };
      const velocity = velocityOf(finished);
      const result: CloseSprintResult = {
        sprintId,
        target: targetValue(target),
        completed: finished.length,
        rolledOver: unfinished.length,
        rotatedBoardIds: rotated.map((b) => b._id),
        skippedBoardIds: skipped,
        skippedTaskIds: skippedTasks.map((m) => m.id),
        velocity,
      };
      const record: SprintCloseRecord = { ...result, ...(rollover === undefined ? {} : { rollover }), closed_at: now, closed_by: userId };
      await recordCloseSnapshot(store, session, { sprint, members, result, by: userId, at: now, ...(target.kind === 'sprint' ? { targetTitle: target.title } : {}) });

      if (unfinished.length > 0) {
        const ids = unfinished.map((m) => m.id);
        const before = await tasks.find({ _id: { $in: ids } }, { session, sort: { created_at: 1, _id: 1 } });
        await withVersions(tasks, before, session);
        await tasks.updateMany({ _id: { $in: ids } }, { ...pointAt(target, SPRINT_PATH, stamp), $inc: { version: 1 } }, { session });
        for (const t of before) {
          const metadata = { ...t.metadata };
          if (target.kind === 'sprint') metadata[StoredKeys.sprint] = target.id;
          else delete metadata[StoredKeys.sprint];
          const event = taskUpdatedEvent(t, { ...t, metadata, ...stamp, version: versionOf(t) + 1 });
          if (event) w.emit(event);
        }
      }
      // A board's running sprint is always a started one: a planned target the boards are about to
      // point at is started here, with its members after the rollover (docs/sprints.md "Close-sprint").
      const started = target.kind === 'sprint' && rotated.length > 0
        ? await startTarget(principal, target.id, result.rotatedBoardIds, userId, now, session)
        : undefined;
      if (started) result.startedSprintId = record.startedSprintId = started.sprint_id;
      const content = renderRetroNote({
        sprint: { id: sprintId, title: sprint.title, kickoff: sprint.kickoff, deadline: sprint.deadline },
        finished, unfinished, skipped: skippedTasks, target, velocity, closedAt: now, closedBy: userId,
      });
      await notes.insertOne(newNoteDoc(sprintId, content, userId, at), { session });
      await tasks.updateOne({ _id: sprintId }, { $set: { status: DONE, sprintClose: record, ...stamp, version: versionOf(sprint) + 1 } }, { session });
      if (rotated.length > 0) {
        await withVersions(boards, rotated, session);
        await boards.updateMany({ _id: { $in: rotated.map((b) => b._id) } }, { ...pointAt(target, 'activeSprintId', stamp), $inc: { version: 1 } }, { session });
      }
      // one per board it rotated, with that board_id, so board-filtered feeds, streams and webhooks see it
      if (result.rotatedBoardIds.length === 0) w.emit({ type: 'sprint.closed', task_id: sprintId, data: { result } });
      for (const board_id of result.rotatedBoardIds) w.emit({ type: 'sprint.closed', task_id: sprintId, board_id, data: { result } });
      if (started) for (const board_id of started.board_ids) w.emit({ type: 'sprint.started', task_id: started.sprint_id, board_id, data: { start: startResultOf(started, false) } });
      return result;
    });
  };

  /**
   * Starts the rollover target `targetId` when it has no start snapshot yet: writes its start
   * snapshot (the members `p` can read now, the rolled-over ones included, and the boards the close
   * pointed at it) in the close's transaction. `undefined` when it was already started (left as it
   * is). Two round trips (snapshot read, members read) plus the counter read and the insert.
   */
  async function startTarget(p: Principal, targetId: string, boardIds: readonly string[], by: string, at: string, session: Session) {
    const existing = await snapshotsOf(store).findOne({ _id: startSnapshotId(targetId) }, { session, projection: { _id: 1 } });
    if (existing) return undefined;
    const members = await readMembers(store, targetId, session, p);
    const eventsSeq = await currentEventsSeq(store, session);
    const snapshot: StartSnapshotDoc = startSnapshot({ sprintId: targetId, members, at, by, boardIds, eventsSeq });
    await snapshotsOf(store).insertOne(snapshot, { session });
    return snapshot;
  }

  /** Boards whose `activeSprintId` is the sprint: writable ones rotate, readable-only ones are skipped. */
  async function boardsToRotate(p: Principal, sprintId: string, session: Session) {
    const pointing = await boards.find(
      { activeSprintId: sprintId },
      { session, sort: { _id: 1 }, projection: { _id: 1, owner_id: 1, groupId: 1, groupPermission: 1, version: 1 } },
    );
    return {
      rotated: pointing.filter((b) => canWriteBoard(p, b)),
      skipped: pointing.filter((b) => canReadBoard(p, b) && !canWriteBoard(p, b)).map((b) => b._id),
    };
  }
}

/**
 * Gives documents stored before versions existed their implicit version 1, so the
 * `$inc` that follows makes it 2; nothing when every one has a version.
 */
async function withVersions<T extends TaskDoc | BoardDoc>(coll: Collection<T>, docs: ReadonlyArray<{ _id: string; version?: unknown }>, session: Session) {
  const legacy = docs.filter((d) => typeof d.version !== 'number').map((d) => d._id);
  if (legacy.length > 0) await coll.updateMany({ _id: { $in: legacy }, version: { $exists: false } }, { $set: { version: 1 } }, { session });
}

/** The update that points `path` at the target sprint, or removes it (backlog, or no target). */
function pointAt(target: Target, path: string, stamp: Record<string, string>): Update {
  return target.kind === 'sprint' ? { $set: { [path]: target.id, ...stamp } } : { $unset: { [path]: '' }, $set: stamp };
}

/**
 * A repeat close of a `done` sprint (docs/architecture.md §8): the recorded outcome when the rollover matches,
 * else 400 `SPRINT_ALREADY_CLOSED` (also for a sprint set to `done` without close-sprint).
 */
function replay(sprint: TaskDoc, rollover: string | undefined): CloseSprintResult {
  const rec = sprint.sprintClose as SprintCloseRecord | undefined;
  if (!rec) {
    throw new AppError('SPRINT_ALREADY_CLOSED', {
      message: `Sprint ${sprint._id} is done but was never closed with close-sprint; reopen it (set another status) to close it`,
      details: { sprintId: sprint._id },
    });
  }
  if (rec.rollover !== rollover) {
    throw new AppError('SPRINT_ALREADY_CLOSED', {
      message: `Sprint ${sprint._id} was already closed with rollover ${rec.rollover === undefined ? '(none)' : `"${rec.rollover}"`}; repeat that rollover to read the outcome`,
      details: { sprintId: sprint._id, closedWith: rec.target },
    });
  }
  const { sprintId, target, completed, rolledOver, rotatedBoardIds, skippedBoardIds, skippedTaskIds = [], velocity, startedSprintId } = rec;
  return { sprintId, target, completed, rolledOver, rotatedBoardIds, skippedBoardIds, skippedTaskIds, velocity, ...(startedSprintId ? { startedSprintId } : {}) };
}
