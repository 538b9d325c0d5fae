import type { BoardDoc, GroupDoc } from '@app/shared/domain';
import { Collections, type DocumentStore } from '@app/shared/store';

/** The `boards` collection. */
export const boardsOf = (store: DocumentStore) => store.collection<BoardDoc>(Collections.boards);
/** The `groups` collection. */
export const groupsOf = (store: DocumentStore) => store.collection<GroupDoc>(Collections.groups);

