import { AppError } from '../errors/index.js';
import { valuesOf, type Expr, type FunctionName, type Pred, type Query, type Value } from './ast.js';

/**
 * Who asks and where (docs/query-language.md "Functions"): the caller's user id, its IANA time
 * zone (absent or unknown → `UTC`), the board the query runs on (board query, column read, move),
 * and the request's clock.
 */
export interface QueryContext {
  userId: string;
  timezone?: string | undefined;
  boardId?: string | undefined;
  now: Date;
}

/**
 * The store look-ups function resolution needs, made with the caller's access rules
 * (`queryLookups` in the domain package builds them from the store).
 */
export interface FunctionLookups {
  /** The `activeSprintId` of a board the caller can read (undefined: none running); 404 `BOARD_NOT_FOUND` when it cannot. */
  activeSprint(boardId: string): Promise<string | undefined>;
  /** Ids of the live sprint tasks the caller can read: open (status not `done`) or closed (`done`). */
  sprints(state: 'open' | 'closed'): Promise<string[]>;
  /** The caller's stored time zone, read only when a period function needs it and the context has none. */
  timezone?(): Promise<string | undefined>;
  /**
   * True when the look-ups read inside a transaction: they then run one after the other, as
   * MongoDB takes one operation at a time in a transaction (docs/store.md "Transactions");
   * otherwise a query's distinct look-ups run concurrently.
   */
  readonly oneAtATime?: boolean;
}

/** The value `activeSprint()` resolves to when the board runs no sprint: an id no task has, so `=` matches nothing. */
export const NO_SPRINT = '';

/** True when the query calls any function (then it must be resolved before it is compiled). */
export function hasCalls(q: Query): boolean {
  return q.where !== undefined && calls(q.where).length > 0;
}

/** Every call in an expression, in query order. */
function calls(e: Expr): Array<Extract<Value, { type: 'call' }>> {
  switch (e.type) {
    case 'and':
    case 'or':
      return e.items.flatMap(calls);
    case 'not':
      return calls(e.expr);
    default:
      return valuesOf(e).filter((v): v is Extract<Value, { type: 'call' }> => v.type === 'call');
  }
}

/** The position the parser recorded on a call node (not part of the AST's equality), else 0. */
function positionOf(v: Value): number {
  const at = (v as { at?: unknown }).at;
  return typeof at === 'number' ? at : 0;
}

/**
 * Checks what needs no store: `activeSprint()` without a board id where the query runs on no
 * board is 400 `QUERY_FUNCTION_CONTEXT` at the call's position.
 */
export function checkFunctionContext(q: Query, where: { board: boolean }): void {
  if (where.board || !q.where) return;
  const bare = calls(q.where).find((c) => c.name === 'activeSprint' && c.args.length === 0);
  if (bare) {
    const position = positionOf(bare);
    throw new AppError('QUERY_FUNCTION_CONTEXT', {
      message: `activeSprint() at position ${position} needs a board: this query runs on no board; write activeSprint('<board id>')`,
      details: { function: 'activeSprint', position },
    });
  }
}

/**
 * Replaces every function call of `q` by literal values for this caller (docs/query-language.md
 * "Functions"): `me()` → the user id; `activeSprint([board])` → that board's running sprint id
 * ({@link NO_SPRINT} when none); `openSprints()` / `closedSprints()` → the readable sprint ids
 * (after `IN`, spliced into the list); period functions → an ISO instant in the caller's time
 * zone. A query without calls is returned as is (same object, so compiled forms stay cached).
 * Throws 400 `QUERY_FUNCTION_CONTEXT` (see {@link checkFunctionContext}) and whatever the
 * look-ups throw (404 `BOARD_NOT_FOUND` for a board the caller cannot read). Each distinct
 * look-up runs once per resolution; in turn when `lookups.oneAtATime` (inside a transaction).
 */
