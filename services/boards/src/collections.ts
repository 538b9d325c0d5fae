import type { BoardDoc, GroupDoc } from '@app/shared/domain';
import { Collections, type DocumentStore } from '@app/shared/store';

// The boards service's collections (the access rules are @app/shared/domain's access.ts).

/** The `boards` collection. */
export const boardsOf = (store: DocumentStore) => store.collection<BoardDoc>(Collections.boards);
/** The `groups` collection. */
export const groupsOf = (store: DocumentStore) => store.collection<GroupDoc>(Collections.groups);

