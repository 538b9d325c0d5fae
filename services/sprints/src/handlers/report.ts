import { callerId, type Handler } from '@app/shared/bus';
import type { SprintReport, SprintsOps } from '@app/shared/contracts';
import type { ServiceDeps } from '@app/shared/domain';
import { DONE } from '../domain/members.js';
import { latestSnapshots, outcomeOf, outcomeOfClose, readMembers, type CloseSnapshotDoc, type StartSnapshotDoc } from '../domain/snapshots.js';
import { loadSprint } from '../domain/sprint-access.js';

const header = (s: StartSnapshotDoc | CloseSnapshotDoc) => {
  const h: NonNullable<SprintReport['start']> = { taken_at: s.taken_at, taken_by: s.taken_by, member_count: s.member_count, total_points: s.total_points };
  if (s.kind === 'start' && s.by_close) h.by_close = true;
  if (s.kind === 'close') h.target = s.target;
  return h;
};

/**
 * `sprints.report` — `GET /api/v1/tasks/{sprintId}/report` (issue 12; formulas in docs/sprints.md).
 * A closed sprint with a close snapshot is answered from its frozen snapshots only, so nothing done
 * later (finishing carried-over work, editing members) changes it. An open sprint — or one closed
 * before snapshots existed — is computed now (`live: true`) from its members against the start
 * snapshot (not started: its members now count as committed).
 *
 * Errors: 404 `TASK_NOT_FOUND`, 400 `NOT_A_SPRINT`, 503 `STORE_UNAVAILABLE`.
 */
export function sprintReport({ store }: ServiceDeps): Handler<typeof SprintsOps.report> {
  return async ({ sprintId }, ctx) => {
    const { sprint } = await loadSprint(store, callerId(ctx), sprintId, 'read');
    const closed = sprint.status === DONE;
    const { start, close } = await latestSnapshots(store, sprintId);
    const base = { sprint_id: sprintId, title: sprint.title, state: closed ? 'closed' : 'open' };
    if (closed && close) {
      return { ...base, live: false, ...(start ? { start: header(start) } : {}), close: header(close), ...outcomeOfClose(close) };
    }
    const now = await readMembers(store, sprintId);
    return { ...base, live: true, ...(start ? { start: header(start) } : {}), ...outcomeOf(start?.members ?? now, now) };
  };
}