export async function resolveQuery(q: Query, ctx: QueryContext, lookups: FunctionLookups): Promise<Query> {
  if (!q.where) return q;
  const found = calls(q.where);
  if (found.length === 0) return q;
  checkFunctionContext(q, { board: ctx.boardId !== undefined });
  const memo = new Map<string, Promise<Value[]>>();
  let zone: Promise<string> | undefined;
  const timezone = (): Promise<string> =>
    (zone ??= ctx.timezone !== undefined ? Promise.resolve(ctx.timezone) : (lookups.timezone?.() ?? Promise.resolve(undefined)).then((z) => z ?? 'UTC'));
  const valueOf = (c: Extract<Value, { type: 'call' }>): Promise<Value[]> => {
    const key = JSON.stringify(c);
    let hit = memo.get(key);
    if (!hit) memo.set(key, (hit = resolveCall(c, ctx, lookups, timezone)));
    return hit;
  };
  const resolved = new Map<Value, Value[]>();
  if (lookups.oneAtATime) for (const c of found) resolved.set(c, await valueOf(c));
  else await Promise.all(found.map(async (c) => resolved.set(c, await valueOf(c))));
  return { ...q, where: substitute(q.where, resolved) };
}

async function resolveCall(
  c: Extract<Value, { type: 'call' }>,
  ctx: QueryContext,
  lookups: FunctionLookups,
  timezone: () => Promise<string>,
): Promise<Value[]> {
  const str = (value: string): Value => ({ type: 'string', value });
  switch (c.name) {
    case 'me':
      return [str(ctx.userId)];
    case 'activeSprint': {
      const arg = c.args[0];
      const boardId = arg?.type === 'string' ? arg.value : ctx.boardId!;
      return [str((await lookups.activeSprint(boardId)) ?? NO_SPRINT)];
    }
    case 'openSprints':
    case 'closedSprints':
      return (await lookups.sprints(c.name === 'openSprints' ? 'open' : 'closed')).map(str);
    default: {
      const arg = c.args[0];
      const shift = arg?.type === 'relative' ? { amount: arg.amount, unit: arg.unit } : undefined;
      const tz = await timezone();
      try {
        return [{ type: 'date', value: periodBoundary(c.name, shift, ctx.now, tz) }];
      } catch (e) {
        if (!(e instanceof RangeError)) throw e;
        // (the parser bounds shifts; a clock near the end of the calendar could still leave it)
        const position = positionOf(c);
        throw new AppError('QUERY_SYNTAX', {
          message: `${c.name}() at position ${position} falls outside the representable dates (years 0000–9999)`,
          details: { position, function: c.name },
        });
      }
    }
  }
}

/** `to` with the unseen query positions of `from` (parse.ts `located`), for the typing stage's errors. */
function keepPositions<T extends Expr>(from: Expr, to: T): T {
  const { at, opAt } = from as Expr & { at?: number; opAt?: number };
  return at === undefined ? to : Object.defineProperties(to, { at: { value: at }, opAt: { value: opAt } });
}

function substitute(e: Expr, resolved: ReadonlyMap<Value, Value[]>): Expr {
  const one = (v: Value): Value => (v.type === 'call' ? resolved.get(v)![0] ?? { type: 'string', value: NO_SPRINT } : v);
  const many = (vs: Value[]): Value[] => vs.flatMap((v) => (v.type === 'call' ? resolved.get(v)! : [v]));
  switch (e.type) {
    case 'and':
    case 'or':
      return { type: e.type, items: e.items.map((i) => substitute(i, resolved)) };
    case 'not':
      return { type: 'not', expr: substitute(e.expr, resolved) };
    case 'cmp':
    case 'has':
    case 'contains':
      return keepPositions(e, { ...e, value: one(e.value) });
    case 'in':
    case 'containsAll':
      return keepPositions(e, { ...e, values: many(e.values) });
    case 'between':
      return keepPositions(e, { ...e, low: one(e.low), high: one(e.high) });
    default:
      return e;
  }
}

