import { randomUUID } from 'node:crypto';
import type { Handler } from '@app/shared/bus';
import type { BoardMember, BoardsOps } from '@app/shared/contracts';
import { boardEvent, runWrite, type BoardDoc, type GroupDoc, type GroupRole, type ServiceDeps, type WriteUnit } from '@app/shared/domain';
import { AppError, invalidField } from '@app/shared/errors';
import { Collections, type Doc } from '@app/shared/store';
import { groupsOf } from '../board-access.js';
import { completeShareSync, recordShareSync } from '../share-sync.js';
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
 * The board's group, made and shared when the board has none, and the share raised to `rw` when
 * it is `r` (every `member` then becomes a `reader`, so nobody gains a write). The board's owner
 * must manage the group (owner or admin), else 403 `FORBIDDEN`. Returns the board and group as
 * written in `w`'s transaction.
 */
async function boardGroup(w: WriteUnit, deps: ServiceDeps, board: BoardDoc): Promise<{ board: BoardDoc; group: GroupDoc }> {
  const groups = groupsOf(deps.store);
  let group = board.groupId === undefined ? null : await groups.findOne({ _id: board.groupId }, { session: w.session });
  if (group) {
    assertManages(group, w.userId, board._id);
    if (board.groupPermission === 'rw') return { board, group };
    group = await writeMembers(deps, group, group.members.map((m) => (m.role === 'member' ? { ...m, role: 'reader' as const } : m)), w.session);
  } else {
    group = { _id: randomUUID(), name: `${board.name} (board members)`, owner_id: w.userId, members: [{ user_id: w.userId, role: 'owner' }], created_at: w.now.toISOString() };
    await groups.insertOne(group, { session: w.session });
  }
  const shared = await writeBoard(w, deps, board, {
    $set: { groupId: group._id, groupPermission: 'rw', board_type: 'shared', updated_at: w.now.toISOString(), updated_by: w.userId },
  });
  await recordShareSync(deps.store, w.session, board._id, group._id, 'rw', w.now);
  w.emit(boardEvent('board.shared', shared));
  return { board: { ...board, groupId: group._id, groupPermission: 'rw', board_type: 'shared' }, group };
}

/** Gives `userId` `permission` in `group` (added when not a member); its owner's role never changes (400). */
async function setMember(w: WriteUnit, deps: ServiceDeps, group: GroupDoc, userId: string, permission: 'r' | 'rw', field: string): Promise<void> {
  if (userId === group.owner_id) throw invalidField(field, "is the owner of the board's group; their permission cannot change", 'owner');
  const current = group.members.find((m) => m.user_id === userId)?.role;
  const role = roleFor(permission, current);
  if (role === current) return;
  await writeMembers(deps, group, [...group.members.filter((m) => m.user_id !== userId), { user_id: userId, role }], w.session);
}

/** Runs a member change in one write unit, then completes the sharing of the board's cards (a first share). */
async function memberWrite(deps: ServiceDeps, ctx: Parameters<Handler<typeof BoardsOps.members>>[1], boardId: string, fn: (w: WriteUnit, board: BoardDoc) => Promise<BoardDoc>): Promise<BoardMember[]> {
  const out = await runWrite(deps, ctx, async (w) => {
    const { board } = await ownedBoard(w, deps, ctx, boardId);
    return peopleOf(deps.store, await fn(w, board), w.session);
  });
  // also on a replayed answer (Idempotency-Key): a retry completes what a failed first run left
  await completeShareSync(deps, boardId);
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
      const { board: shared, group } = await boardGroup(w, deps, board);
      await setMember(w, deps, group, user._id, permission, '/username');
      return shared;
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
      const { board: shared, group } = await boardGroup(w, deps, board);
      await setMember(w, deps, group, userId, permission, '/userId');
      return shared;
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
      if (!group || !group.members.some((m) => m.user_id === userId)) return board;
      if (userId === group.owner_id) throw invalidField('/userId', "is the owner of the board's group and cannot be removed", 'owner');
      assertManages(group, w.userId, boardId);
      await writeMembers(deps, group, group.members.filter((m) => m.user_id !== userId), w.session);
      return board;
    });
}
