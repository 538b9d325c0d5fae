import { randomUUID } from 'node:crypto';
import { callerId, type Handler } from '@app/shared/bus';
import type { Group, GroupsOps } from '@app/shared/contracts';
import { runWrite, type GroupDoc, type GroupRole, type ServiceDeps } from '@app/shared/domain';
import { AppError, invalidField } from '@app/shared/errors';
import { Collections, type Doc, type Session } from '@app/shared/store';
import { groupsOf } from '../collections.js';

/** The group object of the API. */
function toGroup(doc: GroupDoc): Group {
  return { id: doc._id, name: doc.name, owner_id: doc.owner_id, members: doc.members, created_at: doc.created_at };
}

function groupNotFound(groupId: string): AppError {
  return new AppError('GROUP_NOT_FOUND', { details: { groupId } });
}

/** Roles that may manage a group's members (docs/architecture.md §5). */
export const MANAGERS: ReadonlySet<GroupRole> = new Set(['owner', 'admin']);

/**
 * Group `groupId` as its member `userId` sees it, with the caller's role. Missing, or the caller is
 * not a member → 404 `GROUP_NOT_FOUND` (never reveals existence).
 */
async function memberView(deps: ServiceDeps, groupId: string, userId: string, session?: Session): Promise<{ group: GroupDoc; role: GroupRole }> {
  const group = await groupsOf(deps.store).findOne({ _id: groupId }, session ? { session } : {});
  const role = group?.members.find((m) => m.user_id === userId)?.role;
  if (!group || !role) throw groupNotFound(groupId);
  return { group, role };
}

/**
 * `groups.create`: a new group whose only member is the caller, as `owner`. Group writes run
 * through {@link runWrite} for the Idempotency-Key; they emit no events, and record their
 * membership changes in the audit log (docs/audit.md).
 */
export function createGroup(deps: ServiceDeps): Handler<typeof GroupsOps.create> {
  return async ({ name }, ctx) => runWrite(deps, ctx, async ({ session, userId, now, audit }) => {
    const trimmed = name.trim();
    if (trimmed === '') throw invalidField('/name', 'must not be blank', 'required');
    const doc: GroupDoc = {
      _id: randomUUID(),
      name: trimmed,
      owner_id: userId,
      members: [{ user_id: userId, role: 'owner' }],
      created_at: now.toISOString(),
    };
    await groupsOf(deps.store).insertOne(doc, { session });
    audit({ action: 'group.create', target: `group:${doc._id}`, details: { name: trimmed } });
    return toGroup(doc);
  });
}

/** `groups.list`: the caller's groups, oldest first. */
export function listGroups(deps: ServiceDeps): Handler<typeof GroupsOps.list> {
  return async (_input, ctx) => {
    const userId = callerId(ctx);
    const docs = await groupsOf(deps.store).find({ 'members.user_id': userId }, { sort: { created_at: 1, _id: 1 } });
    return docs.map(toGroup);
  };
}

/** `groups.get`: members only. */
export function getGroup(deps: ServiceDeps): Handler<typeof GroupsOps.get> {
  return async ({ groupId }, ctx) => toGroup((await memberView(deps, groupId, callerId(ctx))).group);
}

/**
 * `groups.addMember`: adds `user_id` with `role` (default `member`), or changes the role of an
 * existing member. Owner or admin only (403 `FORBIDDEN`); the owner's role cannot change (400);
 * unknown user → 404 `USER_NOT_FOUND`.
 */
export function addMember(deps: ServiceDeps): Handler<typeof GroupsOps.addMember> {
  return async ({ groupId, user_id, role = 'member' }, ctx) => runWrite(deps, ctx, async ({ session, audit }) => {
    const { group, role: callerRole } = await memberView(deps, groupId, callerId(ctx), session);
    if (!MANAGERS.has(callerRole)) throw new AppError('FORBIDDEN', { message: 'Only the group owner or an admin may manage members', details: { groupId } });
    if (user_id === group.owner_id) throw invalidField('/user_id', 'the group owner\'s role cannot change', 'owner');
    const user = await deps.store.collection<Doc>(Collections.users).findOne({ _id: user_id }, { projection: { _id: 1 }, session });
    if (!user) throw new AppError('USER_NOT_FOUND', { details: { user_id } });
    const previous = group.members.find((m) => m.user_id === user_id)?.role;
    const members = [...group.members.filter((m) => m.user_id !== user_id), { user_id, role }];
    const after = await writeMembers(deps, group, members, session);
    audit({
      action: previous === undefined ? 'group.member_add' : 'group.member_role', target: `group:${groupId}`,
      details: { user_id, role, ...(previous !== undefined ? { previous_role: previous } : {}) },
    });
    return toGroup(after);
  });
}

/**
 * `groups.removeMember`: owner or admin, or a member removing itself (leaving). The owner cannot
 * be removed (400). Removing someone who is not a member is a no-op.
 */
export function removeMember(deps: ServiceDeps): Handler<typeof GroupsOps.removeMember> {
  return async ({ groupId, userId: target }, ctx) => runWrite(deps, ctx, async ({ session, userId, audit }) => {
    const { group, role } = await memberView(deps, groupId, userId, session);
    if (!MANAGERS.has(role) && target !== userId) {
      throw new AppError('FORBIDDEN', { message: 'Only the group owner or an admin may remove other members', details: { groupId } });
    }
    if (target === group.owner_id) throw invalidField('/userId', 'the group owner cannot be removed', 'owner');
    const after = await writeMembers(deps, group, group.members.filter((m) => m.user_id !== target), session);
    if (group.members.some((m) => m.user_id === target)) audit({ action: 'group.member_remove', target: `group:${groupId}`, details: { user_id: target } });
    return toGroup(after);
  });
}

/**
 * Replaces the member list, conditional on it being unchanged since `group` was read (no lost
 * update): the group changed meanwhile → 409 `CONFLICT` (retry); it vanished → 404.
 */
export async function writeMembers(deps: ServiceDeps, group: GroupDoc, members: GroupDoc['members'], session: Session): Promise<GroupDoc> {
  const groups = groupsOf(deps.store);
  const after = await groups.findOneAndUpdate({ _id: group._id, members: group.members }, { $set: { members } }, { returnDocument: 'after', session });
  if (after) return after;
  if (await groups.findOne({ _id: group._id }, { projection: { _id: 1 }, session })) {
    throw new AppError('CONFLICT', { message: 'The group\'s members changed meanwhile; retry', details: { groupId: group._id } });
  }
  throw groupNotFound(group._id);
}