// ---- period functions in a time zone -------------------------------------------------------

const DAY_MS = 86_400_000;
const formats = new Map<string, Intl.DateTimeFormat>();

/** A formatter of wall-clock parts in `tz`, or undefined for a zone the runtime does not know. */
function formatOf(tz: string): Intl.DateTimeFormat | undefined {
  let f = formats.get(tz);
  if (!f) {
    try {
      f = new Intl.DateTimeFormat('en-US', {
        timeZone: tz, hourCycle: 'h23', year: 'numeric', month: 'numeric', day: 'numeric', hour: 'numeric', minute: 'numeric', second: 'numeric',
      });
    } catch {
      return undefined;
    }
    if (formats.size > 200) formats.clear();
    formats.set(tz, f);
  }
  return f;
}

/** The wall-clock time of instant `ms` in `tz`, as milliseconds of a UTC date with the same fields. */
function wallOf(ms: number, f: Intl.DateTimeFormat): number {
  const p: Record<string, number> = {};
  for (const part of f.formatToParts(new Date(ms))) if (part.type !== 'literal') p[part.type] = Number(part.value);
  const d = new Date(0);
  d.setUTCFullYear(p.year!, p.month! - 1, p.day!);
  d.setUTCHours(p.hour!, p.minute!, p.second!, ms - Math.floor(ms / 1000) * 1000);
  return d.getTime();
}

/** The instant whose wall-clock time in `tz` is `wall` (the later reading across a DST gap). */
function instantOf(wall: number, f: Intl.DateTimeFormat): number {
  const guess = wall - (wallOf(wall, f) - wall);
  return wall - (wallOf(guess, f) - guess);
}

function addMonths(wall: number, months: number): number {
  const d = new Date(wall);
  const total = d.getUTCFullYear() * 12 + d.getUTCMonth() + months;
  const year = Math.floor(total / 12);
  const month = total - year * 12;
  const last = new Date(0);
  last.setUTCFullYear(year, month + 1, 0);
  const out = new Date(wall);
  out.setUTCFullYear(year, month, Math.min(d.getUTCDate(), last.getUTCDate()));
  return out.getTime();
}

/**
 * The ISO instant of a period function: `now` shifted on the caller's calendar by `shift`
 * (days, weeks, months or years), then the first millisecond (`startOf…`) or the last one
 * (`endOf…`) of its day, week (Monday to Sunday) or month, in time zone `tz` (unknown → UTC).
 */
export function periodBoundary(fn: FunctionName, shift: { amount: number; unit: 'd' | 'w' | 'm' | 'y' } | undefined, now: Date, tz: string): string {
  const f = formatOf(tz) ?? formatOf('UTC')!;
  let wall = wallOf(now.getTime(), f);
  if (shift) {
    if (shift.unit === 'd' || shift.unit === 'w') wall += shift.amount * (shift.unit === 'w' ? 7 : 1) * DAY_MS;
    else wall = addMonths(wall, shift.amount * (shift.unit === 'y' ? 12 : 1));
  }
  const midnight = wall - (((wall % DAY_MS) + DAY_MS) % DAY_MS);
  let start: number;
  let next: number;
  if (fn === 'startOfDay' || fn === 'endOfDay') {
    start = midnight;
    next = midnight + DAY_MS;
  } else if (fn === 'startOfWeek' || fn === 'endOfWeek') {
    start = midnight - ((new Date(midnight).getUTCDay() + 6) % 7) * DAY_MS; // weeks start on Monday
    next = start + 7 * DAY_MS;
  } else {
    const d = new Date(midnight);
    d.setUTCDate(1);
    start = d.getTime();
    next = addMonths(start, 1);
  }
  const instant = fn.startsWith('start') ? instantOf(start, f) : instantOf(next, f) - 1;
  return new Date(instant).toISOString();
}
