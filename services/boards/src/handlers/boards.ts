import { randomUUID } from 'node:crypto';
import { callerId, type Handler } from '@app/shared/bus';
import type { BoardsOps } from '@app/shared/contracts';
import {
  DEFAULT_COLUMNS, canReadTask, distinct, loadBoard, loadPrincipal, normalizeColumns, queryActions,
  type BoardDoc, type Principal, type ServiceDeps, type TaskDoc,
} from '@app/shared/domain';
import { AppError, invalidField } from '@app/shared/errors';
import { Collections, encodeMetadata, escapeKey, type DocumentStore, type Filter, type Session } from '@app/shared/store';
import { boardsOf, toBoard } from '../board-access.js';

/** A board name: trimmed, not blank. */
function boardName(name: string): string {
  const trimmed = name.trim();
  if (trimmed === '') throw invalidField('/name', 'must not be blank', 'required');
  return trimmed;
}

/**
 * `boards.create` (SPEC "Board lifecycle"): the caller owns the new board. Without `columns` the
 * board gets {@link DEFAULT_COLUMNS}; column ids are backfilled and actions materialized.
 */
export function createBoard({ store, clock }: ServiceDeps): Handler<typeof BoardsOps.create> {
  return async (input, ctx) => {
    const userId = callerId(ctx);
    const at = clock.now().toISOString();
    const defaultTags = distinct(input.default_tags ?? []);
    const doc: BoardDoc = {
      _id: randomUUID(),
      name: boardName(input.name),
      board_type: input.board_type,
      owner_id: userId,
      columns: normalizeColumns(input.columns ?? DEFAULT_COLUMNS),
      default_tags: defaultTags,
      metadata: encodeMetadata(input.metadata),
      created_at: at,
      created_by: userId,
      updated_at: at,
      updated_by: userId,
    };
    await boardsOf(store).insertOne(doc);
    return toBoard(doc, userId);
  };
}

/** `boards.list`: boards the caller owns, and boards shared with its groups; each oldest first. */
export function listBoards({ store }: ServiceDeps): Handler<typeof BoardsOps.list> {
  return async (_input, ctx) => {
    const userId = callerId(ctx);
    const { groupIds } = await loadPrincipal(store, userId);
    const sort = { created_at: 1, _id: 1 } as const;
    const [owned, shared] = await Promise.all([
      boardsOf(store).find({ owner_id: userId }, { sort }),
      groupIds.length === 0 ? [] : boardsOf(store).find({ groupId: { $in: groupIds }, owner_id: { $ne: userId } }, { sort }),
    ]);
    return { owned_boards: owned.map((b) => toBoard(b, userId)), shared_boards: shared.map((b) => toBoard(b, userId)) };
  };
}

/** `boards.get`: any board the caller can read. */
export function getBoard({ store }: ServiceDeps): Handler<typeof BoardsOps.get> {
  return async ({ boardId }, ctx) => toBoard((await loadBoard(store, callerId(ctx), boardId, 'read')).board, callerId(ctx));
}

/**
 * `boards.update` (owner only; DESIGN §9): only carried fields change, `columns` replaces the
 * whole list and `metadata` the whole metadata, `activeSprintId: ""` clears the pointer. Columns
 * are re-materialized whenever `columns` or `default_tags` is carried. ONE conditional write: when
 * it depends on the stored columns or default_tags, they must be unchanged since the read, else
 * 409 `CONFLICT` (retry).
 */
export function updateBoard({ store, clock }: ServiceDeps): Handler<typeof BoardsOps.update> {
  return async ({ boardId, ...body }, ctx) => {
    const userId = callerId(ctx);
    const { board, principal } = await loadBoard(store, userId, boardId, 'owner');
    const $set: Record<string, unknown> = { updated_at: clock.now().toISOString(), updated_by: userId };
    const $unset: Record<string, ''> = {};
    const unchanged: Filter = {};
    if (body.name !== undefined) $set.name = boardName(body.name);
    if (body.metadata !== undefined) $set.metadata = encodeMetadata(body.metadata);
    if (body.columns !== undefined || body.default_tags !== undefined) {
      const defaultTags = body.default_tags === undefined ? board.default_tags : distinct(body.default_tags);
      if (body.default_tags === undefined) unchanged.default_tags = board.default_tags;
      else $set.default_tags = defaultTags;
      if (body.columns === undefined) unchanged.columns = board.columns;
      $set.columns = normalizeColumns(body.columns ?? board.columns, board.columns);
    }
    if (body.activeSprintId === '') $unset.activeSprintId = '';
    else if (body.activeSprintId !== undefined) $set.activeSprintId = await openSprintId(store, principal, body.activeSprintId);

    const update = Object.keys($unset).length > 0 ? { $set, $unset } : { $set };
    const after = await boardsOf(store).findOneAndUpdate({ _id: boardId, owner_id: userId, ...unchanged }, update, { returnDocument: 'after' });
    if (after) return toBoard(after, userId);
    if (await boardsOf(store).findOne({ _id: boardId }, { projection: { _id: 1 } })) {
      throw new AppError('CONFLICT', { message: 'The board\'s columns or default_tags changed meanwhile; read it again and retry', details: { boardId } });
    }
    throw new AppError('BOARD_NOT_FOUND', { details: { boardId } });
  };
}

