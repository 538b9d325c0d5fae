import { AppError } from '../errors/index.js';
import { Collections } from '../store/collections.js';
import type { DocumentStore, Session } from '../store/port.js';
import { canReadBoard, canWriteBoard, loadPrincipal, type Principal } from './access.js';
import type { BoardDoc, ColumnDef } from './board.js';

/** What a board operation needs (docs/architecture.md §9): read, write (cards, move) or owner (PUT, DELETE, share). */
export type BoardNeed = 'read' | 'write' | 'owner';

/** A board the caller may use, with the caller as access rules see it. */
export interface LoadedBoard {
  board: BoardDoc;
  principal: Principal;
}

/**
 * Loads board `boardId` for user `userId` (docs/architecture.md §4, §5, §9), reading the board and the caller's
 * groups: missing or unreadable → 404 `BOARD_NOT_FOUND`; readable but lacking `need` → 403
 * `FORBIDDEN`. Used by every service that serves a board route (boards, query). A write passes
 * its transaction `session` (the version it then checks is the one it writes); the two reads then
 * run one after the other, as MongoDB takes one operation at a time in a transaction
 * (docs/store.md "Transactions"); without a session they run concurrently.
 */
export async function loadBoard(store: DocumentStore, userId: string, boardId: string, need: BoardNeed, session?: Session): Promise<LoadedBoard> {
  const read = () => store.collection<BoardDoc>(Collections.boards).findOne({ _id: boardId }, session ? { session } : {});
  const [principal, board] = session
    ? [await loadPrincipal(store, userId, session), await read()]
    : await Promise.all([loadPrincipal(store, userId), read()]);
  if (!board || !canReadBoard(principal, board)) throw new AppError('BOARD_NOT_FOUND', { details: { boardId } });
  const allowed = need === 'read' || (need === 'write' ? canWriteBoard(principal, board) : board.owner_id === userId);
  if (!allowed) {
    const what = need === 'owner' ? 'Only the board owner may do this' : 'You may read this board but not change it';
    throw new AppError('FORBIDDEN', { message: what, details: { boardId } });
  }
  return { board, principal };
}

/** Column `columnId` of `board`, or 404 `COLUMN_NOT_FOUND`. */
export function columnOf(board: BoardDoc, columnId: string): ColumnDef {
  const column = board.columns.find((c) => c.id === columnId);
  if (!column) throw new AppError('COLUMN_NOT_FOUND', { message: `Column ${columnId} is not on board ${board._id}`, details: { boardId: board._id, columnId } });
  return column;
}
