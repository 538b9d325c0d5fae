import type { DocumentStore, Filter, Session } from '../store/port.js';
import { Collections } from '../store/collections.js';
import type { Permission, TaskDoc } from './task.js';

/** Role of a member in a group (docs/architecture.md §5). */
export type GroupRole = 'owner' | 'admin' | 'member';

/** A group as stored in `groups`; members are embedded. */
export interface GroupDoc {
  _id: string;
  name: string;
  owner_id: string;
  members: Array<{ user_id: string; role: GroupRole }>;
  created_at: string;
  [key: string]: unknown;
}

/** The caller as access rules see it: its id and the groups it belongs to (read per request). */
export interface Principal {
  userId: string;
  groupIds: string[];
}

/** Loads the caller's group memberships (docs/architecture.md §5: read per request, never frozen into the JWT). */
export async function loadPrincipal(store: DocumentStore, userId: string, session?: Session): Promise<Principal> {
  const groups = await store
    .collection<GroupDoc>(Collections.groups)
    .find({ 'members.user_id': userId }, { projection: { _id: 1 }, ...(session ? { session } : {}) });
  return { userId, groupIds: groups.map((g) => g._id) };
}

/**
 * Filter of every live task the principal can read (docs/architecture.md §5): its own, and those of its groups.
 * The server adds it to every list read; query text can only narrow it.
 */
export function readableTasksFilter(p: Principal): Filter {
  const or: Filter[] = [{ created_by: p.userId }];
  if (p.groupIds.length > 0) or.push({ groupId: { $in: p.groupIds } });
  return { deleted: false, $or: or };
}

/** True when the principal can read the task (owner, or member of its group). */
export function canReadTask(p: Principal, t: Pick<TaskDoc, 'created_by' | 'groupId'>): boolean {
  return t.created_by === p.userId || (t.groupId !== undefined && p.groupIds.includes(t.groupId));
}

/** True when the principal can write the task (owner, or member of its group with `rw`). */
export function canWriteTask(p: Principal, t: Pick<TaskDoc, 'created_by' | 'groupId' | 'groupPermission'>): boolean {
  return (
    t.created_by === p.userId ||
    (t.groupId !== undefined && t.groupPermission === 'rw' && p.groupIds.includes(t.groupId))
  );
}

/** The sharing fields a board or task carries. */
export interface Shared {
  owner_id: string;
  groupId?: string;
  groupPermission?: Permission;
}

/** Board read access: the owner, or a member of the group the board is shared with. */
export function canReadBoard(p: Principal, b: Shared): boolean {
  return b.owner_id === p.userId || (b.groupId !== undefined && p.groupIds.includes(b.groupId));
}

/** Board write access (cards, move, sprint pointer): owner, or group member with `rw` (docs/architecture.md §9). */
export function canWriteBoard(p: Principal, b: Shared): boolean {
  return b.owner_id === p.userId || (b.groupId !== undefined && b.groupPermission === 'rw' && p.groupIds.includes(b.groupId));
}
