import { randomUUID } from 'node:crypto';
import { callerId, type Handler } from '@app/shared/bus';
import type { CardLease, LeasesOps } from '@app/shared/contracts';
import {
  boardScopeFilter, canReadTask, columnOf, compileColumn, leaseView, loadBoard, loadPrincipal, nextVersion, runWrite, toTask, versionGuard, versionOf,
  writableTasksFilter, type LeaseDoc, type NewEvent, type ServiceDeps, type TaskDoc, type WriteUnit,
} from '@app/shared/domain';
import { AppError } from '@app/shared/errors';
import { Collections, metadataPath, type Filter } from '@app/shared/store';
import { moveInWrite } from './move.js';

/*
 * Cards claimed under a lease (docs/boards.md "Claiming a card under a lease"): the lease is held
 * on the task document (`TaskDoc.lease`); every lease operation is ONE transaction of the write
 * unit (`runWrite`) with a conditional write on the card and its events through the outbox. Expiry
 * is judged by the service clock when a card is read for a claim, renewal, completion or release;
 * nothing sweeps. A claim that takes over a card whose lease has expired emits that lease's
 * `card.released` (`reason: expired`) before its own `card.claimed`. Every lease change bumps the
 * card's version (reads show the lease, so their ETag changes with it).
 */

/**
 * Free cards a claim reads ahead, before its transaction, in the column's order: at least as many
 * as claimers usually race on one column. Its transaction takes the first of them still free in
 * one conditional write, and reads the column again only when every one was taken meanwhile.
 */
const READ_AHEAD = 32;

/**
 * Where in the read-ahead list a claim's attempt starts: at its head on the first run and the
 * first rerun (the column's order; one rerun is what any transient error costs), and from the
 * second rerun on (n reruns) at a random place among the first 2^n (up to the list's length),
 * so that claimers that keep colliding on one card spread over the next ones instead of colliding
 * again on each in turn. Cards before the start are still taken when nothing after it is free.
 */
export function spreadFrom(reruns: number, length: number): number {
  if (reruns <= 1 || length <= 1) return 0;
  return Math.floor(Math.random() * Math.min(2 ** reruns, length));
}

/** Sprints are not cards (docs/web.md): a sprint task in a column's scope is never claimed. */
const NOT_A_SPRINT: Filter = { [metadataPath('app.type')]: { $ne: 'sprint' } };

/** Filter of the cards with no live lease at `now` (ISO UTC): none, or one that has expired. */
export function noLiveLease(now: string): Filter {
  return { $or: [{ lease: { $exists: false } }, { 'lease.expires_at': { $lte: now } }] };
}

/** Why a lease ended, as `card.released` says. */
type ReleaseReason = 'completed' | 'released' | 'expired';

/** `card.released` of `lease` on the card `after` (the card as this write leaves it). */
function releasedEvent(after: TaskDoc, lease: LeaseDoc, reason: ReleaseReason): NewEvent {
  return {
    type: 'card.released', task_id: after._id, board_id: lease.board_id,
    data: { board_id: lease.board_id, column_id: lease.column_id, lease: leaseView(lease), reason, task: toTask(after) },
  };
}

/** The reply of a claim or renewal. */
function cardLease(after: TaskDoc, lease: LeaseDoc): CardLease {
  return { lease_id: lease.id, expires_at: lease.expires_at, task: toTask(after) };
}

/**
 * `boards.claim` (docs/boards.md "Claiming a card under a lease"): board write access (404
 * `BOARD_NOT_FOUND` / 403), the column must be on the board (404 `COLUMN_NOT_FOUND`). The free
 * cards are the column's cards as the column read shows them (its effective query with the
 * board's active sprint, ANDed with `query` when given — 400 for a bad one), not sprints, that the
 * caller may write and that have no live lease. The first {@link READ_AHEAD} of them in the
 * column's order are read before the transaction; in it, ONE conditional write (`findOneAndUpdate`
 * sorted in the column's order, one round trip) gives the first of those still free a new lease
 * of `lease_seconds`, or, when every one was taken meanwhile, the first free card of the column
 * read anew; `card.claimed` is emitted, preceded by `card.released` (`expired`) when an expired
 * lease was taken over. Replies the lease and the card, or `null` (HTTP 204) when no card is free.
 * Concurrent claims of one card: on MongoDB (snapshot isolation) the later claim's write conflicts
 * with the earlier one's (a `TransientTransactionError`), and the store reruns the whole
 * transaction after a backoff on a fresh snapshot, in which the card is taken; the rerun starts
 * at a random place further down the read-ahead list ({@link spreadFrom}), so colliding claimers
 * spread out. On the embedded store transactions run one at a time and never meet. Past the
 * store's transaction deadline → 409 `CONFLICT`.
 */