/**
 * Checks a new `activeSprintId`: a live sprint task (`app.type = sprint`) the caller can read,
 * still open (status not `done`); else 400 `VALIDATION_FAILED` naming `/activeSprintId`.
 */
async function openSprintId(store: DocumentStore, p: Principal, sprintId: string): Promise<string> {
  const sprint = await store.collection<TaskDoc>(Collections.tasks).findOne({ _id: sprintId, deleted: false });
  if (!sprint || !canReadTask(p, sprint) || sprint.metadata[escapeKey('app.type')] !== 'sprint') {
    throw invalidField('/activeSprintId', `no sprint task with id "${sprintId}" that you can read`, 'not_found');
  }
  if (sprint.status === 'done') throw invalidField('/activeSprintId', `sprint "${sprintId}" is closed`, 'closed');
  return sprintId;
}

/** `boards.remove` (owner only): deletes the board; its tasks are kept (they keep their `boardId`). */
export function removeBoard({ store }: ServiceDeps): Handler<typeof BoardsOps.remove> {
  return async ({ boardId }, ctx) => {
    await loadBoard(store, callerId(ctx), boardId, 'owner');
    await boardsOf(store).deleteOne({ _id: boardId, owner_id: callerId(ctx) });
    return null;
  };
}

/** `boards.previewActions`: read-only; the same computation as a board write (DESIGN §7). */
export function previewActions(): Handler<typeof BoardsOps.previewActions> {
  return async ({ query }) => ({ actions: queryActions(query) });
}

/**
 * `boards.share` (owner only): shares the board with a group the caller belongs to (else 403
 * `NOT_GROUP_MEMBER`) with `permission`; a private board becomes `shared`. In the same
 * transaction every live card created on the board takes the group and permission, so sharing a
 * board (or changing `r` to `rw`) shares its existing cards too.
 */
export function shareBoard({ store, clock }: ServiceDeps): Handler<typeof BoardsOps.share> {
  return async ({ boardId, group_id, permission }, ctx) => {
    const { principal } = await loadBoard(store, callerId(ctx), boardId, 'owner');
    if (!principal.groupIds.includes(group_id)) {
      throw new AppError('NOT_GROUP_MEMBER', { message: `You are not a member of group ${group_id}`, details: { group_id } });
    }
    // The board and the cards created on it change sharing together: a card follows its board.
    return store.withTransaction(async (session) => {
      const board = await writeSharing(store, boardId, principal.userId, clock.now(), {
        $set: { groupId: group_id, groupPermission: permission, board_type: 'shared' },
      }, session);
      await store
        .collection<TaskDoc>(Collections.tasks)
        .updateMany({ boardId, deleted: false }, { $set: { groupId: group_id, groupPermission: permission } }, { session });
      return board;
    });
  };
}

/** `boards.unshare` (owner only): removes the group sharing; the board stays `shared`, seen by its owner only. */
export function unshareBoard({ store, clock }: ServiceDeps): Handler<typeof BoardsOps.unshare> {
  return async ({ boardId }, ctx) => {
    const { principal } = await loadBoard(store, callerId(ctx), boardId, 'owner');
    return writeSharing(store, boardId, principal.userId, clock.now(), { $set: {}, $unset: { groupId: '', groupPermission: '' } });
  };
}

async function writeSharing(
  store: DocumentStore, boardId: string, userId: string, now: Date,
  update: { $set: Record<string, unknown>; $unset?: Record<string, ''> }, session?: Session,
) {
  const stamped = { ...update, $set: { ...update.$set, updated_at: now.toISOString(), updated_by: userId } };
  const after = await boardsOf(store).findOneAndUpdate({ _id: boardId, owner_id: userId }, stamped, { returnDocument: 'after', ...(session ? { session } : {}) });
  if (!after) throw new AppError('BOARD_NOT_FOUND', { details: { boardId } });
  return toBoard(after, userId);
}
