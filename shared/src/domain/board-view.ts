import type { Board } from '../contracts/boards.js';
import { decodeMetadata } from '../store/keys.js';
import type { BoardDoc } from './board.js';
import { actionView, columnsAsRead } from './columns.js';

/**
 * The board object of the API (docs/boards.md "Shapes"; docs/architecture.md §9): metadata keys decoded, `version` (1 when
 * absent: older data), `is_owner` for `userId`, column actions as {@link columnsAsRead} gives them,
 * each in ud's wire form ({@link actionView}), each column's 0-based `order`; ud's `BoardResponse`
 * fields `created_by`, `updated_by`, `is_active` (always true) and `group_permission` (the same as
 * `permission`, except for a caller who is a `reader` of the board's group: `permission` is then `r`).
 * Shared by the services that answer or emit a board
 * (boards; sprints, whose start-sprint repoints boards and emits `board.updated`).
 */
export function toBoard(doc: BoardDoc, userId: string, reader = false): Board {
  const b: Board = {
    id: doc._id,
    name: doc.name,
    board_type: doc.board_type,
    columns: columnsAsRead(doc.columns).map((c, order) => ({ ...c, actions: c.actions.map(actionView), order })),
    default_tags: doc.default_tags,
    metadata: decodeMetadata(doc.metadata),
    owner_id: doc.owner_id,
    created_at: doc.created_at,
    created_by: doc.created_by,
    updated_at: doc.updated_at,
    updated_by: doc.updated_by,
    is_active: true,
    version: doc.version ?? 1,
    is_owner: doc.owner_id === userId,
  };
  if (doc.activeSprintId !== undefined) b.activeSprintId = doc.activeSprintId;
  if (doc.groupId !== undefined) b.group_id = doc.groupId;
  if (doc.groupPermission !== undefined) {
    // `reader`: the caller is a reader of the board's group, so it reads even an `rw` share (docs/boards.md "Members").
    b.permission = reader && doc.owner_id !== userId ? 'r' : doc.groupPermission;
    b.group_permission = doc.groupPermission;
  }
  return b;
}
