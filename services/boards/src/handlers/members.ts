import { randomUUID } from 'node:crypto';
import type { Handler } from '@app/shared/bus';
import type { BoardMember, BoardsOps } from '@app/shared/contracts';
import { boardEvent, runWrite, type BoardDoc, type GroupDoc, type GroupRole, type ServiceDeps, type WriteUnit } from '@app/shared/domain';
import { AppError, invalidField } from '@app/shared/errors';
import { Collections, type Doc } from '@app/shared/store';
import { groupsOf } from '../collections.js';
import { recordShareSync, settleShareSync } from '../share-sync.js';
import { ownedBoard, peopleOf, writeBoard } from './boards.js';
import { MANAGERS, writeMembers } from './groups.js';

/**
 * A board's members, one call per gesture (docs/boards.md "Members"), on the groups and share
 * model: the members are those of the group the board is shared with. The first invitation of a
 * board shared with no group makes one (owned by the board's owner) and shares the board with it.
 * A member's permission is its role in that group: `rw` → `member`, `r` → `reader` (a reader
 * never writes through the group, whatever the share says); the share itself is `rw`, so that
 * each member's role decides. Owner only (403 `FORBIDDEN`; 404 `BOARD_NOT_FOUND` for a board the
 * caller cannot read). Every answer is the board's people as `GET /boards/{id}/members` gives them.
 */

/** The group role that gives `permission` on the board, keeping an admin's role when it may write. */
function roleFor(permission: 'r' | 'rw', current: GroupRole | undefined): GroupRole {
  if (permission === 'r') return 'reader';
  return current === 'admin' ? 'admin' : 'member';
}

/** 403 `FORBIDDEN` unless `userId` manages `group` (its owner or an admin). */
function assertManages(group: GroupDoc, userId: string, boardId: string): void {
  const role = group.members.find((m) => m.user_id === userId)?.role;
  if (!role || !MANAGERS.has(role)) {
    throw new AppError('FORBIDDEN', { message: 'The board is shared with a group you do not manage; ask its owner', details: { boardId, groupId: group._id } });
  }
}

/**
 * The board's group, made when the board has none, with `share: true` when the board must then be
 * shared with it `rw` (a new group, or a share that was `r`: every `member` then becomes a
 * `reader`, so nobody gains a write). The board's owner must manage the group (owner or admin),
 * else 403 `FORBIDDEN`.
 */
async function boardGroup(w: WriteUnit, deps: ServiceDeps, board: BoardDoc): Promise<{ group: GroupDoc; share: boolean }> {
  const groups = groupsOf(deps.store);
  const group = board.groupId === undefined ? null : await groups.findOne({ _id: board.groupId }, { session: w.session });
  if (group) {
    assertManages(group, w.userId, board._id);
    if (board.groupPermission === 'rw') return { group, share: false };
    const readers = group.members.map((m) => (m.role === 'member' ? { ...m, role: 'reader' as const } : m));
    return { group: await writeMembers(deps, group, readers, w.session), share: true };
  }
  const made: GroupDoc = { _id: randomUUID(), name: `${board.name} (board members)`, owner_id: w.userId, members: [{ user_id: w.userId, role: 'owner' }], created_at: w.now.toISOString() };
  await groups.insertOne(made, { session: w.session });
  return { group: made, share: true };
}

/**
 * Gives `userId` `permission` in the board's group (added when not a member), sharing the board
 * with the group first where {@link boardGroup} says so. The group owner's role never changes
 * (400 naming `field`). Answers what changed.
 */
async function setMember(w: WriteUnit, deps: ServiceDeps, board: BoardDoc, userId: string, permission: 'r' | 'rw', field: string): Promise<MemberChange> {
  const { group, share } = await boardGroup(w, deps, board);
  if (userId === group.owner_id) throw invalidField(field, "is the owner of the board's group; their permission cannot change", 'owner');
  const current = group.members.find((m) => m.user_id === userId)?.role;
  const role = roleFor(permission, current);
  if (role !== current) await writeMembers(deps, group, [...group.members.filter((m) => m.user_id !== userId), { user_id: userId, role }], w.session);
  return share ? { shareWith: group._id } : role !== current ? 'members' : 'none';
}

/** What a member change did: nothing, the group's members, or also the board's share (with that group). */
type MemberChange = 'none' | 'members' | { shareWith: string };

