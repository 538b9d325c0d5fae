import { callerId, jsonText, type Handler } from '@app/shared/bus';
import type { SprintReport, SprintsOps } from '@app/shared/contracts';
import type { ServiceDeps } from '@app/shared/domain';
import { DONE } from '../domain/members.js';
import {
  frozenReportOf, frozenReportText, headerOf, latestSnapshots, outcomeOf, readableIds, readMembers, visibleSnapshot, type FrozenReport,
} from '../domain/snapshots.js';
import { loadSprint } from '../domain/load-sprint.js';

/**
 * `sprints.report` — `GET /api/v1/tasks/{sprintId}/report` (formulas in docs/sprints.md).
 * A closed sprint with a close snapshot is answered from its frozen snapshots only, so nothing done
 * later (finishing carried-over work, editing members) changes it: the close serialized the frozen
 * part once, and the reply is that text behind the sprint's id, title (now) and state, never
 * serialized again (two store round trips, run together: the sprint with the caller, and the latest
 * close snapshot's text). An open sprint — or one closed before snapshots existed, or set to `done`
 * by hand — is computed now (`live: true`) from its members against the start snapshot (not
 * started: its members now count as committed).
 *
 * Every list and figure counts only the members the reader can read (docs/sprints.md "Who may put a
 * task into a sprint"): a frozen report naming a task the reader cannot read is rebuilt from the
 * snapshots' visible members.
 *
 * Errors: 404 `TASK_NOT_FOUND`, 400 `NOT_A_SPRINT`, 503 `STORE_UNAVAILABLE`.
 */
export function sprintReport({ store }: ServiceDeps): Handler<typeof SprintsOps.report> {
  return async ({ sprintId }, ctx) => {
    // The frozen text is read beside the access check and used only once the check has passed.
    const [{ sprint, principal }, frozen] = await Promise.all([loadSprint(store, callerId(ctx), sprintId, 'read'), frozenReportText(store, sprintId)]);
    const closed = sprint.status === DONE;
    const head = `{"sprint_id":${JSON.stringify(sprintId)},"title":${JSON.stringify(sprint.title)},"state":"closed","live":false,`;
    if (closed && frozen !== undefined) {
      // Only what the reader may read is counted: the frozen text serves a reader who can read
      // every task it names; for another one it is rebuilt from the snapshots' visible members.
      const ids = frozenReportIds(sprintId, frozen); // each once
      const visible = await readableIds(store, principal, ids);
      if (visible.all) {
        // `frozen` is an object's JSON text: its members follow the four live ones, in the reply's key order.
        return jsonText<SprintReport>(`${head}${frozen.slice(1)}`);
      }
      const { start, close } = await latestSnapshots(store, sprintId);
      if (close) {
        const part = frozenReportOf(start && visibleSnapshot(start, visible), visibleSnapshot(close, visible));
        return jsonText<SprintReport>(`${head}${JSON.stringify(part).slice(1)}`);
      }
    }
    const { start } = await latestSnapshots(store, sprintId);
    const now = await readMembers(store, sprintId, undefined, principal);
    const shown = start && visibleSnapshot(start, await readableIds(store, principal, start.members.map((m) => m.id)));
    return {
      sprint_id: sprintId, title: sprint.title, state: closed ? 'closed' : 'open', live: true,
      ...(shown ? { start: headerOf(shown) } : {}), ...outcomeOf(shown?.members ?? now, now),
    };
  };
}

/** Every task id a frozen report names, each once. */
function reportIds(r: FrozenReport): string[] {
  return [...new Set([...r.committed, ...r.added, ...r.removed, ...r.completed, ...r.rolled_over, ...r.remaining].map((m) => m.id))];
}

/** How many closed sprints' frozen report ids {@link frozenReportIds} keeps (the latest read). */
export const FROZEN_IDS_KEPT = 64;

/** The ids of the last frozen reports read, by sprint, with the text they were read from. */
const keptIds = new Map<string, { text: string; ids: string[] }>();

/**
 * The task ids the frozen report text `frozen` of `sprintId` names, each once. A frozen text never
 * changes once written, and parsing it is most of a report's cost (~90 µs for 200 members,
 * docs/bench.md "Where a request's time goes"): the ids of the last {@link FROZEN_IDS_KEPT} texts
 * read are kept, each with its text, and used again only for that same text. Read access is still
 * checked on every read.
 */
function frozenReportIds(sprintId: string, frozen: string): string[] {
  const kept = keptIds.get(sprintId);
  if (kept?.text === frozen) return kept.ids;
  const ids = reportIds(JSON.parse(frozen) as FrozenReport);
  keptIds.delete(sprintId);
  keptIds.set(sprintId, { text: frozen, ids });
  if (keptIds.size > FROZEN_IDS_KEPT) keptIds.delete(keptIds.keys().next().value!);
  return ids;
}