export function claimCard(deps: ServiceDeps): Handler<typeof LeasesOps.claim> {
  const { store, clock } = deps;
  const tasks = store.collection<TaskDoc>(Collections.tasks);
  return async ({ boardId, columnId, query, lease_seconds }, ctx) => {
    const { board, principal } = await loadBoard(store, callerId(ctx), boardId, 'write');
    const column = columnOf(board, columnId);
    const compiled = await compileColumn(store, principal, board, column, board.activeSprintId, clock.now(), query);
    const freeAt = (at: string): Filter => ({
      $and: [noLiveLease(at), NOT_A_SPRINT, boardScopeFilter(board, principal), writableTasksFilter(principal), compiled.filter],
    });
    // The first free cards as read just before the transaction (the store's sorted read, outside
    // it): the transaction then checks them one by one by id, in order, instead of walking the
    // column itself; only when every one of them was taken meanwhile does it read the column again.
    const ahead = (await tasks.find(freeAt(clock.now().toISOString()), { sort: compiled.sort, limit: READ_AHEAD, projection: { _id: 1 } })).map((t) => t._id);
    // reruns of the transaction so far: a rerun follows a write conflict with a concurrent claim
    // of the same card (MongoDB), so it starts further down the list (see spreadFrom)
    let reruns = -1;
    return runWrite(deps, ctx, async (w) => {
      reruns++;
      const { session, now } = w;
      const at = now.toISOString();
      const free = freeAt(at);
      const lease: LeaseDoc = {
        id: randomUUID(), holder: w.userId, ...(ctx.grant ? { holder_token: ctx.grant.tokenId, ...(ctx.grant.tokenName ? { holder_token_name: ctx.grant.tokenName } : {}) } : {}), board_id: board._id, column_id: column.id,
        claimed_at: at, expires_at: new Date(now.getTime() + lease_seconds * 1000).toISOString(), lease_seconds,
      };
      // the version counts up by one (`$inc`): the write does not read the card first
      const claim = (filter: Filter) => tasks.findOneAndUpdate(
        filter, { $set: { lease }, $inc: { version: 1 } }, { returnDocument: 'before', sort: compiled.sort, session },
      );
      const from = spreadFrom(reruns, ahead.length);
      const before = (from > 0 ? await claim({ $and: [free, { _id: { $in: ahead.slice(from) } }] }) : null)
        ?? (ahead.length ? await claim({ $and: [free, { _id: { $in: ahead } }] }) : null)
        ?? (await claim(free));
      if (!before) return null;
      const version = versionOf(before) + 1;
      // a card stored without a version (version 1) got `$inc` from nothing: set it (rare)
      if (typeof before.version !== 'number') await tasks.updateOne({ _id: before._id }, { $set: { version } }, { session });
      const after: TaskDoc = { ...before, lease, version };
      if (before.lease) w.emit(releasedEvent(after, before.lease, 'expired'));
      w.emit({
        type: 'card.claimed', task_id: after._id, board_id: board._id,
        data: { board_id: board._id, column_id: column.id, lease: leaseView(lease), task: toTask(after) },
      });
      return cardLease(after, lease);
    });
  };
}

/**
 * Reads card `taskId` in the write unit `w` and checks that the caller holds its lease `leaseId`
 * and that it is live: 404 `TASK_NOT_FOUND` (missing, deleted or unreadable), 409
 * `LEASE_NOT_HELD` (no lease, or another holder or id; `details.lease` shows the current one),
 * 409 `LEASE_EXPIRED` (`expires_at` passed). Returns the card and its lease.
 */
async function heldLease(deps: ServiceDeps, w: WriteUnit, taskId: string, leaseId: string): Promise<{ card: TaskDoc; lease: LeaseDoc }> {
  const { store } = deps;
  const principal = await loadPrincipal(store, w.userId, w.session);
  const card = await store.collection<TaskDoc>(Collections.tasks).findOne({ _id: taskId, deleted: false }, { session: w.session });
  if (!card || !canReadTask(principal, card)) throw new AppError('TASK_NOT_FOUND', { details: { taskId } });
  const lease = card.lease;
  if (!lease || lease.id !== leaseId || lease.holder !== w.userId) {
    throw new AppError('LEASE_NOT_HELD', {
      message: lease ? 'The card is held under another lease' : 'The card is not claimed',
      details: { taskId, lease_id: leaseId, ...(lease ? { lease: leaseView(lease) } : {}) },
    });
  }
  if (lease.expires_at <= w.now.toISOString()) {
    throw new AppError('LEASE_EXPIRED', {
      message: `The lease expired at ${lease.expires_at}; the card may be claimed again`,
      details: { taskId, lease_id: leaseId, expires_at: lease.expires_at },
    });
  }
  return { card, lease };
}

