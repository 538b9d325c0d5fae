import { setImmediate as turn } from 'node:timers/promises';
import { callerId, type Handler } from '@app/shared/bus';
import type { FlowDay, FlowOps } from '@app/shared/contracts';
import { boardScopeFilter, columnOf, loadBoard, type ServiceDeps, type TaskDoc } from '@app/shared/domain';
import { invalidField } from '@app/shared/errors';
import { Collections, metadataPath } from '@app/shared/store';
import { cardMovesOf, columnFigures, snapshotsOf, takeSnapshot } from './history.js';
import { cardFlows, dayOf, dayRange, DEFAULT_RANGE_DAYS, finishedCards, MAX_RANGE_DAYS, percentiles, throughput } from './reports.js';
import { DEFAULT_FLOW_RETENTION_DAYS, recordFromCursor } from './work.js';
import { catchUpOutbox } from '@app/shared/events';
import { sprintFor } from '../reads.js';

const DAY_MS = 86_400_000;

/**
 * The report's days: `to` defaults to today (UTC), `from` to 29 days before `to`. 400
 * `VALIDATION_FAILED` naming `/from` when it is after `to` or the range passes {@link MAX_RANGE_DAYS}.
 */
function rangeOf(input: { from?: string; to?: string }, now: Date): { from: string; to: string; fromMs: number; toMs: number } {
  const to = input.to ?? dayOf(now.getTime());
  const from = input.from ?? dayOf(Date.parse(`${to}T00:00:00.000Z`) - (DEFAULT_RANGE_DAYS - 1) * DAY_MS);
  for (const [field, day] of [['/from', from], ['/to', to]] as const) {
    if (Number.isNaN(Date.parse(`${day}T00:00:00.000Z`)) || dayOf(Date.parse(`${day}T00:00:00.000Z`)) !== day) throw invalidField(field, `${day} is not a calendar day (YYYY-MM-DD)`, 'format');
  }
  const { fromMs, toMs } = dayRange(from, to);
  if (fromMs >= toMs) throw invalidField('/from', `from (${from}) is after to (${to})`, 'range');
  if ((toMs - fromMs) / DAY_MS > MAX_RANGE_DAYS) throw invalidField('/from', `a report covers at most ${MAX_RANGE_DAYS} days`, 'range');
  return { from, to, fromMs, toMs };
}

/**
 * `flow.cumulative` — `GET /api/v1/boards/{boardId}/flow` (docs/flow.md "Cumulative flow"): per
 * day of `from`..`to`, each column's count and points. Past days come from the board's daily
 * snapshots (counted as the board's owner saw them; columns in today's board order, a column the
 * snapshot does not know counts 0); today is counted now for the reader, so a board created a
 * minute ago already has its row. Read access as the board (404). 400 on a bad range.
 */
export const cumulativeFlow =
  ({ store, clock }: ServiceDeps): Handler<typeof FlowOps.cumulative> =>
  async (input, ctx) => {
    const { board, principal } = await loadBoard(store, callerId(ctx), input.boardId, 'read');
    const now = clock.now();
    const { from, to } = rangeOf(input, now);
    // across sprints by default: Done holds every finished card, not the running sprint's alone
    const sprintId = input.sprint === undefined ? undefined : sprintFor(board, input.sprint);
    const today = dayOf(now.getTime());
    const snaps = await snapshotsOf(store).find({ board_id: board._id, day: { $gte: from, $lte: to < today ? to : today } }, { sort: { day: 1 } });
    const days: FlowDay[] = [];
    for (const snap of snaps) {
      if (snap.day === today) continue;
      const byId = new Map(snap.columns.map((c) => [c.column_id, c]));
      days.push({
        day: snap.day, live: false,
        columns: board.columns.map((c) => ({ column_id: c.id, name: c.name, count: byId.get(c.id)?.count ?? 0, points: byId.get(c.id)?.points ?? 0 })),
      });
    }
    if (from <= today && today <= to) days.push({ day: today, live: true, columns: await columnFigures(store, board, principal, now, sprintId) });
    return { board_id: board._id, from, to, days };
  };

/**
 * `flow.cycleTime` — `GET /api/v1/boards/{boardId}/cycle-time` (docs/flow.md "Lead and cycle
 * time"): the cards that finished (last moved into `end_column`) in `from`..`to`, each with its
 * lead and cycle time, their p50/p85/p95, and the throughput per UTC week. Only cards the reader
 * may read and that are still in the board's scope count. Read access as the board (404); an
 * unknown column is 404 `COLUMN_NOT_FOUND`; 400 on a bad range.
 */
export const cycleTime =
  ({ store, clock }: ServiceDeps): Handler<typeof FlowOps.cycleTime> =>
  async (input, ctx) => {
    const { board, principal } = await loadBoard(store, callerId(ctx), input.boardId, 'read');
    const { from, to, fromMs, toMs } = rangeOf(input, clock.now());
    // every write acknowledged before this read is in the history: number it, then record it
    await catchUpOutbox(store);
    await recordFromCursor(store, () => clock.now());
    const start = input.start_column ?? board.columns[0]?.id;
    const end = input.end_column ?? board.columns[board.columns.length - 1]?.id;
    if (start === undefined || end === undefined) throw invalidField('/end_column', 'the board has no columns', 'required');
    columnOf(board, start);
    columnOf(board, end);
    // only the cards that ever went into the end column (one could finish in range) have their moves read
    const moves = cardMovesOf(store);
    const entered = await moves.find({ board_id: board._id, to: end, deleted: { $ne: true } }, { projection: { task_id: 1 } });
    const ids = [...new Set(entered.map((m) => m.task_id))];
    const records = ids.length === 0 ? [] : cardFlows(await moves.find({ board_id: board._id, task_id: { $in: ids } }));
    const readable = ids.length === 0 ? [] : await store.collection<TaskDoc>(Collections.tasks).find(
      { $and: [{ _id: { $in: ids } }, boardScopeFilter(board, principal), { [metadataPath('app.type')]: { $ne: 'sprint' } }] },
      { projection: { _id: 1, title: 1 } },
    );
    // the arithmetic over a year of cards and the answer's encoding each get a turn of their own,
    // so other requests are served between them (docs/store.md "Long reads and other users' requests")
    await turn();
    const cards = finishedCards(records, new Map(readable.map((t) => [t._id, t.title])), start, end, fromMs, toMs);
    await turn();
    const lead = percentiles(cards.map((c) => c.lead_time_hours));
    const cycle = percentiles(cards.map((c) => c.cycle_time_hours));
    return {
      board_id: board._id, from, to, start_column: start, end_column: end, cards,
      ...(lead ? { lead_time: lead } : {}),
      ...(cycle ? { cycle_time: cycle } : {}),
      throughput: throughput(cards, fromMs, toMs),
    };
  };

/**
 * `flow.snapshot` — `POST /api/v1/boards/{boardId}/flow/snapshot` (docs/flow.md "Snapshots"):
 * takes today's snapshot of the board now (replacing one taken earlier today). Board write access
 * (403 for a reader, 404 for others).
 */
export const flowSnapshot =
  ({ store, clock, config }: ServiceDeps): Handler<typeof FlowOps.snapshot> =>
  async (input, ctx) => {
    const { board } = await loadBoard(store, callerId(ctx), input.boardId, 'write');
    const { board_id, day, taken_at, columns } = await takeSnapshot(store, board, clock.now(), config?.FLOW_RETENTION_DAYS ?? DEFAULT_FLOW_RETENTION_DAYS);
    return { board_id, day, taken_at, columns };
  };
