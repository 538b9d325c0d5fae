import { callerId, type Handler } from '@app/shared/bus';
import { VELOCITY_LAST, type SprintsOps, type VelocityResult } from '@app/shared/contracts';
import { loadBoard, type ServiceDeps, type TaskDoc } from '@app/shared/domain';
import { Collections } from '@app/shared/store';
import { DONE } from '../domain/members.js';
import { round6, snapshotsOf, type CloseSnapshotDoc } from '../domain/snapshots.js';

/** Median of `xs` (0 when empty): the middle value, or the mean of the two middle values, 6 decimals. */
export function median(xs: readonly number[]): number {
  if (xs.length === 0) return 0;
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return round6(s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2);
}

/**
 * `sprints.velocity` — `GET /api/v1/boards/{boardId}/velocity?last=N` (issue 12; `last` 1..50,
 * default 6, checked by the contract: out of range → 400 `VALIDATION_FAILED` naming `last`). The
 * board's closed sprints are the close snapshots that name the board (its own sprints, the sprints
 * started on it, and those it pointed at when they closed) whose sprint is still live and `done`;
 * each sprint counts once, with its latest close. Returns the `last` most recently closed, oldest
 * first, with the mean and median of their velocities. Read from the frozen close snapshots only:
 * three store round trips whatever the number of sprints or members.
 *
 * Errors: 404 `BOARD_NOT_FOUND`, 400 `VALIDATION_FAILED`, 503 `STORE_UNAVAILABLE`.
 */
export function boardVelocity({ store }: ServiceDeps): Handler<typeof SprintsOps.velocity> {
  const tasks = store.collection<TaskDoc>(Collections.tasks);

  return async ({ boardId, last = VELOCITY_LAST.default }, ctx) => {
    await loadBoard(store, callerId(ctx), boardId, 'read');
    const closes = (await snapshotsOf(store).find(
      { board_ids: boardId, kind: 'close' },
      { sort: { taken_at: -1, _id: -1 }, projection: { _id: 1, sprint_id: 1, sprint_title: 1, taken_at: 1, committed_points: 1, completed_points: 1, velocity: 1 } },
    )) as CloseSnapshotDoc[];
    const latest = new Map<string, CloseSnapshotDoc>();
    for (const c of closes) if (!latest.has(c.sprint_id)) latest.set(c.sprint_id, c);
    const closed = new Set(
      latest.size === 0
        ? []
        : (await tasks.find({ _id: { $in: [...latest.keys()] }, deleted: false, status: DONE }, { projection: { _id: 1 } })).map((t) => t._id),
    );
    const picked = [...latest.values()].filter((c) => closed.has(c.sprint_id)).slice(0, last).reverse();
    const velocities = picked.map((c) => c.velocity);
    const result: VelocityResult = {
      board_id: boardId,
      last,
      sprints: picked.map((c) => ({
        sprint_id: c.sprint_id,
        title: c.sprint_title,
        closed_at: c.taken_at,
        committed_points: c.committed_points,
        completed_points: c.completed_points,
        velocity: c.velocity,
      })),
      mean: velocities.length === 0 ? 0 : round6(velocities.reduce((a, b) => a + b, 0) / velocities.length),
      median: median(velocities),
    };
    return result;
  };
}
