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
 * share, or the background pass of any boards replica) completes it. A request waits for that
 * only briefly ({@link settleShareSync}); the rest goes on in the background of its process, and
 * single-board reads say `cards_sharing: "pending"` while the record exists.
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

/** Card ids read per page (outside transactions) to feed the batches. */
export const SHARE_SYNC_ID_PAGE = 50_000;

/** Filter of the live cards of `boardId` that do not carry the group and permission of `sync` yet. */
function behind(boardId: string, sync: Pick<ShareSyncDoc, 'groupId' | 'groupPermission'>) {
  return { boardId, deleted: false, $or: [{ groupId: { $ne: sync.groupId } }, { groupPermission: { $ne: sync.groupPermission } }] };
}

/** Outcome of one batch transaction. */
interface BatchOutcome {
  /** Cards the batch changed. */
  changed: number;
  /** The update is complete (its record removed), or nothing was pending. */
  complete: boolean;
  /** The pending record is no longer the generation the batch was planned for (a newer share). */
  superseded: boolean;
}

/**
 * One batch, in one transaction: reads the pending record (the target is always the record as
 * this transaction reads it); with `ids` (planned for `generation`), gives those of them still
 * behind the group and permission, and advances the record; without, looks for up to `batch`
 * cards still behind (cards the id pages missed: created during the update by a transaction that
 * read the board before the share), gives them the sharing, and removes the record when there
 * were none.
 */
async function syncBatch(
  deps: Pick<ServiceDeps, 'store' | 'clock'>,
  boardId: string,
  plan: { generation: string; ids: string[] } | { batch: number },
): Promise<BatchOutcome> {
  const { store, clock } = deps;
  const tasks = store.collection<TaskDoc>(Collections.tasks);
  return store.withTransaction(async (session) => {
    const sync = await shareSyncOf(store).findOne({ _id: boardId }, { session });
    if (!sync) return { changed: 0, complete: true, superseded: false };
    const { groupId, groupPermission, generation } = sync;
    if ('generation' in plan && plan.generation !== generation) return { changed: 0, complete: false, superseded: true };
    const filter = behind(boardId, sync);
    const ids = 'ids' in plan ? plan.ids : (await tasks.find(filter, { projection: { _id: 1 }, limit: plan.batch, session })).map((t) => t._id);
    const changed = ids.length === 0 ? 0 : (await tasks.updateMany({ ...filter, _id: { $in: ids } }, { $set: { groupId, groupPermission } }, { session })).modifiedCount;
    if ('batch' in plan && ids.length === 0) {
      await shareSyncOf(store).deleteOne({ _id: boardId, generation }, { session });
      return { changed, complete: true, superseded: false };
    }
    await shareSyncOf(store).updateOne(
      { _id: boardId, generation },
      { $set: { updated_at: clock.now().toISOString() }, $inc: { cards_done: changed } },
      { session },
    );
    return { changed, complete: false, superseded: false };
  });
}

/**
 * Completes the pending sharing update of board `boardId`, if any: reads the ids of the cards
 * still behind (pages of {@link SHARE_SYNC_ID_PAGE}, outside transactions), changes them in
 * transactions of at most `batch` cards (default {@link SHARE_SYNC_BATCH}), then checks in one
 * last transaction that none is left and removes the record. Idempotent; safe to run from several
 * processes at once (their batches conflict on the pending record and rerun), and a newer share
 * met midway is followed. Returns the number of cards changed. Throws what the store throws (503
 * `STORE_UNAVAILABLE`): the batches committed stay, the rest stays pending.
 */
export async function completeShareSync(deps: Pick<ServiceDeps, 'store' | 'clock'>, boardId: string, batch = SHARE_SYNC_BATCH): Promise<number> {
  const tasks = deps.store.collection<TaskDoc>(Collections.tasks);
  let changed = 0;
  for (;;) {
    const sync = await shareSyncOf(deps.store).findOne({ _id: boardId });
    if (!sync) return changed;
    const ids = (await tasks.find(behind(boardId, sync), { projection: { _id: 1 }, limit: SHARE_SYNC_ID_PAGE })).map((t) => t._id);
    if (ids.length === 0) {
      const last = await syncBatch(deps, boardId, { batch });
      changed += last.changed;
      if (last.complete) return changed;
      continue;
    }
    for (let i = 0; i < ids.length; i += batch) {
      const step = await syncBatch(deps, boardId, { generation: sync.generation, ids: ids.slice(i, i + batch) });
      changed += step.changed;
      if (step.superseded || step.complete) break;
    }
  }
}

/** How long (clock ms) a request that leaves a sharing update pending waits for it before answering. */
export const SHARE_ANSWER_WAIT_MS = 1_000;
/** How often (ms) that wait looks at the clock. */
const SHARE_ANSWER_TICK_MS = 25;

/**
 * Completes the pending sharing update of `boardId` ({@link completeShareSync}) for a request
 * that has committed (share, unshare, delete, a member change; docs/boards.md "Sharing a board
 * with many cards"): waits for it until `waitMs` (default {@link SHARE_ANSWER_WAIT_MS}) have
 * passed on `deps.clock`, so the request answers well inside the bus timeout however large the
 * board. Resolves `true` when the update is complete (or none was pending), `false` when it still
 * runs: it then goes on in this process, its failure only logged (the record stays pending for the
 * next share, unshare or delete of the board, or the background pass of any replica). Throws what
 * the update threw within the wait (503 `STORE_UNAVAILABLE`; the batches committed stay).
 */
export async function settleShareSync(deps: Pick<ServiceDeps, 'store' | 'clock' | 'log'>, boardId: string, waitMs = SHARE_ANSWER_WAIT_MS): Promise<boolean> {
  type Outcome = { error: unknown } | { changed: number };
  const work: Promise<Outcome> = completeShareSync(deps, boardId).then(
    (changed) => ({ changed }),
    (error: unknown) => ({ error }),
  );
  const until = deps.clock.now().getTime() + waitMs;
  let settled: Outcome | undefined;
  while (settled === undefined && deps.clock.now().getTime() < until) {
    let timer: NodeJS.Timeout | undefined;
    settled = await Promise.race([work, new Promise<undefined>((resolve) => (timer = setTimeout(() => resolve(undefined), SHARE_ANSWER_TICK_MS)))]);
    clearTimeout(timer);
  }
  if (settled === undefined) {
    void work.then((outcome) => {
      if ('error' in outcome) deps.log.warn({ err: outcome.error, boardId }, 'sharing update of a board\'s cards failed; left to the background pass');
      else deps.log.info({ boardId, changed: outcome.changed }, 'completed the sharing update of a board\'s cards after the answer');
    });
    return false;
  }
  if ('error' in settled) throw settled.error;
  return true;
}

/**
 * Whether board `boardId` has a sharing update of its cards pending (a `board_share_sync`
 * record): one read by `_id`, for single-board reads (`cards_sharing`, docs/boards.md).
 */
export async function shareSyncPending(store: DocumentStore, boardId: string): Promise<boolean> {
  return (await shareSyncOf(store).findOne({ _id: boardId }, { projection: { _id: 1 } })) !== null;
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