/**
 * Runs a member change in one write unit. Any change writes the board too: a new version, so a
 * member's cached copy of the board (whose `permission` depends on its role) is read again, and
 * `board.updated`, or `board.shared` when the change shared the board with its group (the cards
 * then follow). Answers the board's people.
 */
async function memberWrite(deps: ServiceDeps, ctx: Parameters<Handler<typeof BoardsOps.members>>[1], boardId: string, fn: (w: WriteUnit, board: BoardDoc) => Promise<MemberChange>): Promise<BoardMember[]> {
  const out = await runWrite(deps, ctx, async (w) => {
    const { board } = await ownedBoard(w, deps, ctx, boardId);
    const change = await fn(w, board);
    if (change === 'none') return peopleOf(deps.store, board, w.session);
    const share = typeof change === 'object' ? { groupId: change.shareWith, groupPermission: 'rw' as const, board_type: 'shared' as const } : {};
    const written = await writeBoard(w, deps, board, { $set: { ...share, updated_at: w.now.toISOString(), updated_by: w.userId } });
    if (typeof change === 'object') await recordShareSync(deps.store, w.session, board._id, change.shareWith, 'rw', w.now);
    w.emit(boardEvent(typeof change === 'object' ? 'board.shared' : 'board.updated', written));
    return peopleOf(deps.store, { ...board, ...share }, w.session);
  });
  // also on a replayed answer (Idempotency-Key): a retry completes what a failed first run left
  // the board read says `cards_sharing: "pending"` while the cards' update goes on past the wait
  await settleShareSync(deps, boardId);
  return out;
}

/**
 * `boards.addMember` (`POST /boards/{id}/members {username, permission}`): invites a user by name,
 * or sets the permission of one who is already a member. Unknown name → 404 `USER_NOT_FOUND`;
 * the board's owner → 400 naming `/username`.
 */
export function addBoardMember(deps: ServiceDeps): Handler<typeof BoardsOps.addMember> {
  return async ({ boardId, username, permission }, ctx) =>
    memberWrite(deps, ctx, boardId, async (w, board) => {
      const user = await deps.store.collection<Doc & { username: string }>(Collections.users).findOne({ username }, { projection: { _id: 1 }, session: w.session });
      if (!user) throw new AppError('USER_NOT_FOUND', { message: `No user is called “${username}”`, details: { username } });
      if (user._id === board.owner_id) throw invalidField('/username', 'is the owner of this board', 'owner');
      return setMember(w, deps, board, user._id, permission, '/username');
    });
}

/** `boards.updateMember` (`PATCH /boards/{id}/members/{userId} {permission}`): a member's new permission; not a member → 404 `USER_NOT_FOUND`. */
export function updateBoardMember(deps: ServiceDeps): Handler<typeof BoardsOps.updateMember> {
  return async ({ boardId, userId, permission }, ctx) =>
    memberWrite(deps, ctx, boardId, async (w, board) => {
      const current = board.groupId === undefined ? null : await groupsOf(deps.store).findOne({ _id: board.groupId }, { projection: { members: 1 }, session: w.session });
      if (!current?.members.some((m) => m.user_id === userId)) {
        throw new AppError('USER_NOT_FOUND', { message: 'That user is not a member of this board', details: { boardId, userId } });
      }
      return setMember(w, deps, board, userId, permission, '/userId');
    });
}

/**
 * `boards.removeMember` (`DELETE /boards/{id}/members/{userId}`): removes the user from the board's
 * group (it no longer sees the board or its cards); a user who is no member is a no-op. The
 * group's owner cannot be removed (400 naming `/userId`).
 */
export function removeBoardMember(deps: ServiceDeps): Handler<typeof BoardsOps.removeMember> {
  return async ({ boardId, userId }, ctx) =>
    memberWrite(deps, ctx, boardId, async (w, board) => {
      const group = board.groupId === undefined ? null : await groupsOf(deps.store).findOne({ _id: board.groupId }, { session: w.session });
      if (!group || !group.members.some((m) => m.user_id === userId)) return 'none';
      if (userId === group.owner_id) throw invalidField('/userId', "is the owner of the board's group and cannot be removed", 'owner');
      assertManages(group, w.userId, boardId);
      await writeMembers(deps, group, group.members.filter((m) => m.user_id !== userId), w.session);
      return 'members';
    });
}
