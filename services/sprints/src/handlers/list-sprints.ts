import { callerId, type Handler } from '@app/shared/bus';
import type { SprintSummary, SprintsOps } from '@app/shared/contracts';
import { canReadTask, loadBoard, readableTasksFilter, type ServiceDeps, type TaskDoc } from '@app/shared/domain';
import { Collections } from '@app/shared/store';
import { DONE, StoredKeys, toMember } from '../domain/members.js';
import { MEMBER_PROJECTION, membersFilter, pointsOf, snapMember, snapshotsOf, type SnapMember, type SnapshotDoc } from '../domain/snapshots.js';

const TYPE_PATH = `metadata.${StoredKeys.type}`;

/**
 * `sprints.list` — `GET /api/v1/boards/{boardId}/sprints?state=open|closed|all`. The
 * board's sprints are the live sprint tasks the caller can read that were created on the board, are
 * its `activeSprintId`, or were started on it or closed while it pointed at them (their snapshots
 * name the board). Oldest first (`created_at`, then id). Figures of a closed sprint come from its
 * latest close snapshot; of an open one from its members now that the caller can read
 * (`points_committed` from the start snapshot when started). Store round trips do not grow with the number of sprints or members.
 *
 * Errors: 404 `BOARD_NOT_FOUND`, 400 `VALIDATION_FAILED` (`state`), 503 `STORE_UNAVAILABLE`.
 */
export function listSprints({ store }: ServiceDeps): Handler<typeof SprintsOps.list> {
  const tasks = store.collection<TaskDoc>(Collections.tasks);
  const snaps = snapshotsOf(store);

  return async ({ boardId, state = 'all' }, ctx) => {
    const { board, principal } = await loadBoard(store, callerId(ctx), boardId, 'read');
    const named = await snaps.find({ board_ids: boardId }, { projection: { _id: 1, sprint_id: 1 } });
    const ids = new Set(named.map((s) => s.sprint_id));
    if (board.activeSprintId !== undefined) ids.add(board.activeSprintId);
    const candidates = await tasks.find(
      { deleted: false, [TYPE_PATH]: 'sprint', $or: [{ boardId }, { _id: { $in: [...ids] } }] },
      { sort: { created_at: 1, _id: 1 }, projection: { _id: 1, title: 1, status: 1, kickoff: 1, deadline: 1, created_by: 1, groupId: 1, tags: 1 } },
    );
    const sprints = candidates
      .filter((t) => canReadTask(principal, t))
      .filter((t) => state === 'all' || (state === 'closed') === (t.status === DONE));
    if (sprints.length === 0) return [];

    const sprintIds = sprints.map((t) => t._id);
    const recorded = await snaps.find(
      { sprint_id: { $in: sprintIds } },
      { sort: { taken_at: 1, _id: 1 }, projection: { _id: 1, kind: 1, sprint_id: 1, taken_at: 1, by_close: 1, member_count: 1, total_points: 1, committed_points: 1, velocity: 1 } },
    );
    const start = new Map<string, SnapshotDoc>();
    const close = new Map<string, SnapshotDoc>();
    for (const s of recorded) (s.kind === 'start' ? start : close).set(s.sprint_id, s);

    // A closed sprint's figures are frozen in its close snapshot; every other sprint's are read now.
    const liveIds = sprints.filter((t) => !(t.status === DONE && close.has(t._id))).map((t) => t._id);
    const live = new Map<string, SnapMember[]>(liveIds.map((id) => [id, []]));
    if (liveIds.length > 0) {
      // only the members the reader can read count (docs/sprints.md "Who may put a task into a sprint")
      const docs = await tasks.find({ $and: [membersFilter(liveIds), readableTasksFilter(principal)] }, { projection: MEMBER_PROJECTION });
      for (const d of docs) live.get(d.metadata[StoredKeys.sprint] as string)?.push(snapMember(toMember(d)));
    }

    return sprints.map((t): SprintSummary => {
      const s = start.get(t._id);
      const c = close.get(t._id);
      const members = live.get(t._id);
      const out: SprintSummary = {
        id: t._id,
        title: t.title,
        state: t.status === DONE ? 'closed' : 'open',
        status: t.status,
        active: board.activeSprintId === t._id,
        member_count: members ? members.length : (c!.member_count as number),
        points_committed: members ? (s ? (s.total_points as number) : pointsOf(members)) : (c!.committed_points as number),
        points_done: members ? pointsOf(members.filter((m) => m.status === DONE)) : (c!.velocity as number),
      };
      if (t.kickoff !== undefined) out.kickoff = t.kickoff;
      if (t.deadline !== undefined) out.deadline = t.deadline;
      if (s && !s.by_close) out.started_at = s.taken_at;
      if (c && t.status === DONE) out.closed_at = c.taken_at;
      return out;
    });
  };
}
