import { randomUUID } from 'node:crypto';
import type { BackgroundDeps, BackgroundWork, Permission, ServiceDeps, TaskDoc } from '@app/shared/domain';
import { Collections, type Doc, type DocumentStore, type Session } from '@app/shared/store';

/**
 * Cards follow their board's sharing (docs/boards.md "Sharing a board with many cards"): a share
 * commits the board and a {@link ShareSyncDoc} in one transaction, then the board's live cards
 * take the group and permission in transactions of at most {@link SHARE_SYNC_BATCH} cards each,
 * so no transaction grows with the board (MongoDB limits a transaction's lifetime, 60 s by
 * default, and its size). The pending record makes the work idempotent and resumable: whoever
 * finds it (the share's own request, a later share / unshare / delete of the board, a retried
 * share, or the background pass of any boards replica) completes it.
 */

/** Cards written per transaction by the sharing update of a board's cards. */
export const SHARE_SYNC_BATCH = 500;
/** How often each boards replica looks for sharing updates whose request died (ms). */
export const SHARE_SYNC_SWEEP_MS = 30_000;
/** A pending sharing update untouched this long (ms) is taken over by the background pass. */
export const SHARE_SYNC_IDLE_MS = 30_000;

/**
 * A board whose cards are still being given its sharing, in `board_share_sync` (`_id`: the board
 * id). Written by share in the board's transaction; each batch updates it in its own transaction
 * (so a batch working for a superseded share conflicts with the newer share and reruns against
 * it); removed by the batch that finds no card left to change.
 */
export interface ShareSyncDoc extends Doc {
  /** The board id. */
  _id: string;
  /** The group and permission every live card of the board is to carry. */
  groupId: string;
  groupPermission: Permission;
  /** Changes with every share of the board: identifies the share this update belongs to. */
  generation: string;
  /** ISO UTC: when the share committed. */
  started_at: string;
  /** ISO UTC: when a batch last committed (or the share, before the first). */
  updated_at: string;
  /** Cards changed so far for this generation. */
  cards_done: number;
}

/** The `board_share_sync` collection (pending card sharing updates, one per board). */
export const shareSyncOf = (store: DocumentStore) => store.collection<ShareSyncDoc>(Collections.boardShareSync);

/**
 * Records, in the share's transaction `session`, that every live card of `boardId` is to take
 * `groupId` / `groupPermission` (replacing the target of an earlier share still in progress).
 */
export async function recordShareSync(store: DocumentStore, session: Session, boardId: string, groupId: string, groupPermission: Permission, now: Date): Promise<void> {
  const at = now.toISOString();
  await shareSyncOf(store).updateOne(
    { _id: boardId },
    { $set: { groupId, groupPermission, generation: randomUUID(), started_at: at, updated_at: at, cards_done: 0 } },
    { upsert: true, session },
  );
}

/**
 * One batch of the sharing update of `boardId`, in one transaction: reads the pending record,
 * gives up to `batch` live cards of the board that do not carry its group and permission yet
 * those, and advances the record (or removes it when none was left). Returns the number of cards
 * changed and whether the update is complete (true also when nothing was pending).
 */
async function syncBatch(deps: Pick<ServiceDeps, 'store' | 'clock'>, boardId: string, batch: number): Promise<{ changed: number; complete: boolean }> {
  const { store, clock } = deps;
  const tasks = store.collection<TaskDoc>(Collections.tasks);
  return store.withTransaction(async (session) => {
    const sync = await shareSyncOf(store).findOne({ _id: boardId }, { session });
    if (!sync) return { changed: 0, complete: true };
    const { groupId, groupPermission, generation } = sync;
    const behind = { boardId, deleted: false, $or: [{ groupId: { $ne: groupId } }, { groupPermission: { $ne: groupPermission } }] };
    const ids = (await tasks.find(behind, { projection: { _id: 1 }, limit: batch, session })).map((t) => t._id);
    if (ids.length > 0) await tasks.updateMany({ ...behind, _id: { $in: ids } }, { $set: { groupId, groupPermission } }, { session });
    if (ids.length < batch) {
      await shareSyncOf(store).deleteOne({ _id: boardId, generation }, { session });
      return { changed: ids.length, complete: true };
    }
    await shareSyncOf(store).updateOne(
      { _id: boardId, generation },
      { $set: { updated_at: clock.now().toISOString() }, $inc: { cards_done: ids.length } },
      { session },
    );
    return { changed: ids.length, complete: false };
  });
}

/**
 * Completes the pending sharing update of board `boardId`, if any, batch by batch (each its own
 * transaction of at most `batch` cards, default {@link SHARE_SYNC_BATCH}). Idempotent; safe to run
 * from several processes at once (their batches conflict on the pending record and rerun).
 * Returns the number of cards changed. Throws what the store throws (503 `STORE_UNAVAILABLE`);
 * the work done so far stays done and the rest stays pending.
 */
export async function completeShareSync(deps: Pick<ServiceDeps, 'store' | 'clock'>, boardId: string, batch = SHARE_SYNC_BATCH): Promise<number> {
  let changed = 0;
  for (;;) {
    const step = await syncBatch(deps, boardId, batch);
    changed += step.changed;
    if (step.complete) return changed;
  }
}

/**
 * The background pass: completes every pending sharing update untouched for `idleMs` (default
 * {@link SHARE_SYNC_IDLE_MS}; a share whose request died, a board deleted meanwhile). Returns the
 * ids of the boards it completed; a board whose batch fails is left for the next pass.
 */
export async function resumeShareSyncs(deps: Pick<ServiceDeps, 'store' | 'clock' | 'log'>, opts: { idleMs?: number; batch?: number } = {}): Promise<string[]> {
  const cutoff = new Date(deps.clock.now().getTime() - (opts.idleMs ?? SHARE_SYNC_IDLE_MS)).toISOString();
  const pending = await shareSyncOf(deps.store).find({ updated_at: { $lte: cutoff } }, { sort: { updated_at: 1 }, limit: 100, projection: { _id: 1 } });
  const done: string[] = [];
  for (const { _id } of pending) {
    try {
      const changed = await completeShareSync(deps, _id, opts.batch);
      deps.log.info({ boardId: _id, changed }, 'completed the sharing update of a board\'s cards');
      done.push(_id);
    } catch (err) {
      deps.log.warn({ err, boardId: _id }, 'sharing update of a board\'s cards failed; retrying next pass');
    }
  }
  return done;
}

/**
 * The boards service's background work: {@link resumeShareSyncs} at start and every
 * {@link SHARE_SYNC_SWEEP_MS}, in every replica.
 */
export async function shareSyncWork(deps: BackgroundDeps): Promise<BackgroundWork> {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  const pass = async (): Promise<void> => {
    try {
      await resumeShareSyncs(deps);
    } catch (err) {
      deps.log.warn({ err }, 'share sync pass failed; retrying next interval');
    }
    if (!stopped) {
      timer = setTimeout(() => void (running = pass()), SHARE_SYNC_SWEEP_MS);
      timer.unref();
    }
  };
  running = pass();
  return {
    close: async () => {
      stopped = true;
      if (timer) clearTimeout(timer);
      await running;
    },
  };
}
