import type { WipState } from '@app/shared/contracts';
import { boardScopeFilter, compileColumn, type BoardDoc, type ColumnDef, type Principal, type TaskDoc } from '@app/shared/domain';
import { AppError } from '@app/shared/errors';
import { Collections, type DocumentStore, type Filter, type Session } from '@app/shared/store';

/**
 * The WIP state of `column` if one more card entered it (docs/boards.md "WIP limits"): the cards
 * that match the column's effective query within the board scope and the board's active sprint —
 * the count the board summary shows — without `taskId` (the card being moved, when it already
 * matches), plus one. `undefined` when the column has no `wip_limit`. Read in the write's
 * transaction (`session`), so the count is the one the write commits against.
 * Throws 409 `WIP_LIMIT_REACHED` (details: `column_id`, `wip_limit`, `count` as it is now) when the
 * column's `wip_policy` is `block` and the column already holds `wip_limit` cards or more.
 */
export async function checkWip(
  store: DocumentStore, principal: Principal, board: BoardDoc, column: ColumnDef, now: Date, session: Session, taskId?: string,
): Promise<WipState | undefined> {
  const limit = column.wip_limit;
  if (limit === undefined) return undefined;
  const { filter } = await compileColumn(store, principal, board, column, board.activeSprintId, now, undefined, session);
  const others: Filter[] = taskId === undefined ? [] : [{ _id: { $ne: taskId } }];
  const held = await store.collection<TaskDoc>(Collections.tasks).countDocuments({ $and: [boardScopeFilter(board, principal), filter, ...others] }, { session });
  if (column.wip_policy === 'block' && held >= limit) {
    throw new AppError('WIP_LIMIT_REACHED', {
      message: `Column ${column.name} is at its WIP limit (${held} of ${limit}); finish or move a card out first`,
      details: { column_id: column.id, wip_limit: limit, count: held },
    });
  }
  return { column_id: column.id, wip_limit: limit, count: held + 1, over_limit: held + 1 > limit };
}
