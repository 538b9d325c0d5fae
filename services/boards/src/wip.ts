import type { WipState } from '@app/shared/contracts';
import { boardScopeFilter, compileColumn, countCards, type BoardDoc, type ColumnDef, type Principal, type TaskDoc } from '@app/shared/domain';
import { AppError } from '@app/shared/errors';
import { Collections, type DocumentStore, type Filter, type Session } from '@app/shared/store';

/**
 * The WIP state of `column` if one more card entered it (docs/boards.md "WIP limits"): the cards
 * that match the column's effective query within the board scope and the board's active sprint —
 * the count the board summary shows — without `taskId` (the card being moved, when it already
 * matches), plus one. `undefined` when the column has no `wip_limit`. Read in the write's
 * transaction (`session`), so the count is the one the write commits against; an entry into a
 * `block` column also writes the column's WIP guard ({@link guardEntry}), so of two concurrent
 * entries one conflicts and, retried, counts the other.
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
  const held = await countCards(store.collection<TaskDoc>(Collections.tasks), { $and: [boardScopeFilter(board, principal), filter, ...others] }, session);
  if (column.wip_policy === 'block' && held >= limit) {
    throw new AppError('WIP_LIMIT_REACHED', {
      message: `Column ${column.name} is at its WIP limit (${held} of ${limit}); finish or move a card out first`,
      details: { column_id: column.id, wip_limit: limit, count: held },
    });
  }
  return { column_id: column.id, wip_limit: limit, count: held + 1, over_limit: held + 1 > limit };
}

/**
 * Writes the WIP guard of `column` (one `wip_guards` document per board and blocking column, its
 * `entries` counted up) in the entry's transaction. On MongoDB a transaction reads one snapshot
 * and conflicts only on a document another transaction wrote: two moves of different cards into
 * the last free place would each count the column as it was and both commit (write skew). Both
 * writing this one document makes the later writer fail with a `TransientTransactionError`; its
 * retry reads a snapshot that holds the first card, and answers 409 `WIP_LIMIT_REACHED`
 * (docs/boards.md "WIP limits"). One more write per entry into a blocking column (not for a dry
 * run, which writes nothing), nothing for other columns.
 */
export async function guardEntry(store: DocumentStore, board: BoardDoc, column: ColumnDef, now: Date, session: Session): Promise<void> {
  if (column.wip_limit === undefined || column.wip_policy !== 'block') return;
  await store.collection(Collections.wipGuards).updateOne(
    { _id: `${board._id}:${column.id}` },
    { $inc: { entries: 1 }, $set: { board_id: board._id, column_id: column.id, last_entry_at: now.toISOString() } },
    { upsert: true, session },
  );
}
