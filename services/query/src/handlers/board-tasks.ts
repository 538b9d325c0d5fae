import { callerId, jsonText, type Handler } from '@app/shared/bus';
import type { QueryOps } from '@app/shared/contracts';
import { boardScopeFilter, loadBoard, toBoard, type ServiceDeps } from '@app/shared/domain';
import { compileColumn, DEFAULT_PAGE_SIZE, findPage, sprintFor, taskJson, tasksOf } from '../reads.js';

/**
 * Board read (ud's `GET /kanban/boards/{id}/tasks`, target `GET /api/v1/boards/{id}/tasks`): the
 * board object, and for every column its full card count (`column_counts`) and its first
 * `page_size` cards (default 20) as full task objects (`column_tasks`), each column read exactly as
 * the column read reads it (docs/query-service.md): its effective query (column query, the
 * board's default_tags, the `sprint` clause — default the board's active sprint) within the board
 * scope, in the column's order (its ORDER BY, else `metadata.order`), `_id` last.
 *
 * One bus request replaces one column read per column: the caller's groups and the board are read
 * once (a column read reads them per column), then every column's page and count run together.
 * Store round trips: principal + board + 2 × columns. Tasks are encoded from the memoized JSON
 * of each stored document ({@link taskJson}).
 * Errors: 404 `BOARD_NOT_FOUND`; 400 if a stored column query no longer compiles.
 */
export const boardTasks =
  ({ store, clock }: ServiceDeps): Handler<typeof QueryOps.boardTasks> =>
  async (input, ctx) => {
    const userId = callerId(ctx);
    const { board, principal } = await loadBoard(store, userId, input.boardId, 'read');
    const sprintId = sprintFor(board, input.sprint);
    const now = clock.now();
    const scope = boardScopeFilter(board, principal);
    const pageSize = input.page_size ?? DEFAULT_PAGE_SIZE;
    const tasks = tasksOf(store);
    const pages = await Promise.all(
      board.columns.map(async (column) => {
        const { filter, sort } = await compileColumn(store, principal, board, column, sprintId, now);
        return findPage(tasks, { $and: [scope, filter] }, sort, 1, pageSize);
      }),
    );
    const counts: Record<string, number> = {};
    const lists: string[] = [];
    board.columns.forEach((column, i) => {
      const { docs, total } = pages[i]!;
      counts[column.id] = total;
      lists.push(`${JSON.stringify(column.id)}:[${docs.map((d) => taskJson(d, 'full')).join(',')}]`);
    });
    return jsonText(`{"board":${JSON.stringify(toBoard(board, userId))},"column_counts":${JSON.stringify(counts)},"column_tasks":{${lists.join(',')}}}`);
  };
