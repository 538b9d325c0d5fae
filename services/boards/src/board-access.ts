import type { Board } from '@app/shared/contracts';
import type { BoardDoc, GroupDoc } from '@app/shared/domain';
import { Collections, decodeMetadata, type DocumentStore } from '@app/shared/store';

/** The `boards` collection. */
export const boardsOf = (store: DocumentStore) => store.collection<BoardDoc>(Collections.boards);
/** The `groups` collection. */
export const groupsOf = (store: DocumentStore) => store.collection<GroupDoc>(Collections.groups);

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
    version: doc.version ?? 1,
    is_owner: doc.owner_id === userId,
  };
  if (doc.activeSprintId !== undefined) b.activeSprintId = doc.activeSprintId;
  if (doc.groupId !== undefined) b.group_id = doc.groupId;
  if (doc.groupPermission !== undefined) b.permission = doc.groupPermission;
  return b;
}
