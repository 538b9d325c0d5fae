import type { ColumnAction } from '../query/materialize.js';
import type { Doc, Filter } from '../store/port.js';
import type { Permission } from './task.js';
import type { Principal } from './access.js';

/**
 * One enter or exit action of a column, as stored (docs/architecture.md §7). Defined beside
 * `materializeActions` (query/materialize.ts), which derives a column's actions from its query.
 */
export type { ColumnAction };

/** A column definition as stored and returned (docs/architecture.md §7). */
export interface ColumnDef {
  /** `col-<slug>`, unique on the board, stable across writes. */
  id: string;
  name: string;
  /** Column query text (query language, docs/architecture.md §6); may be only an ORDER BY, or empty. */
  query: string;
  actions: ColumnAction[];
  /** Work-in-progress limit (docs/boards.md "WIP limits"). */
  wip_limit?: number;
  /** What a move or card create into the column at its limit does; absent = `warn`. */
  wip_policy?: 'warn' | 'block';
}

/** A board as stored in `boards`. `metadata` keys are escaped like task metadata. */
export interface BoardDoc extends Doc {
  _id: string;
  name: string;
  board_type: 'private' | 'shared';
  owner_id: string;
  columns: ColumnDef[];
  default_tags: string[];
  metadata: Record<string, unknown>;
  activeSprintId?: string;
  /** Set by share: the group the board is shared with and its permission. */
  groupId?: string;
  groupPermission?: Permission;
  created_at: string;
  created_by: string;
  updated_at: string;
  updated_by: string;
  /** 1 on create, +1 on every committed change; absent on older data, which counts as 1. */
  version?: number;
}

/**
 * The set of tasks a board shows (docs/architecture.md §5), as a store filter, for a caller who can read the
 * board: a shared board with a group → the live tasks of that group, and only the caller's own
 * ones when the caller is not (or no longer) a member, as for the owner who left the group: a
 * board never shows a task its caller cannot read; otherwise (private, or shared with no group
 * yet) → every live task the caller can read. `default_tags` then narrow it (a task must carry
 * all of them).
 */
export function boardScopeFilter(board: Pick<BoardDoc, 'board_type' | 'groupId' | 'default_tags'>, p: Principal): Filter {
  const groupId = board.board_type === 'shared' ? board.groupId : undefined;
  const base: Filter =
    groupId !== undefined
      ? { deleted: false, groupId, ...(p.groupIds.includes(groupId) ? {} : { created_by: p.userId }) }
      : { deleted: false, $or: [{ created_by: p.userId }, ...(p.groupIds.length ? [{ groupId: { $in: p.groupIds } }] : [])] };
  if (board.default_tags.length > 0) return { $and: [base, { tags: { $all: board.default_tags } }] };
  return base;
}
