/**
 * Pure state rules of the board page, kept apart from React so vitest can check them:
 * per-column pages, the optimistic move and its rollback, WIP states, the summary signature the
 * periodic refresh compares, and the wording of applied actions.
 */
import type { AppliedAction, Card, Summary } from '../api/types.js';

/** Cards per column page (the column read's `page_size`). */
export const PAGE_SIZE = 20;

/** What the page holds for one column: the cards of the pages loaded so far and the column's `total`. */
export interface ColumnState {
  cards: Card[];
  total: number;
  /** Pages of {@link PAGE_SIZE} loaded (1 after the first read). */
  pages: number;
  loading: boolean;
  error?: string;
}

export type Columns = Record<string, ColumnState>;

/** A dry-run preview of a move: what entering `to` would apply, or why it cannot. */
export interface MovePreview {
  cardId: string;
  to: string;
  text: string;
  ok: boolean;
}

export const emptyColumn = (): ColumnState => ({ cards: [], total: 0, pages: 0, loading: true });

/**
 * The optimistic move: the card leaves `from` and is shown first in `to`, totals follow. Returns
 * the same object when the card is not in `from` or `from === to`.
 */
export function applyOptimisticMove(cols: Columns, cardId: string, from: string, to: string): Columns {
  const src = cols[from];
  const dst = cols[to];
  if (!src || !dst || from === to) return cols;
  const card = src.cards.find((c) => c.id === cardId);
  if (!card) return cols;
  return {
    ...cols,
    [from]: { ...src, cards: src.cards.filter((c) => c.id !== cardId), total: Math.max(0, src.total - 1) },
    [to]: { ...dst, cards: [card, ...dst.cards.filter((c) => c.id !== cardId)], total: dst.total + 1 },
  };
}

/** Puts the named columns back as they were in `before` (the rollback of a failed move). */
export function restoreColumns(cols: Columns, before: Columns, ids: readonly string[]): Columns {
  const next = { ...cols };
  for (const id of ids) if (before[id]) next[id] = before[id];
  return next;
}

/** The column a card is shown in, if any. */
export function columnOf(cols: Columns, cardId: string): string | undefined {
  return Object.keys(cols).find((id) => cols[id]!.cards.some((c) => c.id === cardId));
}

/** WIP state of a column: `none` without a limit, else `under`, `at` or `over` (`total > limit`, as the summary says). */
export function wipState(total: number, limit: number | undefined): 'none' | 'under' | 'at' | 'over' {
  if (limit === undefined) return 'none';
  return total > limit ? 'over' : total === limit ? 'at' : 'under';
}

/**
 * A short fingerprint of a board summary: active sprint, and per column its id, total and preview
 * titles. The periodic refresh reloads the columns when it changes.
 */
export function summarySignature(s: Summary): string {
  return JSON.stringify([s.active_sprint_id ?? null, s.columns.map((c) => [c.column_id, c.total, c.preview])]);
}

const show = (v: unknown) => (v === undefined ? 'nothing' : typeof v === 'string' ? `“${v}”` : JSON.stringify(v));

/** Human wording of a move's applied actions (`[]` → "no field changes"). */
export function describeActions(actions: readonly AppliedAction[]): string {
  if (actions.length === 0) return 'no field changes';
  return actions
    .map((a) => {
      const tags = (a.value ?? []).join(', ');
      if (a.op === 'add_tags') return `adds tag ${tags}`;
      if (a.op === 'remove_tags') return `removes tag ${tags}`;
      return 'to' in a && a.to !== undefined ? `sets ${a.field} to ${show(a.to)}` : `clears ${a.field}`;
    })
    .join(', ');
}

/** The column `step` places after `current` in board order, or undefined at either end. */
export function neighbourColumn(order: readonly string[], current: string, step: 1 | -1): string | undefined {
  const i = order.indexOf(current);
  return i < 0 ? undefined : order[i + step];
}

