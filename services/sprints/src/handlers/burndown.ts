import { callerId, type Handler } from '@app/shared/bus';
import type { SprintsOps } from '@app/shared/contracts';
import type { ServiceDeps } from '@app/shared/domain';
import { AppError } from '@app/shared/errors';
import { catchUpOutbox } from '@app/shared/events';
import { burndownSeries, eventTaskId, sprintEventFilter } from '../domain/burndown.js';
import { DONE } from '../domain/members.js';
import { taskEventsSince } from '../domain/outbox.js';
import { latestSnapshots, readableIds, readMembers } from '../domain/snapshots.js';
import { loadSprint } from '../domain/load-sprint.js';

/**
 * `sprints.burndown` — `GET /api/v1/tasks/{sprintId}/burndown`: the daily series of
 * remaining points from the start snapshot to the close (or now, from the injected clock),
 * replaying the task events of the outbox recorded since the start; the last day is exactly the
 * close snapshot's (or today's) members. Only tasks the reader can read are counted; writes
 * committed before the request are numbered first (`catchUpOutbox`). See {@link burndownSeries}
 * for the formulas.
 *
 * Errors: 404 `TASK_NOT_FOUND`, 400 `NOT_A_SPRINT`, 400 `SPRINT_NOT_STARTED` (open and never
 * started), 503 `STORE_UNAVAILABLE`.
 */
export function sprintBurndown({ store, clock }: ServiceDeps): Handler<typeof SprintsOps.burndown> {
  return async ({ sprintId }, ctx) => {
    const { sprint, principal } = await loadSprint(store, callerId(ctx), sprintId, 'read');
    const { start, close } = await latestSnapshots(store, sprintId);
    const closed = sprint.status === DONE && close !== undefined;
    if (!start) {
      throw new AppError('SPRINT_NOT_STARTED', {
        message: `Sprint ${sprintId} has not been started; POST /api/v1/tasks/${sprintId}/start-sprint first`,
        details: { sprintId },
      });
    }
    const end = closed ? close.taken_at : clock.now().toISOString();
    // the writes committed before this read are numbered first (read-your-writes)
    await catchUpOutbox(store);
    // only the events of the sprint's tasks are kept as they are read (sprintEventFilter)
    const [events, final] = await Promise.all([
      start.events_seq < 0 ? [] : taskEventsSince(store, start.events_seq, end, sprintEventFilter(sprintId, start.members.map((m) => m.id))),
      closed ? close.members : readMembers(store, sprintId),
    ]);
    // Only the tasks the reader may read count (docs/sprints.md "Who may put a task into a sprint").
    const visible = await readableIds(store, principal, [...new Set([...start.members, ...final].map((m) => m.id).concat(events.flatMap((e) => eventTaskId(e) ?? [])))]);
    const seen = (m: { id: string }) => visible.has(m.id);
    return burndownSeries({
      sprintId, startedAt: start.taken_at, start: start.members.filter(seen), end, closed, final: final.filter(seen), deadline: sprint.deadline, kickoff: sprint.kickoff,
      events: events.filter((e) => { const id = eventTaskId(e); return id === undefined || visible.has(id); }),
    });
  };
}
