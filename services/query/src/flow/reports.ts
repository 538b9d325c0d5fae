import type { FinishedCard } from '@app/shared/contracts';
import type { Doc } from '@app/shared/store';

/*
 * The arithmetic of the flow reports (docs/flow.md), pure: no store, no clock. The handlers read
 * the records and snapshots and call these.
 */

/** One move of a card between two columns of a board, from its `card.moved` event. */
export interface FlowMove {
  from: string;
  to: string;
  /** ISO 8601 time of the move. */
  at: string;
  /** The event's `seq`: moves are applied once, in order. */
  seq: number;
}

/** A card's flow on one board: its moves there, oldest first (read from its move records). */
export interface CardFlow {
  task_id: string;
  /** The task's `created_at` (ISO 8601), the start of its lead time. */
  created_at: string;
  /** Its moves on this board, oldest first. */
  moves: FlowMove[];
  /** true while the task is deleted (left out of every report). */
  deleted?: boolean;
}

/** One move record as stored in `card_moves` (`_id` = `<boardId>:<taskId>:<seq>`). */
export interface CardMoveDoc extends Doc, FlowMove {
  _id: string;
  board_id: string;
  task_id: string;
  /** The task's `created_at` (ISO 8601), the start of its lead time. */
  created_at: string;
  /** true while the task is deleted (left out of every report). */
  deleted?: boolean;
}

/** The moves of each card among `moves` (any order), each card's oldest first. */
export function cardFlows(moves: readonly CardMoveDoc[]): CardFlow[] {
  const byCard = new Map<string, CardFlow>();
  for (const m of moves) {
    let card = byCard.get(m.task_id);
    if (!card) byCard.set(m.task_id, (card = { task_id: m.task_id, created_at: m.created_at, moves: [] }));
    if (m.deleted) card.deleted = true;
    card.moves.push({ from: m.from, to: m.to, at: m.at, seq: m.seq });
  }
  for (const card of byCard.values()) card.moves.sort((a, b) => a.seq - b.seq);
  return [...byCard.values()];
}

const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;

/**
 * When the card finished and when its cycle started, or undefined when it is not finished:
 * finished = its last move went into `endColumn`, at that move's time (a card re-opened and
 * finished again finishes at its last entry; one re-opened and not finished again is not
 * finished). The cycle starts at its first move out of `startColumn`, or — a card that never
 * left the start column by a move (created in a later column) — at its first move.
 */
export function finishOf(card: Pick<CardFlow, 'moves'>, startColumn: string, endColumn: string): { started_at: string; finished_at: string } | undefined {
  const last = card.moves[card.moves.length - 1];
  if (!last || last.to !== endColumn) return undefined;
  const leftStart = card.moves.find((m) => m.from === startColumn && m.to !== startColumn);
  return { started_at: (leftStart ?? card.moves[0]!).at, finished_at: last.at };
}

/**
 * The finished cards of `cards` whose finish time falls in `[fromMs, toMs)` (ms since the epoch),
 * with lead time (created → finished) and cycle time (started → finished) in hours, by finish time.
 * `titles` maps task ids to titles (cards missing from it are left out: the reader may not read them).
 */
export function finishedCards(
  cards: readonly CardFlow[], titles: ReadonlyMap<string, string>, startColumn: string, endColumn: string, fromMs: number, toMs: number,
): FinishedCard[] {
  const out: FinishedCard[] = [];
  for (const card of cards) {
    const title = titles.get(card.task_id);
    if (title === undefined || card.deleted) continue;
    const finish = finishOf(card, startColumn, endColumn);
    if (!finish) continue;
    const done = Date.parse(finish.finished_at);
    if (done < fromMs || done >= toMs) continue;
    out.push({
      task_id: card.task_id, title, created_at: card.created_at, ...finish,
      lead_time_hours: hours(done - Date.parse(card.created_at)),
      cycle_time_hours: hours(done - Date.parse(finish.started_at)),
    });
  }
  // ISO 8601 UTC times and ids order by their code units (no locale collation: a twentieth of the time)
  return out.sort((a, b) => byCodeUnits(a.finished_at, b.finished_at) || byCodeUnits(a.task_id, b.task_id));
}

const byCodeUnits = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Hours, rounded to 1/1000, never negative (a clock step back is no negative duration). */
function hours(ms: number): number {
  return Math.round(Math.max(0, ms) / HOUR_MS * 1000) / 1000;
}

/** p50, p85 and p95 of `values` by the nearest-rank method; undefined for no values. */
export function percentiles(values: readonly number[]): { p50: number; p85: number; p95: number } | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = (p: number) => sorted[Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length))) - 1]!;
  return { p50: rank(50), p85: rank(85), p95: rank(95) };
}

/** The UTC Monday (YYYY-MM-DD) of the week holding `ms`. */
export function weekOf(ms: number): string {
  const d = new Date(Math.floor(ms / DAY_MS) * DAY_MS);
  const sinceMonday = (d.getUTCDay() + 6) % 7;
  return dayOf(d.getTime() - sinceMonday * DAY_MS);
}

/** The UTC day (YYYY-MM-DD) holding `ms`. */
export function dayOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** Finished cards per UTC week (from Monday), every week from the one holding `fromMs` to the one holding `toMs - 1`. */
export function throughput(cards: readonly Pick<FinishedCard, 'finished_at'>[], fromMs: number, toMs: number): { week: string; finished: number }[] {
  const counts = new Map<string, number>();
  for (let w = Date.parse(weekOf(fromMs)); w < toMs; w += 7 * DAY_MS) counts.set(dayOf(w), 0);
  for (const c of cards) {
    const week = weekOf(Date.parse(c.finished_at));
    counts.set(week, (counts.get(week) ?? 0) + 1);
  }
  return [...counts].map(([week, finished]) => ({ week, finished }));
}

/** The days `from`..`to` (YYYY-MM-DD, inclusive) as ms bounds `[fromMs, toMs)`. */
export function dayRange(from: string, to: string): { fromMs: number; toMs: number } {
  return { fromMs: Date.parse(`${from}T00:00:00.000Z`), toMs: Date.parse(`${to}T00:00:00.000Z`) + DAY_MS };
}

/** Most days one report covers (docs/flow.md): a year and a day. */
export const MAX_RANGE_DAYS = 366;
/** Days a report covers when `from` is not given: `to` and the 29 days before. */
export const DEFAULT_RANGE_DAYS = 30;