/** The conditions of a lease write: the card is live and still holds this live lease (`lease.id`). */
function stillHeld(taskId: string, lease: LeaseDoc, now: string): Filter {
  return { _id: taskId, deleted: false, 'lease.id': lease.id, 'lease.expires_at': { $gt: now } };
}

/** The card changed between the read and the conditional write (a concurrent transaction on MongoDB). */
function changedUnder(taskId: string): AppError {
  return new AppError('CONFLICT', { message: 'The card changed during the lease operation; read it again and retry', details: { taskId } });
}

/**
 * `boards.renewLease` (docs/boards.md "Claiming a card under a lease"): the holder of a live lease
 * (see {@link heldLease} for the errors) moves its expiry to now + `lease_seconds` (default the
 * claim's length). One conditional write; no event (the lease is in the card's reads, whose version
 * goes up).
 */
export function renewLease(deps: ServiceDeps): Handler<typeof LeasesOps.renew> {
  const tasks = deps.store.collection<TaskDoc>(Collections.tasks);
  return async ({ taskId, lease_id, lease_seconds }, ctx) => runWrite(deps, ctx, async (w) => {
    const { card, lease } = await heldLease(deps, w, taskId, lease_id);
    const at = w.now.toISOString();
    const seconds = lease_seconds ?? lease.lease_seconds;
    const renewed: LeaseDoc = { ...lease, expires_at: new Date(w.now.getTime() + seconds * 1000).toISOString(), lease_seconds: seconds };
    const after = await tasks.findOneAndUpdate(
      { $and: [stillHeld(taskId, lease, at), versionGuard(card)] },
      { $set: { lease: renewed, ...nextVersion(card) } },
      { returnDocument: 'after', session: w.session },
    );
    if (!after) throw changedUnder(taskId);
    return cardLease(after, renewed);
  });
}

/**
 * `boards.releaseLease` (docs/boards.md "Claiming a card under a lease"): the holder of a live
 * lease gives the card up unchanged (the lease removed; `card.released`, `reason: released`).
 * Replies the card. Lease writes leave `updated_at` / `updated_by` alone (they record edits of the
 * card).
 */
export function releaseLease(deps: ServiceDeps): Handler<typeof LeasesOps.release> {
  return async ({ taskId, lease_id }, ctx) => runWrite(deps, ctx, async (w) => {
    const { card, lease } = await heldLease(deps, w, taskId, lease_id);
    return toTask(await endLease(deps, w, card, lease, 'released'));
  });
}

/** Removes the live `lease` from `card` (one conditional write) and emits its `card.released`; returns the card as written. */
async function endLease(deps: ServiceDeps, w: WriteUnit, card: TaskDoc, lease: LeaseDoc, reason: ReleaseReason): Promise<TaskDoc> {
  const after = await deps.store.collection<TaskDoc>(Collections.tasks).findOneAndUpdate(
    { $and: [stillHeld(card._id, lease, w.now.toISOString()), versionGuard(card)] },
    { $unset: { lease: '' }, $set: nextVersion(card) },
    { returnDocument: 'after', session: w.session },
  );
  if (!after) throw changedUnder(card._id);
  w.emit(releasedEvent(after, lease, reason));
  return after;
}

/**
 * `boards.completeLease` (docs/boards.md "Claiming a card under a lease"): the holder of a live
 * lease finishes the card. With `to_column_id` the card is moved from the column it was claimed
 * from, exactly as a move (board write access, column actions, `card.moved`, the move's 404 / 409 /
 * 422), in the same conditional write that removes the lease; without, only the lease is removed.
 * Emits `card.released` (`reason: completed`) after the move's event.
 */
export function completeLease(deps: ServiceDeps): Handler<typeof LeasesOps.complete> {
  return async ({ taskId, lease_id, to_column_id }, ctx) => runWrite(deps, ctx, async (w) => {
    const { card, lease } = await heldLease(deps, w, taskId, lease_id);
    if (to_column_id === undefined) return { task: toTask(await endLease(deps, w, card, lease, 'completed')), applied_actions: [] };
    const loaded = await loadBoard(deps.store, w.userId, lease.board_id, 'write', w.session);
    const moved = await moveInWrite(deps, ctx, w, loaded, {
      taskId, from_column_id: lease.column_id, to_column_id, guard: stillHeld(taskId, lease, w.now.toISOString()), unset: { lease: '' },
    });
    w.emit(releasedEvent(moved.after!, lease, 'completed'));
    return { task: toTask(moved.after!), applied_actions: moved.result.applied_actions };
  });
}
