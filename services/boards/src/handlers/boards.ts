import { createHash, randomUUID } from 'node:crypto';
import { callerId, type Handler } from '@app/shared/bus';
import type { Board, BoardCreateBody, BoardMember, BoardsOps, BoardUpdateBody } from '@app/shared/contracts';
import {
  DEFAULT_COLUMNS, actionView, boardScope, checkColumnActions, boardEvent, canReadBoard, canReadTask, checkIfMatch, checkMetadataEntry, distinct, loadBoard, loadPrincipal, nextVersion, normalizeColumns, queryActions,
  runWrite, toBoard, versionGuard, versionOf,
  type BoardDoc, type ColumnDef, type Principal, type ServiceDeps, type TaskDoc, type WriteUnit,
} from '@app/shared/domain';
import { AppError, invalidField } from '@app/shared/errors';
import { Collections, encodeMetadata, escapeKey, type DocumentStore, type Session, type Update } from '@app/shared/store';
import { boardsOf, groupsOf } from '../collections.js';
import { recordShareSync, settleShareSync, shareSyncPending } from '../share-sync.js';

/** A board name: trimmed, not blank. */
function boardName(name: string): string {
  const trimmed = name.trim();
  if (trimmed === '') throw invalidField('/name', 'must not be blank', 'required');
  return trimmed;
}

/**
 * A new board document as `boards.create` stores it (docs/boards.md): the caller owns it;
 * without `columns` it gets {@link DEFAULT_COLUMNS}; column ids are backfilled and actions
 * materialized; version 1. Throws the 400s of the body (blank name, column rules) naming the field.
 */
export function newBoardDoc(input: BoardCreateBody, userId: string, now: Date, id: string = randomUUID()): BoardDoc {
  const at = now.toISOString();
  return {
    _id: id,
    name: boardName(input.name),
    board_type: input.board_type,
    owner_id: userId,
    columns: normalizeColumns(input.columns ?? DEFAULT_COLUMNS),
    default_tags: distinct(input.default_tags ?? []),
    metadata: boardMetadata(input.metadata),
    created_at: at,
    created_by: userId,
    updated_at: at,
    updated_by: userId,
    version: 1,
  };
}

/** `boards.create` (docs/boards.md): stores {@link newBoardDoc}; emits `board.created`. */
export function createBoard(deps: ServiceDeps): Handler<typeof BoardsOps.create> {
  const { store } = deps;
  return async (input, ctx) => runWrite(deps, ctx, async (w) => {
    const doc = newBoardDoc(input, w.userId, w.now);
    // a new board is private: its owner's custom fields type the values its column actions set
    await checkColumnActions(store, boardScope(doc), doc.columns, w.session);
    await boardsOf(store).insertOne(doc, { session: w.session });
    const board = toBoard(doc, w.userId);
    w.emit(boardEvent('board.created', board));
    return board;
  });
}

/**
 * `boards.previewCreate` (`POST /boards?dry_run=true`): the board `create` would make, with the
 * same checks and errors (ids backfilled, actions materialized; the id is a fresh one that no
 * later create will reuse). Nothing is written, no event.
 */
export function previewCreateBoard({ clock }: ServiceDeps): Handler<typeof BoardsOps.previewCreate> {
  return async (input, ctx) => ({ dry_run: true, board: toBoard(newBoardDoc(input, callerId(ctx), clock.now()), callerId(ctx)) });
}

/** Name of the default board (`POST /boards/default`). */
export const DEFAULT_BOARD_NAME = 'My Board';

/**
 * The id of `userId`'s default board: a UUID (version 8, RFC 9562 §5.8) made from a SHA-256 of
 * the user id, so every replica derives the same one and the store's unique `_id` admits one
 * default board per user however many calls race.
 */
