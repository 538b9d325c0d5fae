import { callerId, type Handler } from '@app/shared/bus';
import type { QueryOps } from '@app/shared/contracts';
import { boardScopeFilter, loadBoard, type ServiceDeps } from '@app/shared/domain';
import { compileColumn, findPage, sprintFor, tasksOf } from '../reads.js';

const DEFAULT_PREVIEW = 3;

/**
 * Board summary (Draft; docs/query-service.md "Summary"): per column its total, the
 * first `preview` titles in column order, and its WIP flags.
 *
 * Each column is read like a column read (docs/query-service.md "Summary"): its effective query
 * within the board scope, counted and its first `preview` titles fetched (`findPage`, titles
 * only), every column's reads run together.
 * Store round trips: principal + board + 2 × columns. Both backends answer the counts from their
 * indexes, so the cost follows the columns' matches, not the board scope.
 * Errors: 404 `BOARD_NOT_FOUND`; 400 if a stored column query no longer compiles.
 */
export const boardSummary =
  ({ store, clock }: ServiceDeps): Handler<typeof QueryOps.summary> =>
  async (input, ctx) => {
    const { board, principal } = await loadBoard(store, callerId(ctx), input.boardId, 'read');
    const sprintId = sprintFor(board, input.sprint);
    const now = clock.now();
    const scope = boardScopeFilter(board, principal);
    const preview = input.preview ?? DEFAULT_PREVIEW;
    const tasks = tasksOf(store);
    const columns = await Promise.all(
      board.columns.map(async (column) => {
        const { filter, sort } = await compileColumn(store, principal, board, column, sprintId, now);
        const { docs: first, total } = await findPage(tasks, { $and: [scope, filter] }, sort, 1, preview, { title: 1 });
        return {
          column_id: column.id,
          name: column.name,
          total,
          preview: first.map((d) => d.title),
          ...(column.wip_limit !== undefined ? { wip_limit: column.wip_limit, over_wip_limit: total > column.wip_limit } : {}),
        };
      }),
    );
    return {
      board_id: board._id,
      name: board.name,
      ...(board.activeSprintId !== undefined ? { active_sprint_id: board.activeSprintId } : {}),
      columns,
    };
  };
