import type { CallContext } from '@app/shared/bus';
import type { Board } from '@app/shared/contracts';
import { canReadBoard, canWriteBoard, loadPrincipal, type BoardDoc, type ColumnDef, type GroupDoc, type Principal } from '@app/shared/domain';
import { AppError } from '@app/shared/errors';
import { Collections, decodeMetadata, type DocumentStore } from '@app/shared/store';

/** The caller's user id; every boards op needs one (the gateway sets it from the JWT). */
export function callerId(ctx: CallContext): string {
  if (!ctx.userId) throw new AppError('UNAUTHORIZED');
  return ctx.userId;
}

/** The `boards` collection. */
export const boardsOf = (store: DocumentStore) => store.collection<BoardDoc>(Collections.boards);
/** The `groups` collection. */
export const groupsOf = (store: DocumentStore) => store.collection<GroupDoc>(Collections.groups);

/** What a board operation needs (DESIGN §9): read, write (cards, move) or owner (PUT, DELETE, share). */
export type BoardNeed = 'read' | 'write' | 'owner';

/** A board the caller may use, with the caller as access rules see it. */
export interface LoadedBoard {
  board: BoardDoc;
  principal: Principal;
}

/**
 * Loads board `boardId` for the caller (DESIGN §4, §5, §9), reading the board and the caller's
 * groups concurrently: missing or unreadable → 404 `BOARD_NOT_FOUND`; readable but lacking `need`
 * → 403 `FORBIDDEN`.
 */
export async function loadBoard(store: DocumentStore, ctx: CallContext, boardId: string, need: BoardNeed): Promise<LoadedBoard> {
  const userId = callerId(ctx);
  const [principal, board] = await Promise.all([loadPrincipal(store, userId), boardsOf(store).findOne({ _id: boardId })]);
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

/** The board object of the API (SPEC "Board"; DESIGN §9): metadata keys decoded, `is_owner` for `userId`. */
export function toBoard(doc: BoardDoc, userId: string): Board {
  const b: Board = {
    id: doc._id,
    name: doc.name,
    board_type: doc.board_type,
    columns: doc.columns,
    default_tags: doc.default_tags,
    metadata: decodeMetadata(doc.metadata),
    owner_id: doc.owner_id,
    created_at: doc.created_at,
    updated_at: doc.updated_at,
    is_owner: doc.owner_id === userId,
  };
  if (doc.activeSprintId !== undefined) b.activeSprintId = doc.activeSprintId;
  if (doc.groupId !== undefined) b.group_id = doc.groupId;
  if (doc.groupPermission !== undefined) b.permission = doc.groupPermission;
  return b;
}
