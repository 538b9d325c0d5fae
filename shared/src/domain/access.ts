import { currentGrant } from '../bus/grant.js';
import type { TokenGrant } from '../contracts/tokens.js';
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

/**
 * The caller as access rules see it: its id and the groups it belongs to (read per request).
 * A caller using an access token narrowed to some boards (docs/auth.md "Access tokens") also
 * carries `boardIds` (the only boards it reaches) and `ownTasks: false` when none of those boards
 * reaches the tasks it created outside their groups; `groupIds` then holds only those boards' groups.
 */
export interface Principal {
  userId: string;
  groupIds: string[];
  /** The groups of `groupIds` in which the caller is a `reader`: their shares never let it write. */
  readOnlyGroupIds?: string[];
  /** The boards a narrowed token reaches; absent: every board the user can. */
  boardIds?: readonly string[];
  /** False when the tasks the user created are out of reach (a narrowed token); absent means true. */
  ownTasks?: boolean;
}

/** True when the caller may write what is shared `rw` with group `groupId` (a member that is no reader). */
function writesThrough(p: Principal, groupId: string): boolean {
  return p.groupIds.includes(groupId) && !(p.readOnlyGroupIds ?? []).includes(groupId);
}

/**
 * Loads the caller's group memberships and the groups it only reads in (role `reader`;
 * docs/boards.md "Members"), read per request, never frozen into the JWT (docs/architecture.md
 * §5), narrowed by the access token's board list when the request carries one for this user
 * (`grant`, default: the current request's; see {@link narrowToBoards}).
 */
export async function loadPrincipal(store: DocumentStore, userId: string, session?: Session, grant: TokenGrant | undefined = currentGrant()): Promise<Principal> {
  const groups = await store
    .collection<GroupDoc>(Collections.groups)
    .find({ 'members.user_id': userId }, { projection: { _id: 1, members: 1 }, ...(session ? { session } : {}) });
  const readOnly = groups.filter((g) => g.members?.some((m) => m.user_id === userId && m.role === 'reader')).map((g) => g._id);
  const principal: Principal = { userId, groupIds: groups.map((g) => g._id), ...(readOnly.length > 0 ? { readOnlyGroupIds: readOnly } : {}) };
  if (grant?.boardIds === undefined || grant.userId !== userId) return principal;
  return narrowToBoards(store, principal, grant.boardIds, session);
}

/**
 * `p` narrowed to the boards `boardIds` and their cards (docs/auth.md "Access tokens"): of
 * those boards, the ones `p` can read remain; a card is a task in one of their scopes, which
 * for a board shared with a group is that group's tasks, and for a private board (or a shared
 * board whose group the user left) every task its owner can read. A board's default tags do not
 * narrow a token further.
 */
export async function narrowToBoards(store: DocumentStore, p: Principal, boardIds: readonly string[], session?: Session): Promise<Principal> {
  const boards = await store
    .collection<Shared & { _id: string; [key: string]: unknown }>(Collections.boards)
    .find({ _id: { $in: [...boardIds] } }, { projection: { _id: 1, owner_id: 1, groupId: 1, groupPermission: 1 }, ...(session ? { session } : {}) });
  const readable = boards.filter((b) => canReadBoard(p, b));
  const wholeScope = readable.some((b) => b.groupId === undefined || !p.groupIds.includes(b.groupId));
  const groupIds = wholeScope ? p.groupIds : p.groupIds.filter((g) => readable.some((b) => b.groupId === g));
  const readOnlyGroupIds = (p.readOnlyGroupIds ?? []).filter((g) => groupIds.includes(g));
  return { userId: p.userId, groupIds, ...(readOnlyGroupIds.length > 0 ? { readOnlyGroupIds } : {}), boardIds: readable.map((b) => b._id), ownTasks: wholeScope };
}

/**
 * True when the caller `userId` created the task (`createdBy`) and no access token narrows it to
 * some boards: a handler may then skip loading its groups (an owner reads and writes its tasks).
 */
export function ownsOutright(userId: string, createdBy: string): boolean {
  return createdBy === userId && currentGrant()?.boardIds === undefined;
}

/** Matches no document (a narrowed token that reaches no task). */
const NOTHING: Filter = { _id: { $in: [] } };

/**
 * Filter of every live task the principal can read (docs/architecture.md §5): its own, and those of its groups.
 * The server adds it to every list read; query text can only narrow it.
 */
export function readableTasksFilter(p: Principal): Filter {
  const or: Filter[] = p.ownTasks === false ? [] : [{ created_by: p.userId }];
  if (p.groupIds.length > 0) or.push({ groupId: { $in: p.groupIds } });
  return or.length === 0 ? { deleted: false, ...NOTHING } : { deleted: false, $or: or };
}

/** True when the principal reaches the tasks it created (not so for a token narrowed to group boards). */
function ownsReach(p: Principal, createdBy: string): boolean {
  return createdBy === p.userId && p.ownTasks !== false;
}

/**
 * Filter of the tasks the principal can write (docs/architecture.md §5), as {@link canWriteTask}
 * decides one: its own (when it reaches them), and those of its groups shared `rw`. Add the live
 * and scope filters beside it.
 */
export function writableTasksFilter(p: Principal): Filter {
  const or: Filter[] = p.ownTasks === false ? [] : [{ created_by: p.userId }];
  if (p.groupIds.length > 0) or.push({ groupId: { $in: p.groupIds }, groupPermission: 'rw' });
  return or.length === 0 ? NOTHING : { $or: or };
}

/** True when the principal can read the task (owner, or member of its group). */
export function canReadTask(p: Principal, t: Pick<TaskDoc, 'created_by' | 'groupId'>): boolean {
  return ownsReach(p, t.created_by) || (t.groupId !== undefined && p.groupIds.includes(t.groupId));
}

/** True when the principal can write the task (owner, or member of its group with `rw`). */
export function canWriteTask(p: Principal, t: Pick<TaskDoc, 'created_by' | 'groupId' | 'groupPermission'>): boolean {
  return ownsReach(p, t.created_by) || (t.groupId !== undefined && t.groupPermission === 'rw' && writesThrough(p, t.groupId));
}

/** The sharing fields a board or task carries (`_id` for a board: a narrowed principal reaches listed boards only). */
export interface Shared {
  _id?: string;
  owner_id: string;
  groupId?: string;
  groupPermission?: Permission;
}

/** False when the principal is narrowed to boards that do not include `b`. */
function withinBoards(p: Principal, b: Shared): boolean {
  return p.boardIds === undefined || (b._id !== undefined && p.boardIds.includes(b._id));
}

/** Board read access: the owner, or a member of the group the board is shared with. */
export function canReadBoard(p: Principal, b: Shared): boolean {
  return withinBoards(p, b) && (b.owner_id === p.userId || (b.groupId !== undefined && p.groupIds.includes(b.groupId)));
}

/** Board write access (cards, move, sprint pointer): owner, or group member with `rw` (docs/architecture.md §9). */
export function canWriteBoard(p: Principal, b: Shared): boolean {
  return withinBoards(p, b) && (b.owner_id === p.userId || (b.groupId !== undefined && b.groupPermission === 'rw' && writesThrough(p, b.groupId)));
}
