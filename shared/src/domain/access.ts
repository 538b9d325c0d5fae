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
  /**
   * The scopes of a narrowed token's boards when one of them has default tags: a task is in reach
   * when one entry holds it (absent: `groupIds` and `ownTasks` alone decide).
   */
  reach?: readonly Reach[];
}

/**
 * One board's scope as a narrowed token reaches it (docs/architecture.md §5): the tasks the user
 * created (`own`) and the tasks of `groupIds`, that carry every tag of `tags` (the board's
 * default tags). A private board: `own` and every group of the user; a shared board: its group.
 */
export interface Reach {
  own: boolean;
  groupIds: readonly string[];
  tags: readonly string[];
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
 * those boards, the ones `p` can read remain; a card is a task in one of their scopes
 * (docs/architecture.md §5), which for a board shared with a group is that group's tasks, and for
 * a private board (or a shared board whose group the user left) every task its owner can read,
 * narrowed in both cases by the board's `default_tags` (a task must carry all of them; kept in
 * {@link Principal.reach} when a board has any).
 */
export async function narrowToBoards(store: DocumentStore, p: Principal, boardIds: readonly string[], session?: Session): Promise<Principal> {
  const boards = await store
    .collection<Shared & { _id: string; default_tags?: string[]; [key: string]: unknown }>(Collections.boards)
    .find({ _id: { $in: [...boardIds] } }, { projection: { _id: 1, owner_id: 1, groupId: 1, groupPermission: 1, default_tags: 1 }, ...(session ? { session } : {}) });
  const readable = boards.filter((b) => canReadBoard(p, b));
  const whole = (b: Shared) => b.groupId === undefined || !p.groupIds.includes(b.groupId);
  const wholeScope = readable.some(whole);
  const groupIds = wholeScope ? p.groupIds : p.groupIds.filter((g) => readable.some((b) => b.groupId === g));
  const readOnlyGroupIds = (p.readOnlyGroupIds ?? []).filter((g) => groupIds.includes(g));
  const tagged = readable.some((b) => (b.default_tags ?? []).length > 0);
  const reach: Reach[] = readable.map((b) =>
    whole(b) ? { own: true, groupIds: p.groupIds, tags: b.default_tags ?? [] } : { own: false, groupIds: [b.groupId!], tags: b.default_tags ?? [] });
  return {
    userId: p.userId, groupIds, ...(readOnlyGroupIds.length > 0 ? { readOnlyGroupIds } : {}), boardIds: readable.map((b) => b._id), ownTasks: wholeScope,
    ...(tagged ? { reach } : {}),
  };
}

/** True when `t` carries every tag of `tags` (a task read without its tags carries none). */
function carries(t: { tags?: readonly string[] }, tags: readonly string[]): boolean {
  return tags.length === 0 || (Array.isArray(t.tags) && tags.every((x) => t.tags!.includes(x)));
}

/** True when a narrowed token's board scopes hold `t` (always, for a principal without {@link Principal.reach}). */
function inReach(p: Principal, t: { created_by: string; groupId?: string; tags?: readonly string[] }): boolean {
  if (p.reach === undefined) return true;
  return p.reach.some((r) => ((r.own && t.created_by === p.userId) || (t.groupId !== undefined && r.groupIds.includes(t.groupId))) && carries(t, r.tags));
}

/** The filter form of {@link Principal.reach}: the tasks of any of its board scopes, `group` giving the clause of a scope's groups. */
function reachFilter(p: Principal, reach: readonly Reach[], group: (ids: string[]) => Filter): Filter {
  const or: Filter[] = [];
  for (const r of reach) {
    const who: Filter[] = r.own && p.ownTasks !== false ? [{ created_by: p.userId }] : [];
    const groups = r.groupIds.filter((g) => p.groupIds.includes(g));
    if (groups.length > 0) who.push(group(groups));
    if (who.length === 0) continue;
    const base: Filter = who.length === 1 ? who[0]! : { $or: who };
    or.push(r.tags.length > 0 ? { $and: [base, { tags: { $all: [...r.tags] } }] } : base);
  }
  return or.length === 0 ? NOTHING : or.length === 1 ? or[0]! : { $or: or };
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
  if (p.reach) return { deleted: false, ...reachFilter(p, p.reach, (ids) => ({ groupId: { $in: ids } })) };
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
  if (p.reach) return reachFilter(p, p.reach, (ids) => ({ groupId: { $in: ids }, groupPermission: 'rw' }));
  const or: Filter[] = p.ownTasks === false ? [] : [{ created_by: p.userId }];
  if (p.groupIds.length > 0) or.push({ groupId: { $in: p.groupIds }, groupPermission: 'rw' });
  return or.length === 0 ? NOTHING : { $or: or };
}

/**
 * True when the principal can read the task (owner, or member of its group), within a narrowed
 * token's board scopes (their default tags: give the task's `tags`, a task read without them is
 * out of such a token's reach).
 */
export function canReadTask(p: Principal, t: Pick<TaskDoc, 'created_by' | 'groupId'> & { tags?: readonly string[] }): boolean {
  return (ownsReach(p, t.created_by) || (t.groupId !== undefined && p.groupIds.includes(t.groupId))) && inReach(p, t);
}

/** True when the principal can write the task (owner, or member of its group with `rw`), within a narrowed token's board scopes. */
export function canWriteTask(p: Principal, t: Pick<TaskDoc, 'created_by' | 'groupId' | 'groupPermission'> & { tags?: readonly string[] }): boolean {
  return (ownsReach(p, t.created_by) || (t.groupId !== undefined && t.groupPermission === 'rw' && writesThrough(p, t.groupId))) && inReach(p, t);
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
