import type { Burndown } from '@app/shared/contracts';
import { DONE } from './members.js';
import type { OutboxEvent } from './outbox.js';
import { round6, type SnapMember } from './snapshots.js';

/** A task as the burndown tracks it: in the sprint or not, its status and numeric points. */
interface Tracked {
  inSprint: boolean;
  status: string;
  points: number | undefined;
}

const DAY_MS = 86_400_000;
/** The UTC day (`YYYY-MM-DD`) of an ISO instant. */
export const dayOf = (iso: string) => iso.slice(0, 10);
const midnightAfter = (day: string) => new Date(Date.parse(`${day}T00:00:00.000Z`) + DAY_MS).toISOString();

/** What the series is computed from. `final` are the members at `end` (close snapshot, or now). */
export interface BurndownInput {
  sprintId: string;
  startedAt: string;
  /** Members in the start snapshot. */
  start: readonly SnapMember[];
  /** Outbox task events after the start snapshot, in `seq` order, up to `end`. */
  events: readonly OutboxEvent[];
  /** End of the series: the close time, or now. */
  end: string;
  closed: boolean;
  /** The members at `end`: the last day's figures are exactly these. */
  final: readonly SnapMember[];
  /** The sprint's deadline (ISO), where the ideal line reaches 0 and the series ends (unless it ran past it). */
  deadline?: string | undefined;
  /** The sprint's kickoff (ISO): the series starts there when it is before the start. */
  kickoff?: string | undefined;
}

const numeric = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/** The task an event is about: its `task_id`, else the task in its data. */
export function eventTaskId(e: OutboxEvent): string | undefined {
  return e.task_id ?? e.data?.task?.id ?? e.data?.task_id;
}

/**
 * A filter of the events read in `seq` order that keeps those that can change the series of
 * sprint `sprintId`, by the replay's own rule: an event of a task in the start snapshot
 * (`startIds`), of a task an earlier kept event put into the sprint, or one that puts its task into
 * the sprint. The others (every other task of the store) are dropped as they are read, so the
 * burndown holds, and checks the access of, only the sprint's tasks (docs/sprints.md "Burndown").
 */
export function sprintEventFilter(sprintId: string, startIds: Iterable<string>): (e: OutboxEvent) => boolean {
  const tracked = new Set(startIds);
  return (e) => {
    const id = eventTaskId(e);
    if (id === undefined) return false;
    if (tracked.has(id)) return true;
    if (!after(e, sprintId, undefined)?.inSprint) return false;
    tracked.add(id);
    return true;
  };
}

/**
 * The state of a task after an event, or `undefined` when the event does not say (then the task is
 * left as it was). Reads the API task after the write (`data.task`); a `task.updated` without it
 * falls back to its `changes` (`status`, `metadata.app.sprint`, `metadata.app.points`).
 */
function after(e: OutboxEvent, sprintId: string, was: Tracked | undefined): Tracked | undefined {
  if (e.type === 'task.deleted') return { inSprint: false, status: was?.status ?? '', points: undefined };
  const task = e.data?.task;
  if (task && task.metadata !== undefined) {
    const meta = task.metadata;
    return {
      inSprint: meta['app.sprint'] === sprintId && meta['app.type'] !== 'sprint',
      status: task.status ?? was?.status ?? '',
      points: numeric(meta['app.points']),
    };
  }
  if (!e.data?.changes) return undefined;
  const next: Tracked = was ? { ...was } : { inSprint: false, status: '', points: undefined };
  for (const c of e.data.changes) {
    if (c.field === 'status' && typeof c.to === 'string') next.status = c.to;
    if (c.field === 'metadata.app.sprint') next.inSprint = c.to === sprintId;
    if (c.field === 'metadata.app.points') next.points = numeric(c.to);
  }
  return next;
}

/**
 * The daily burndown of a sprint (formulas in docs/sprints.md "Burndown"). One entry per UTC day
 * from the kickoff day (or the start day, when earlier or without a kickoff) to the deadline day
 * (or the end day, when there is no deadline, the end is past it, or the sprint is closed). `remaining` = points of the
 * members not `done` at the end of that day, `scope` = points of all members then, replaying the
 * outbox events from the start snapshot, for the days from the start day to the end day (the
 * close, or now); the end day is exactly `final`. Days before the start and after the end have
 * `remaining` and `scope` null (not lived yet, or before the sprint's baseline). The ideal line
 * falls linearly from the starting remaining (at the start snapshot) on the first day to 0 on the
 * deadline day (or the last day when there is no deadline, or it is not after the first day), and
 * stays 0 after it. Points are rounded to 6 decimals.
 */
export function burndownSeries(input: BurndownInput): Burndown {
  const state = new Map<string, Tracked>(input.start.map((m) => [m.id, { inSprint: true, status: m.status, points: m.points }]));
  const sums = () => {
    let remaining = 0;
    let scope = 0;
    for (const t of state.values()) {
      if (!t.inSprint) continue;
      scope += t.points ?? 0;
      if (t.status !== DONE) remaining += t.points ?? 0;
    }
    return { remaining: round6(remaining), scope: round6(scope) };
  };
  const initial = sums().remaining;
  const startDay = dayOf(input.startedAt);
  const endDay = dayOf(input.end) < startDay ? startDay : dayOf(input.end);
  const firstDay = input.kickoff && dayOf(input.kickoff) < startDay ? dayOf(input.kickoff) : startDay;
  const deadlineDay = input.deadline ? dayOf(input.deadline) : undefined;
  // an open sprint's chart runs to its deadline; a closed one's ends at its close
  const lastDay = !input.closed && deadlineDay !== undefined && deadlineDay > endDay ? deadlineDay : endDay;
  const idealEnd = deadlineDay !== undefined && deadlineDay > firstDay ? deadlineDay : lastDay;
  const idealSpan = Math.round((Date.parse(idealEnd) - Date.parse(firstDay)) / DAY_MS);

  const days: Burndown['days'] = [];
  let next = 0;
  let endEntry: Burndown['days'][number] | undefined;
  for (let day = firstDay, i = 0; day <= lastDay; day = dayOf(midnightAfter(day)), i++) {
    const ideal = idealSpan <= 0 ? 0 : round6(initial * Math.max(0, (idealSpan - i) / idealSpan));
    if (day < startDay || day > endDay) {
      days.push({ date: day, remaining: null, scope: null, ideal });
      continue;
    }
    const bound = midnightAfter(day);
    for (; next < input.events.length && input.events[next]!.occurred_at < bound; next++) {
      const e = input.events[next]!;
      const id = eventTaskId(e);
      if (id === undefined) continue;
      const was = state.get(id);
      const now = after(e, input.sprintId, was);
      if (now && (now.inSprint || was)) state.set(id, now);
    }
    const entry = { date: day, ...sums(), ideal };
    days.push(entry);
    if (day === endDay) endEntry = entry;
  }
  endEntry!.remaining = round6(input.final.filter((m) => m.status !== DONE).reduce((a, m) => a + (m.points ?? 0), 0));
  endEntry!.scope = round6(input.final.reduce((a, m) => a + (m.points ?? 0), 0));
  return { sprint_id: input.sprintId, started_at: input.startedAt, end: input.end, closed: input.closed, days };
}
