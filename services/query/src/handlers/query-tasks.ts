import type { Static } from '@sinclair/typebox';
import { callerId, jsonText, type Handler } from '@app/shared/bus';
import type { QueryOps, SortDTO, TasksQueryResult } from '@app/shared/contracts';
import { fieldTypesFor, loadPrincipal, readableTasksFilter, resolveFor, type ServiceDeps } from '@app/shared/domain';
import { AppError, invalidField } from '@app/shared/errors';
import { checkFunctionContext, checkSortDepth, compileQuery, fieldPath, parseQuery } from '@app/shared/query';
import type { Sort } from '@app/shared/store';
import { DEFAULT_PAGE_SIZE, findPageOrdered, taskJson, tasksOf } from '../reads.js';

/**
 * The store sort of a SortDTO override: the field's stored path, then the `_id` tie-breaker.
 * An unknown column is 400 `VALIDATION_FAILED` naming `/sort/column`.
 */
function sortOverride(s: SortDTO): Sort {
  let path: string;
  try {
    path = fieldPath(s.column);
  } catch (e) {
    if (!AppError.is(e)) throw e;
    const hint = typeof e.details?.suggestion === 'string' ? `; did you mean "${e.details.suggestion}"?` : '';
    throw invalidField('/sort/column', `unknown column "${s.column}"${hint}`, 'unknown-field');
  }
  const dir = s.direction === 'asc' ? 1 : -1;
  return path === '_id' ? { _id: dir } : { [path]: dir, _id: 1 };
}

/**
 * Global task query gate (docs/query-service.md "Scope: what a read can see"). The caller's read scope
 * (`readableTasksFilter`, docs/architecture.md §5) is ANDed with the compiled query, so the query text can only
 * narrow it. `sort` replaces the query's ORDER BY. `view: lite` omits `description` (not fetched).
 * Function calls (`me()`, `openSprints()`…) are resolved for the caller first; this query runs on
 * no board, so a bare `activeSprint()` is 400 `QUERY_FUNCTION_CONTEXT`. Custom fields in reach (the
 * caller's own, then its groups') type their predicates and sorts (docs/custom-fields.md).
 * Errors: 400 `QUERY_SYNTAX` / `QUERY_UNKNOWN_FIELD` / `QUERY_UNKNOWN_FUNCTION` / `QUERY_FUNCTION_CONTEXT` /
 * `QUERY_TOO_LONG` / `QUERY_TOO_COSTLY` (a cost limit, a deep page sorted by text among them: checked
 * before anything is read) / `VALIDATION_FAILED`; 404 `BOARD_NOT_FOUND` from `activeSprint('<board>')`.
 * The answer is assembled as JSON text from each task's memoized encoding ({@link taskJson}): the
 * same text `JSON.stringify` gives for `{data, total, page, pageSize, totalPages}`.
 */
export const queryTasks =
  ({ store, clock }: ServiceDeps): Handler<typeof QueryOps.tasks> =>
  async (input, ctx) => {
    const now = clock.now();
    const parsed = parseQuery(input.query ?? '');
    checkFunctionContext(parsed, { board: false });
    const sortOver = input.sort ? sortOverride(input.sort) : undefined;
    const page = input.page ?? 1;
    const pageSize = input.pageSize ?? DEFAULT_PAGE_SIZE;
    checkSortDepth(parsed, (page - 1) * pageSize, input.sort?.column);
    const principal = await loadPrincipal(store, callerId(ctx));
    const [resolved, fields] = await Promise.all([resolveFor(store, principal, parsed, { now }), fieldTypesFor(store, principal, { query: parsed })]);
    const compiled = compileQuery(resolved, { now, fields });
    const order = sortOver ? { sort: sortOver } : compiled;
    const view = input.view === 'lite' ? 'lite' : 'full';
    const { docs, total } = await findPageOrdered(
      tasksOf(store),
      { $and: [readableTasksFilter(principal), compiled.filter] },
      order,
      page,
      pageSize,
      view === 'lite' ? { description: 0 } : undefined,
    );
    const n = (v: number) => JSON.stringify(v);
    return jsonText<Static<typeof TasksQueryResult>>(
      `{"data":[${docs.map((d) => taskJson(d, view)).join(',')}],"total":${n(total)},"page":${n(page)},"pageSize":${n(pageSize)},"totalPages":${n(Math.ceil(total / pageSize))}}`,
    );
  };
