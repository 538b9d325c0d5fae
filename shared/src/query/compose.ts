import { LRUCache } from 'lru-cache';
import { AppError } from '../errors/index.js';
import type { Expr, OrderKey, Query } from './ast.js';
import { deepFreeze } from '../util/index.js';
import { parseFilter, parseQuery } from './parse.js';
import { printQuery } from './print.js';

/**
 * AND of the conditions of `parts` (empty ones skipped, nested ANDs flattened so the result is in
 * normal form), ordered by the ORDER BY of the first part that has one.
 */
export function andQueries(...parts: Query[]): Query {
  const items = parts.flatMap((p): Expr[] => (!p.where ? [] : p.where.type === 'and' ? p.where.items : [p.where]));
  const orderBy = parts.find((p) => p.orderBy.length > 0)?.orderBy ?? [];
  if (items.length === 0) return { orderBy };
  return { where: items.length === 1 ? items[0]! : { type: 'and', items }, orderBy };
}

/** The default order of a column read (docs/architecture.md §7: `metadata.order` ascending). */
const COLUMN_ORDER: OrderKey[] = [{ field: 'metadata.order', dir: 'asc' }];

/** Parses one part of an effective query, tagging its errors with `details.part`. */
function parsePart(text: string, part: 'column' | 'filter'): Query {
  try {
    return part === 'column' ? parseQuery(text) : parseFilter(text);
  } catch (e) {
    if (!AppError.is(e)) throw e;
    const opts = { message: `${part === 'column' ? 'Column query' : 'Filter'}: ${e.message}`, details: { ...e.details, part } };
    throw new AppError(e.code, opts);
  }
}

/**
 * The effective query of a column read (docs/architecture.md §7):
 * `(column query) AND ('t' IN tags)… AND app.sprint = '<id>' [AND app.type != 'sprint'] AND (filter)
 *  ORDER BY <column's ORDER BY, else metadata.order ASC>`, and its canonical text. With
 * `cardsOnly` (the board's cards: column read, summary, WIP count, claim, flow) sprint tasks are
 * left out by `app.type != 'sprint'`, unless the column query or the filter names `app.type`.
 * A filter may not have an ORDER BY (the column decides the order). Parse errors keep their
 * code, with `details.part` = `column` or `filter` and `details.position` relative to that text.
 */
export function buildEffectiveQuery(p: { column: string; defaultTags: string[]; sprintId?: string; filter?: string; cardsOnly?: boolean }): {
  query: Query;
  text: string;
} {
  const key = JSON.stringify([p.column, p.defaultTags, p.sprintId ?? null, p.filter ?? '', p.cardsOnly === true]);
  const hit = effective.get(key);
  if (hit) return hit;
  const column = parsePart(p.column, 'column');
  const tags: Query[] = p.defaultTags.map((t) => ({
    where: { type: 'has', value: { type: 'string', value: t }, field: 'tags' },
    orderBy: [],
  }));
  const sprint: Query[] =
    p.sprintId === undefined ? [] : [{ where: { type: 'cmp', field: 'app.sprint', op: '=', value: { type: 'string', value: p.sprintId } }, orderBy: [] }];
  const filter = parsePart(p.filter ?? '', 'filter');
  // sprints are tasks, not cards: left out unless the column query or the filter names app.type
  const cards: Query[] = p.cardsOnly && !namesField(column, TYPE_FIELD) && !namesField(filter, TYPE_FIELD) ? [NOT_A_SPRINT] : [];
  const query = andQueries(column, ...tags, ...sprint, ...cards, filter, { orderBy: COLUMN_ORDER });
  const result = deepFreeze({ query, text: printQuery(query) });
  effective.set(key, result);
  return result;
}

/** The metadata key that marks a sprint task (docs/architecture.md §8). */
export const TYPE_FIELD = 'app.type';
/** `app.type != 'sprint'`: the clause that keeps sprint tasks out of a board's cards (docs/boards.md "Sprints are not cards"). */
const NOT_A_SPRINT: Query = deepFreeze({ where: { type: 'cmp', field: TYPE_FIELD, op: '!=', value: { type: 'string', value: 'sprint' } }, orderBy: [] });

/** Whether any condition of `q` is about `field` (its ORDER BY does not count). */
export function namesField(q: Query, field: string): boolean {
  const walk = (e: Expr): boolean =>
    e.type === 'and' || e.type === 'or' ? e.items.some(walk) : e.type === 'not' ? walk(e.expr) : e.field === field;
  return q.where !== undefined && walk(q.where);
}

/** Effective queries (by their parts), least recently used dropped past 500. */
const effective = new LRUCache<string, { query: Query; text: string }>({ max: 500 });

/**
 * The error a stored query (a board column's or a view's) answers when it cannot run for a
 * reader (docs/query-language.md "Stored queries"): a 400 query error (`QUERY_*`) keeps its code
 * and details, its message names the column or view, and `details.column` / `details.view` holds
 * its id; anything else thrown while parsing, resolving or compiling it (a date the calendar
 * cannot hold) becomes 400 `QUERY_SYNTAX` naming it. Other errors (404, 503…) pass unchanged, as
 * do errors of the caller's own `filter` (`details.part` = `filter`).
 */
export function storedQueryError(e: unknown, owner: { kind: 'column' | 'view'; id: string; name: string }): unknown {
  const label = `${owner.kind === 'column' ? 'Column' : 'View'} "${owner.name}" (${owner.id})`;
  if (AppError.is(e)) {
    if (e.status !== 400 || !e.code.startsWith('QUERY_') || e.details?.part === 'filter') return e;
    return new AppError(e.code, { message: `${label}: ${e.message}`, details: { ...e.details, [owner.kind]: owner.id }, cause: e });
  }
  if (!(e instanceof Error)) return e;
  return new AppError('QUERY_SYNTAX', {
    message: `${label}: its query cannot run (${e.message}); edit the ${owner.kind}'s query`,
    details: { [owner.kind]: owner.id, position: 0 },
    cause: e,
  });
}
