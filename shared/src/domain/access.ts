import type { DocumentStore, Filter, Session } from '../store/port.js';
import { Collections } from '../store/collections.js';
import type { Permission, TaskDoc } from './task.js';

/**
 * Role of a member in a group (docs/boards.md "Groups", "Members"): `owner` and `admin` manage
 * the members; a `reader` reads what is shared with the group but never writes it, whatever the
 * share's permission.
 */
export type GroupRole = 'owner' | 'admin' | 'member' | 'reader';

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
  /** The groups of `groupIds` in which the caller is a `reader`: their shares never let it write. */
  readOnlyGroupIds?: string[];
}

/** True when the caller may write what is shared `rw` with group `groupId` (a member that is no reader). */
function writesThrough(p: Principal, groupId: string): boolean {
  return p.groupIds.includes(groupId) && !(p.readOnlyGroupIds ?? []).includes(groupId);
}

/**
 * Loads the caller's group memberships and the groups it only reads in (role `reader`); read per
 * request, never frozen into the JWT (docs/boards.md "Groups").
 */
export async function loadPrincipal(store: DocumentStore, userId: string, session?: Session): Promise<Principal> {
  const groups = await store
    .collection<GroupDoc>(Collections.groups)
    .find({ 'members.user_id': userId }, { projection: { _id: 1, members: 1 }, ...(session ? { session } : {}) });
  const readOnly = groups.filter((g) => g.members?.some((m) => m.user_id === userId && m.role === 'reader')).map((g) => g._id);
  return { userId, groupIds: groups.map((g) => g._id), ...(readOnly.length > 0 ? { readOnlyGroupIds: readOnly } : {}) };
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
    (t.groupId !== undefined && t.groupPermission === 'rw' && writesThrough(p, t.groupId))
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
  return b.owner_id === p.userId || (b.groupId !== undefined && b.groupPermission === 'rw' && writesThrough(p, b.groupId));
}
