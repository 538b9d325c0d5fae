/**
 * What a query may cost (docs/query-language.md "Cost limits"): the rules that refuse, before any
 * scan, a query whose cost is plainly unbounded. Each is checked where the query is parsed (or,
 * for the sort depth, where its page is known), so the answer is the same on every store, in
 * `POST /tasks/query/validate`, and for column, view and webhook queries as they are saved.
 * A refusal is 400 `QUERY_TOO_COSTLY` with `details: {rule, limit, position}` (position: 0-based
 * offset into the query text, as every query error gives it).
 */
import { AppError } from '../errors/index.js';
import type { Field, OrderKey, Query } from './ast.js';
import { MAX_WILDCARD_RUNS, wildcardRuns } from './patterns.js';

/** Deepest nesting of parentheses and NOT a query may have. Each level costs every document examined one more step of the matcher. */
export const MAX_NESTING = 12;
/** Most values in one `IN (…)` or `CONTAINS_ALL (…)` list. */
export const MAX_LIST_VALUES = 200;
/**
 * Fields no store keeps an index for sorting on (free text of any length): a page sorted by one
 * of them costs a sort of every match, and a deep page holds all those before it.
 */
export const UNINDEXED_TEXT_FIELDS: ReadonlySet<Field> = new Set(['title', 'description']);
/**
 * Most rows before a page (`(page - 1) × pageSize`) of a read sorted by an {@link UNINDEXED_TEXT_FIELDS}
 * field; a deeper page is refused (page through a narrower query, or sort by an indexed field).
 */
export const MAX_TEXT_SORT_OFFSET = 1_000;

/** Which rule refused a query (`details.rule` of `QUERY_TOO_COSTLY`). */
export type CostRule = 'nesting' | 'list-size' | 'wildcard-runs' | 'text-sort-depth';

/** 400 `QUERY_TOO_COSTLY`: `message` says why and where; `details` name the rule, its limit and the position. */
export function tooCostly(rule: CostRule, limit: number, position: number, message: string, extra: Record<string, unknown> = {}): AppError {
  return new AppError('QUERY_TOO_COSTLY', { message, details: { rule, limit, position, ...extra } });
}

/** The nesting rule at a NOT or `(` opening level `depth` at `position`: throws past {@link MAX_NESTING}. */
export function checkNesting(depth: number, position: number): void {
  if (depth > MAX_NESTING) {
    throw tooCostly('nesting', MAX_NESTING, position, `Nesting deeper than ${MAX_NESTING} levels (parentheses and NOT) at position ${position}; write the condition flatter`);
  }
}

/** The list rule for a list of `count` values starting at `position`: throws past {@link MAX_LIST_VALUES}. */
export function checkListSize(count: number, position: number): void {
  if (count > MAX_LIST_VALUES) {
    throw tooCostly('list-size', MAX_LIST_VALUES, position, `The list at position ${position} has ${count} values; at most ${MAX_LIST_VALUES} are allowed`, { count });
  }
}

/** The wildcard-run rule for a LIKE / ILIKE pattern written at `position`: throws past `MAX_WILDCARD_RUNS` (patterns.ts). */
export function checkWildcardRuns(pattern: string, position: number): void {
  const runs = wildcardRuns(pattern);
  if (runs > MAX_WILDCARD_RUNS) {
    throw tooCostly('wildcard-runs', MAX_WILDCARD_RUNS, position, `The LIKE pattern at position ${position} has ${runs} wildcard runs; at most ${MAX_WILDCARD_RUNS} are allowed`, { runs });
  }
}

/** Where an ORDER BY key was written in its query text (kept unseen on the key by the parser), if known. */
export function orderKeyPosition(key: OrderKey): number | undefined {
  const at = (key as { at?: unknown }).at;
  return typeof at === 'number' ? at : undefined;
}

/**
 * The sort-depth rule for a read of `query` whose page starts after `offset` rows: throws when a
 * sort key of `query` is an {@link UNINDEXED_TEXT_FIELDS} field and `offset` is past
 * {@link MAX_TEXT_SORT_OFFSET}. `override` is the field of a sort given beside the query (it
 * replaces the query's ORDER BY; its fault is reported at `/sort/column`).
 */
export function checkSortDepth(query: Query, offset: number, override?: Field): void {
  if (offset <= MAX_TEXT_SORT_OFFSET) return;
  const why = (field: Field) => `Sorting by ${field} (no index) is limited to the first ${MAX_TEXT_SORT_OFFSET} rows; this page starts after ${offset}. Narrow the query or sort by an indexed field`;
  if (override !== undefined) {
    if (UNINDEXED_TEXT_FIELDS.has(override)) throw tooCostly('text-sort-depth', MAX_TEXT_SORT_OFFSET, 0, why(override), { field: '/sort/column', offset });
    return;
  }
  for (const key of query.orderBy) {
    if (!UNINDEXED_TEXT_FIELDS.has(key.field)) continue;
    const position = orderKeyPosition(key) ?? 0;
    throw tooCostly('text-sort-depth', MAX_TEXT_SORT_OFFSET, position, `${why(key.field)} (at position ${position})`, { offset });
  }
}