export function defaultBoardId(userId: string): string {
  const h = createHash('sha256').update(`default-board\n${userId}`).digest('hex');
  const variant = ((parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-8${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/**
 * `boards.ensureDefault` (`POST /boards/default`): the caller's default board, created on the
 * first call as a private board named {@link DEFAULT_BOARD_NAME} with {@link DEFAULT_COLUMNS}
 * (emits `board.created`), returned as it is on every later call (also after the owner changed
 * it). Its id is {@link defaultBoardId}: concurrent first calls race on the unique `_id`, one
 * insert wins and the others read the winner's board. Deleting it lets the next call create it
 * again.
 */
export function ensureDefaultBoard(deps: ServiceDeps): Handler<typeof BoardsOps.ensureDefault> {
  const { store } = deps;
  return async (_input, ctx) => {
    const userId = callerId(ctx);
    const id = defaultBoardId(userId);
    const existing = await boardsOf(store).findOne({ _id: id, owner_id: userId });
    if (existing) return toBoard(existing, userId);
    try {
      return await runWrite(deps, ctx, async (w) => {
        const found = await boardsOf(store).findOne({ _id: id, owner_id: userId }, { session: w.session });
        if (found) return toBoard(found, userId);
        const doc = newBoardDoc({ name: DEFAULT_BOARD_NAME, board_type: 'private' }, userId, w.now, id);
        await boardsOf(store).insertOne(doc, { session: w.session });
        const board = toBoard(doc, userId);
        w.emit(boardEvent('board.created', board));
        return board;
      });
    } catch (e) {
      if (!AppError.is(e) || e.code !== 'CONFLICT') throw e;
      // another call created it first (unique _id)
      const winner = await boardsOf(store).findOne({ _id: id, owner_id: userId });
      if (!winner) throw e;
      return toBoard(winner, userId);
    }
  };
}

/** A board's metadata for storage: each entry storable ({@link checkMetadataEntry}; 400 naming `/metadata/<key>`), keys escaped. */
function boardMetadata(meta: Record<string, unknown> | undefined): Record<string, unknown> {
  for (const [key, value] of Object.entries(meta ?? {})) checkMetadataEntry(key, value, `/metadata/${key}`);
  return encodeMetadata(meta);
}

/** `boards.list`: boards the caller owns, and boards shared with its groups; each oldest first. */
export function listBoards({ store }: ServiceDeps): Handler<typeof BoardsOps.list> {
  return async (_input, ctx) => {
    const userId = callerId(ctx);
    const principal = await loadPrincipal(store, userId);
    const { groupIds, readOnlyGroupIds } = principal;
    const sort = { created_at: 1, _id: 1 } as const;
    const [owned, shared] = await Promise.all([
      boardsOf(store).find({ owner_id: userId }, { sort }),
      groupIds.length === 0 ? [] : boardsOf(store).find({ groupId: { $in: groupIds }, owner_id: { $ne: userId } }, { sort }),
    ]);
    const reader = (b: BoardDoc) => b.groupId !== undefined && (readOnlyGroupIds ?? []).includes(b.groupId);
    // an access token narrowed to some boards lists only those
    const listed = (boards: BoardDoc[]) => boards.filter((b) => canReadBoard(principal, b)).map((b) => toBoard(b, userId, reader(b)));
    return { owned_boards: listed(owned), shared_boards: listed(shared) };
  };
}

/**
 * `boards.get`: any board the caller can read, with `cards_sharing: "pending"` while a sharing
 * update of its cards still runs (docs/boards.md "Sharing a board with many cards").
 */
export function getBoard({ store }: ServiceDeps): Handler<typeof BoardsOps.get> {
  return async ({ boardId }, ctx) => {
    const [{ board, principal }, pending] = await Promise.all([loadBoard(store, callerId(ctx), boardId, 'read'), shareSyncPending(store, boardId)]);
    return cardsSharing(toBoard(board, principal.userId, board.groupId !== undefined && (principal.readOnlyGroupIds ?? []).includes(board.groupId)), !pending);
  };
}

/**
 * `board` as a single-board answer gives it: with `cards_sharing: "pending"` unless the sharing
 * update of its cards is `complete` (docs/boards.md "Sharing a board with many cards").
 */
function cardsSharing(board: Board, complete: boolean): Board {
  return complete ? board : { ...board, cards_sharing: 'pending' };
}

/**
 * `boards.members`: the people of a board a reader may see, to pick an assignee by name and to
 * show whose a card is ({@link peopleOf}). A board the caller cannot read is 404
 * `BOARD_NOT_FOUND` (docs/architecture.md §4).
 */
export function boardMembers({ store }: ServiceDeps): Handler<typeof BoardsOps.members> {
  return async ({ boardId }, ctx) => peopleOf(store, (await loadBoard(store, callerId(ctx), boardId, 'read')).board);
}

/**
 * The people of `board`: the owner (`permission: 'owner'`), then the members of the board's group
 * in group order, each once, as `{id, username, permission}`; a member's permission is the share's,
 * `r` for a `reader` of the group (docs/boards.md "Members"). A user id without a user record keeps
 * its id as its name.
 */
export async function peopleOf(store: DocumentStore, board: BoardDoc, session?: Session): Promise<BoardMember[]> {
  const opts = session ? { session } : {};
  const group = board.groupId === undefined ? null : await groupsOf(store).findOne({ _id: board.groupId }, { projection: { members: 1 }, ...opts });
  const roles = new Map((group?.members ?? []).map((m) => [m.user_id, m.role]));
  const ids = distinct([board.owner_id, ...roles.keys()]);
  const users = await store
    .collection<{ _id: string; username: string }>(Collections.users)
    .find({ _id: { $in: ids } }, { projection: { _id: 1, username: 1 }, ...opts });
  const names = new Map(users.map((u) => [u._id, u.username]));
  const permission = (id: string): BoardMember['permission'] =>
    id === board.owner_id ? 'owner' : roles.get(id) === 'reader' ? 'r' : (board.groupPermission ?? 'r');
  return ids.map((id) => ({ id, username: names.get(id) ?? id, permission: permission(id) }));
}

/**
 * The change `boards.update` makes to `board` (owner only; docs/architecture.md §9): only carried fields change,
 * `columns` replaces the whole list and `metadata` the whole metadata, `activeSprintId: ""` clears
 * the pointer. Columns are re-materialized whenever `columns` or `default_tags` is carried.
 * Throws the body's 400s naming the field.
 */
async function boardChange(store: DocumentStore, board: BoardDoc, principal: Principal, body: BoardUpdateBody, userId: string, now: Date, session?: Session) {
  const $set: Record<string, unknown> = { updated_at: now.toISOString(), updated_by: userId };
  const $unset: Record<string, ''> = {};
  if (body.name !== undefined) $set.name = boardName(body.name);
  if (body.metadata !== undefined) $set.metadata = boardMetadata(body.metadata);
  if (body.columns !== undefined || body.default_tags !== undefined) {
    if (body.default_tags !== undefined) $set.default_tags = distinct(body.default_tags);
    $set.columns = normalizeColumns(body.columns ?? board.columns, board.columns);
    await checkColumnActions(store, boardScope(board), $set.columns as ColumnDef[]);
  }
  if (body.activeSprintId === '') $unset.activeSprintId = '';
  else if (body.activeSprintId !== undefined) $set.activeSprintId = await openSprintId(store, principal, body.activeSprintId, session);
  return { $set, $unset };
}

/**
 * `boards.update` (owner only): {@link boardChange} as ONE conditional write pinned at the version
 * read in the same transaction (`If-Match` → 412); emits `board.updated`.
 */
export function updateBoard(deps: ServiceDeps): Handler<typeof BoardsOps.update> {
  const { store } = deps;
  return async ({ boardId, ...body }, ctx) => runWrite(deps, ctx, async (w) => {
    const { board, principal } = await ownedBoard(w, deps, ctx, boardId);
    const { $set, $unset } = await boardChange(store, board, principal, body, w.userId, w.now, w.session);
    const out = await writeBoard(w, deps, board, Object.keys($unset).length > 0 ? { $set, $unset } : { $set });
    w.emit(boardEvent('board.updated', out));
    return out;
  });
}

/**
 * `boards.previewUpdate` (`PUT /boards/{id}?dry_run=true`): the board `update` would leave, with
 * the same checks and errors (owner only, `If-Match`, body rules) and the version it would get.
 * Nothing is written, no event.
 */
export function previewUpdateBoard({ store, clock }: ServiceDeps): Handler<typeof BoardsOps.previewUpdate> {
  return async ({ boardId, ...body }, ctx) => {
    const userId = callerId(ctx);
    const { board, principal } = await loadBoard(store, userId, boardId, 'owner');
    checkIfMatch(ctx.ifMatch, versionOf(board), { boardId });
    const { $set, $unset } = await boardChange(store, board, principal, body, userId, clock.now());
    const after = { ...board, ...$set, ...nextVersion(board) } as BoardDoc & Record<string, unknown>;
    for (const k of Object.keys($unset)) delete after[k];
    return { dry_run: true, board: toBoard(after, userId) };
  };
}

/** The caller's own board `boardId`, read in the unit's transaction and checked against `If-Match`. */
export async function ownedBoard(w: WriteUnit, { store }: ServiceDeps, ctx: { ifMatch: string | undefined }, boardId: string) {
  const loaded = await loadBoard(store, w.userId, boardId, 'owner', w.session);
  checkIfMatch(ctx.ifMatch, versionOf(loaded.board), { boardId });
  return loaded;
}

/**
 * Applies `update` to `board` (as read in the unit's transaction) as ONE write pinned at its
 * version, bumping it; 409 `CONFLICT` when the board changed under the transaction.
 */
export async function writeBoard(w: WriteUnit, { store }: ServiceDeps, board: BoardDoc, update: Update & { $set: Record<string, unknown> }) {
  const after = await boardsOf(store).findOneAndUpdate(
    { _id: board._id, owner_id: w.userId, ...versionGuard(board) },
    { ...update, $set: { ...update.$set, ...nextVersion(board) } },
    { returnDocument: 'after', session: w.session },
  );
  if (!after) throw new AppError('CONFLICT', { message: 'The board changed meanwhile; read it again and retry', details: { boardId: board._id } });
  return toBoard(after, w.userId);
}

/**
 * Checks a new `activeSprintId`: a live sprint task (`app.type = sprint`) the caller can read,
 * still open (status not `done`); else 400 `VALIDATION_FAILED` naming `/activeSprintId`.
 */
async function openSprintId(store: DocumentStore, p: Principal, sprintId: string, session?: Session): Promise<string> {
  const sprint = await store.collection<TaskDoc>(Collections.tasks).findOne({ _id: sprintId, deleted: false }, session ? { session } : {});
  if (!sprint || !canReadTask(p, sprint) || sprint.metadata[escapeKey('app.type')] !== 'sprint') {
    throw invalidField('/activeSprintId', `no sprint task with id "${sprintId}" that you can read`, 'not_found');
  }
  if (sprint.status === 'done') throw invalidField('/activeSprintId', `sprint "${sprintId}" is closed`, 'closed');
  return sprintId;
}

/**
 * `boards.remove` (owner only): deletes the board; its tasks are kept (they keep their `boardId`
 * and sharing; a sharing update of its cards still pending is completed, by
 * `settleShareSync`: before the answer, or in the background past its wait). Emits `board.deleted`;
 * audit `board.delete`.
 */
export function removeBoard(deps: ServiceDeps): Handler<typeof BoardsOps.remove> {
  return async ({ boardId }, ctx) => {
    const out = await runWrite(deps, ctx, async (w) => {
      const { board } = await ownedBoard(w, deps, ctx, boardId);
      const { deletedCount } = await boardsOf(deps.store).deleteOne({ _id: boardId, owner_id: w.userId, ...versionGuard(board) }, { session: w.session });
      if (deletedCount === 0) throw new AppError('CONFLICT', { message: 'The board changed meanwhile; read it again and retry', details: { boardId } });
      w.emit(boardEvent('board.deleted', toBoard(board, w.userId)));
      w.audit({ action: 'board.delete', target: `board:${boardId}`, details: { name: board.name } });
      return null;
    });
    await settleShareSync(deps, boardId);
    return out;
  };
}

/** `boards.previewActions`: read-only; the same computation as a board write (docs/architecture.md §7). */
export function previewActions(): Handler<typeof BoardsOps.previewActions> {
  return async ({ query }) => ({ actions: queryActions(query).map(actionView) });
}

/**
 * `boards.share` (owner only): shares the board with a group the caller belongs to (else 403
 * `NOT_GROUP_MEMBER`) with `permission`; a private board becomes `shared`. Cards follow their
 * board: the transaction that writes the board records that every live card created on it is to
 * take the group and permission, and the cards are then changed in transactions of at most
 * `SHARE_SYNC_BATCH` cards (`settleShareSync`): share answers once they are done or after
 * `SHARE_ANSWER_WAIT_MS`, with `cards_sharing: "pending"` while the rest goes on in the background
 * (docs/boards.md "Sharing a board with many cards" states what readers see meanwhile and after a
 * crash). The cards' versions do
 * not change (sharing fields are not task fields); the board's does. Emits `board.shared` and
 * records `board.share` in the audit log (a permission change is a share with the new permission).
 */
export function shareBoard(deps: ServiceDeps): Handler<typeof BoardsOps.share> {
  const { store } = deps;
  return async ({ boardId, group_id, permission }, ctx) => {
    const out = await runWrite(deps, ctx, async (w) => {
      const { board, principal } = await ownedBoard(w, deps, ctx, boardId);
      if (!principal.groupIds.includes(group_id)) {
        throw new AppError('NOT_GROUP_MEMBER', { message: `You are not a member of group ${group_id}`, details: { group_id } });
      }
      const shared = await writeBoard(w, deps, board, {
        $set: { groupId: group_id, groupPermission: permission, board_type: 'shared', updated_at: w.now.toISOString(), updated_by: w.userId },
      });
      await recordShareSync(store, w.session, boardId, group_id, permission, w.now);
      w.emit(boardEvent('board.shared', shared));
      w.audit({
        action: 'board.share', target: `board:${boardId}`,
        details: { group_id, permission, ...(board.groupId !== undefined ? { previous_group_id: board.groupId, previous_permission: board.groupPermission } : {}) },
      });
      return shared;
    });
    // also on a replayed answer (Idempotency-Key): a retry completes what a failed first run left
    return cardsSharing(out, await settleShareSync(deps, boardId));
  };
}

/**
 * `boards.unshare` (owner only): removes the group sharing; the board stays `shared`, seen by its
 * owner only. Cards keep their sharing; a sharing update of the cards still pending from an
 * earlier share is completed (`settleShareSync`: before the answer, or in the background past
 * `SHARE_ANSWER_WAIT_MS`, the answer then saying `cards_sharing: "pending"`), so they end as that
 * share left them. Emits `board.unshared`; audit `board.unshare`.
 */
export function unshareBoard(deps: ServiceDeps): Handler<typeof BoardsOps.unshare> {
  return async ({ boardId }, ctx) => {
    const out = await runWrite(deps, ctx, async (w) => {
      const { board } = await ownedBoard(w, deps, ctx, boardId);
      const unshared = await writeBoard(w, deps, board, {
        $set: { updated_at: w.now.toISOString(), updated_by: w.userId },
        $unset: { groupId: '', groupPermission: '' },
      });
      w.emit(boardEvent('board.unshared', unshared));
      w.audit({ action: 'board.unshare', target: `board:${boardId}`, details: board.groupId !== undefined ? { group_id: board.groupId } : {} });
      return unshared;
    });
    return cardsSharing(out, await settleShareSync(deps, boardId));
  };
}