/** `cf.priority` and `app.points` of a card, when they are numbers or short strings. */
export function cardBadges(card: Card): { priority?: string; points?: string } {
  const pick = (v: unknown) => (typeof v === 'number' || (typeof v === 'string' && v.length <= 12) ? String(v) : undefined);
  const out: { priority?: string; points?: string } = {};
  const md = card.metadata as Record<string, unknown>;
  const p = pick(md['cf.priority']);
  const pts = pick(md['app.points']);
  if (p !== undefined) out.priority = p;
  if (pts !== undefined) out.points = pts;
  return out;
}

/**
 * The lease a card is claimed under when it is live at `now` (docs/boards.md "Claiming a card
 * under a lease": live while `now` is before `expires_at`), else undefined: an expired lease
 * nobody has taken over yet is still on the card but no longer shown.
 */
export function liveLease(card: Pick<Card, 'lease'>, now: Date = new Date()): NonNullable<Card['lease']> | undefined {
  const lease = card.lease;
  return lease !== undefined && Date.parse(lease.expires_at) > now.getTime() ? lease : undefined;
}

/** Time left of a lease in words: "40 s left", "12 min left", "2 h 5 min left". */
export function timeLeft(expiresAt: string, now: Date = new Date()): string {
  const s = Math.max(0, Math.round((Date.parse(expiresAt) - now.getTime()) / 1000));
  if (s < 60) return `${s} s left`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min left`;
  return `${Math.floor(m / 60)} h ${m % 60} min left`;
}

/**
 * Who holds a lease, in words: the holder token's name and its user for a claim made with an
 * access token ("“triage agent”, a token of ada"), else the user ("ada"). `people` maps user ids
 * to names (an unknown holder is "someone not on this board", never the raw id).
 */
export function leaseHolder(lease: NonNullable<Card['lease']>, people: ReadonlyMap<string, string> | undefined): string {
  const user = people?.get(lease.holder) ?? 'someone not on this board';
  if (lease.holder_token === undefined) return user;
  return lease.holder_token_name !== undefined ? `“${lease.holder_token_name}”, a token of ${user}` : `an access token of ${user}`;
}

/** The clause every column read of the page carries: sprint tasks are not cards (docs/web.md). */
export const NOT_A_SPRINT = "app.type != 'sprint'";

/** A string literal of the query language: single quotes, `\` and `'` escaped by a backslash (docs/query-language.md). */
export function quote(text: string): string {
  return `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/**
 * The plain search as a query-language fragment: every word (split on white space) must be found
 * in the title or the description, case-insensitively (the indexed `~`). `''` for no words.
 */
export function searchClause(words: string): string {
  const parts = words.trim().split(/\s+/).filter(Boolean);
  return parts.map((w) => `(title ~ ${quote(w)} OR description ~ ${quote(w)})`).join(' AND ');
}

/**
 * What the page sends as a column read's `filter`: the user's query-language filter (in
 * parentheses, so its OR stays inside), the plain search, the "assigned to me" clause (`assignee`
 * = the caller's user id) and {@link NOT_A_SPRINT}. `offset` is
 * where the user's filter text starts in it, to map a 400's `details.position` back onto it.
 */
export function columnFilter(userFilter: string, search: string, assignee?: string): { filter: string; offset: number } {
  const f = userFilter.trim();
  const s = searchClause(search);
  const parts = [...(f ? [`(${f})`] : []), ...(s ? [s] : []), ...(assignee ? [`assignee = ${quote(assignee)}`] : []), NOT_A_SPRINT];
  return { filter: parts.join(' AND '), offset: f ? 1 : 0 };
}

/**
 * Where a filter error sits in the user's own text: the server's position in the sent filter minus
 * the offset, clamped to the text (the closing parenthesis and the added clauses lie after it).
 */
export function userPosition(position: number, offset: number, userText: string): number {
  return Math.max(0, Math.min(userText.length, position - offset));
}

/**
 * The statuses a card may be given: the values the board's columns `set` on `status` (in column
 * order, each once), plus the card's current status when it is none of them.
 */
export function statusChoices(columns: ReadonlyArray<{ actions: ReadonlyArray<{ field: string; operation: string; value?: unknown }> }>, current?: string): string[] {
  const out: string[] = [];
  for (const c of columns) {
    for (const a of c.actions) {
      if (a.field === 'status' && a.operation === 'set' && typeof a.value === 'string' && !out.includes(a.value)) out.push(a.value);
    }
  }
  if (current && !out.includes(current)) out.push(current);
  return out;
}

/** Initials of a user name for a card's assignee badge: `ada` → `AD`, `ada lovelace` / `ada.lovelace` → `AL`. */
export function initials(name: string): string {
  if (name === '') return '?';
  const parts = name.split(/[\s._-]+/).filter(Boolean);
  if (parts.length >= 2) return (parts[0]![0]! + parts[1]![0]!).toUpperCase();
  return (parts[0] ?? '?').slice(0, 2).toUpperCase();
}

/**
 * Where a menu of `size` opens for an anchor at `a` in a viewport of `view` (pixels): below the
 * anchor, right-aligned with it; above it when there is no room below; clamped 4 px inside.
 */
export function menuPosition(
  a: { top: number; bottom: number; right: number },
  size: { width: number; height: number },
  view: { width: number; height: number },
): { top: number; left: number } {
  const m = 4;
  let top = a.bottom + 2;
  if (top + size.height > view.height - m) top = a.top - size.height - 2;
  top = Math.max(m, Math.min(top, view.height - size.height - m));
  const left = Math.max(m, Math.min(a.right - size.width, view.width - size.width - m));
  return { top, left };
}

/** The planning view's id of the backlog group (cards in no open sprint). */
export const BACKLOG = 'backlog';

/**
 * The board query of the planning view: the board's cards (no sprint task) that are not done or
 * belong to one of the `open` sprints, oldest first. Done cards of no open sprint are history,
 * not backlog.
 */
export function planningQuery(open: readonly string[]): string {
  const inOpen = open.length ? ` OR app.sprint IN (${open.map(quote).join(', ')})` : '';
  return `${NOT_A_SPRINT} AND (status != 'done'${inOpen}) ORDER BY created_at ASC`;
}

/** Numeric `app.points` of a card, else undefined (only JSON numbers count, as in close-sprint). */
export function pointsOf(card: { metadata: unknown }): number | undefined {
  const v = (card.metadata as Record<string, unknown>)['app.points'];
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

/** The points of `cards`, rounded to 6 decimals like the server's sums (`0.1 + 0.2` → `0.3`). */
export function sumPoints(cards: ReadonlyArray<{ metadata: unknown }>): number {
  return Math.round(cards.reduce((n, c) => n + (pointsOf(c) ?? 0), 0) * 1e6) / 1e6;
}

/**
 * Groups cards for the planning view: by their `app.sprint` when it is one of the `open` sprints,
 * else under {@link BACKLOG}. Every open sprint and the backlog get an entry, in input order.
 */
export function planCards<T extends { metadata: unknown }>(cards: readonly T[], open: readonly string[]): Map<string, T[]> {
  const out = new Map<string, T[]>([[BACKLOG, []], ...open.map((id): [string, T[]] => [id, []])]);
  for (const c of cards) {
    const s = (c.metadata as Record<string, unknown>)['app.sprint'];
    out.get(typeof s === 'string' && out.has(s) && s !== BACKLOG ? s : BACKLOG)!.push(c);
  }
  return out;
}

/** One day of the burndown chart (kickoff to deadline, docs/web.md "Sprint view"). */
export interface BurnDay {
  /** UTC day, `YYYY-MM-DD`. */
  date: string;
  /** Points of the unfinished members at the end of the day; `null` for a day without actuals (future, or before the start). */
  remaining: number | null;
  /** Points of all members at the end of the day; `null` as for `remaining`. */
  scope: number | null;
  /** The ideal line: the committed points on the first day falling linearly to 0 on the deadline day, 0 after it. */
  ideal: number;
  /** Scope added (+) or removed (−) since the previous day with actuals; 0 when none. */
  scopeChange: number;
  /** The day is today (UTC). */
  today: boolean;
}

const DAY_MS = 86_400_000;
const dayOf = (iso: string) => iso.slice(0, 10);
const addDays = (day: string, n: number) => new Date(Date.parse(`${day}T00:00:00Z`) + n * DAY_MS).toISOString().slice(0, 10);
const daysBetween = (a: string, b: string) => Math.round((Date.parse(`${b}T00:00:00Z`) - Date.parse(`${a}T00:00:00Z`)) / DAY_MS);

/**
 * The burndown as a sprint chart, read from the API's days as they are (`GET /tasks/{id}/burndown`,
 * docs/sprints.md "Burndown": kickoff, or start when earlier, to the deadline; days still to come
 * with `remaining: null`; the ideal line reaching 0 on the deadline), with the scope change since
 * the previous day with actuals and today (the UTC day of `now`) marked.
 */
export function burnDays(
  b: { days: ReadonlyArray<{ date: string; remaining: number | null; scope: number | null; ideal: number }> },
  plan: { now: Date },
): BurnDay[] {
  const today = plan.now.toISOString().slice(0, 10);
  let prevScope: number | null = null;
  return b.days.map((d) => {
    const scopeChange = d.scope !== null && prevScope !== null ? Math.round((d.scope - prevScope) * 1e6) / 1e6 : 0;
    if (d.scope !== null) prevScope = d.scope;
    // the ideal line is shown to 1/100 of a point
    return { date: d.date, remaining: d.remaining, scope: d.scope, ideal: Math.round(d.ideal * 100) / 100, scopeChange, today: d.date === today };
  });
}

/**
 * Days from `now`'s UTC day to the deadline's UTC day, and how the sprint header says it:
 * "3 days left", "1 day left", "ends today", "2 days past the deadline".
 */
export function daysLeft(deadline: string, now: Date): { days: number; text: string } {
  const days = daysBetween(now.toISOString().slice(0, 10), dayOf(deadline));
  const plural = (n: number) => `${n} day${n === 1 ? '' : 's'}`;
  const text = days > 0 ? `${plural(days)} left` : days === 0 ? 'ends today' : `${plural(-days)} past the deadline`;
  return { days, text };
}

/** Words for the metadata keys the app writes itself (docs/sprints.md, docs/web.md). */
const METADATA_LABELS: Record<string, string> = {
  'app.points': 'Points',
  'cf.priority': 'Priority',
  'app.sprint': 'Sprint',
  'app.carried': 'Carried over',
  'app.goal': 'Goal',
};

/**
 * A card's metadata as a person reads it: known keys in words ("Points", "Sprint" with the
 * sprint's title from `sprintTitle`, "Carried over: 1 sprint"), other keys without their `cf.`
 * or `app.` prefix, strings unquoted. `app.type` is left out (it says what kind of task this is,
 * not something about the card).
 */
export function describeMetadata(md: Record<string, unknown>, sprintTitle: (id: string) => string | undefined): Array<{ key: string; label: string; value: string }> {
  const out: Array<{ key: string; label: string; value: string }> = [];
  for (const [key, v] of Object.entries(md)) {
    if (key === 'app.type') continue;
    const label = METADATA_LABELS[key] ?? key.replace(/^(cf|app)\./, '').replace(/[_.]+/g, ' ');
    let value = typeof v === 'string' ? v : JSON.stringify(v);
    if (key === 'app.sprint' && typeof v === 'string') value = sprintTitle(v) ?? 'a sprint that is closed or not on this board';
    if (key === 'app.carried' && typeof v === 'number') value = `${v} sprint${v === 1 ? '' : 's'}`;
    out.push({ key, label: label.charAt(0).toUpperCase() + label.slice(1), value });
  }
  return out;
}

/** `details` of a 409 `WIP_LIMIT_REACHED` (docs/boards.md "WIP limits"). */
export interface WipRefusal {
  column_id: string;
  wip_limit: number;
  count: number;
}

/** The `details` of an error body when it is a WIP refusal, else `undefined`. */
export function wipRefusalOf(code: string, details: Record<string, unknown> | undefined): WipRefusal | undefined {
  if (code !== 'WIP_LIMIT_REACHED' || !details) return undefined;
  const { column_id, wip_limit, count } = details;
  return typeof column_id === 'string' && typeof wip_limit === 'number' && typeof count === 'number' ? { column_id, wip_limit, count } : undefined;
}

/**
 * One sentence for a card refused by a full column whose `wip_policy` is `block`, naming the
 * column, its limit and its count: "“Login” was not moved: Doing already holds 2 cards, its WIP
 * limit of 2." (`verb` "created" for a card create).
 */
export function wipRefusalText(title: string, columnName: string, r: WipRefusal, verb: 'moved' | 'created' = 'moved'): string {
  const cards = r.count === 1 ? '1 card' : `${r.count} cards`;
  const where = verb === 'moved' ? '' : ` in ${columnName}`;
  return `“${title}” was not ${verb}${where}: ${columnName} already holds ${cards}, ${r.count > r.wip_limit ? 'more than ' : ''}its WIP limit of ${r.wip_limit}.`;
}

// ---- flow view (docs/flow.md) ----------------------------------------------------------------------

/** The UTC day `YYYY-MM-DD` of `d` shifted by `offset` days. */
export function utcDay(d: Date, offset = 0): string {
  return new Date(d.getTime() + offset * 86_400_000).toISOString().slice(0, 10);
}

/** The flow view's range: the last `days` UTC days up to today, both ends included (`from` is `days - 1` days back). */
export function flowRange(now: Date, days: number): { from: string; to: string } {
  return { from: utcDay(now, -(days - 1)), to: utcDay(now) };
}

/** Days since 1970-01-01 of a UTC day `YYYY-MM-DD` (the flow charts' x axis; fractional for an instant). */
export function epochDay(dayOrInstant: string): number {
  const t = Date.parse(dayOrInstant.length === 10 ? `${dayOrInstant}T00:00:00Z` : dayOrInstant);
  return t / 86_400_000;
}

/**
 * The cumulative flow diagram's bands: per column (board order, as the report lists them) its
 * count per day, and the stacked top of its band — its count plus the counts of every later
 * column — so the last column (Done) lies at the bottom and the first on top. `x` is
 * {@link epochDay} of each day.
 */
export function cfdBands(days: ReadonlyArray<{ day: string; columns: ReadonlyArray<{ column_id: string; name: string; count: number }> }>): {
  x: number[];
  columns: Array<{ id: string; name: string; counts: number[]; top: number[] }>;
} {
  const last = days[days.length - 1];
  const order = last ? last.columns.map((c) => ({ id: c.column_id, name: c.name })) : [];
  const counts = order.map((c) => days.map((d) => d.columns.find((x) => x.column_id === c.id)?.count ?? 0));
  const columns = order.map((c, i) => ({ ...c, counts: counts[i]!, top: days.map((_, j) => counts.slice(i).reduce((s, k) => s + k[j]!, 0)) }));
  return { x: days.map((d) => epochDay(d.day)), columns };
}

/**
 * The one sentence of a move refused because the card left its column behind the page's back
 * (409 `KANBAN_TASK_NOT_IN_SOURCE_COLUMN`): no column id, no advice to refresh (the page does).
 */
export function staleMoveText(title: string, fromName: string, status: string | undefined): string {
  return `“${title}” was not moved: it changed elsewhere${status ? ` (status is now “${status}”)` : ''} and is no longer in ${fromName}. The board now shows where it is.`;
}
