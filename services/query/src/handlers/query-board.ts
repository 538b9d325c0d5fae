import { callerId, type Handler } from '@app/shared/bus';
import type { QueryOps } from '@app/shared/contracts';
import { boardScopeFilter, fieldTypesFor, loadBoard, resolveFor, toTask, type ServiceDeps } from '@app/shared/domain';
import { checkSortDepth, compileQuery, parseQuery } from '@app/shared/query';
import { DEFAULT_PAGE_SIZE, findPageOrdered, tasksOf } from '../reads.js';

/**
 * Free query within one board (docs/query-service.md): the board's
 * read scope (`boardScopeFilter`, docs/architecture.md §5, including its default_tags) ANDed with the
 * compiled query (its functions resolved for the caller, `activeSprint()` = this board's running
 * sprint), typed by the custom fields of the board's scope; full task objects. Errors: 404 `BOARD_NOT_FOUND` (missing or unreadable),
 * 400 query errors (`QUERY_TOO_COSTLY` for a deep page sorted by title or description among them).
 */
export const queryBoard =
  ({ store, clock }: ServiceDeps): Handler<typeof QueryOps.board> =>
  async (input, ctx) => {
    const now = clock.now();
    const parsed = parseQuery(input.query ?? '');
    const page = input.page ?? 1;
    const pageSize = input.page_size ?? DEFAULT_PAGE_SIZE;
    checkSortDepth(parsed, (page - 1) * pageSize);
    const { board, principal } = await loadBoard(store, callerId(ctx), input.boardId, 'read');
    const [resolved, fields] = await Promise.all([resolveFor(store, principal, parsed, { now, board }), fieldTypesFor(store, principal, { board, query: parsed })]);
    const compiled = compileQuery(resolved, { now, fields });
    const { docs, total } = await findPageOrdered(tasksOf(store), { $and: [boardScopeFilter(board, principal), compiled.filter] }, compiled, page, pageSize);
    return { data: docs.map((d) => toTask(d)), total, page };
  };
