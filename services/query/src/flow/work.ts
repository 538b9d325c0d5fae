import type { BackgroundDeps } from '@app/shared/domain';
import { lastSeq, readOutbox } from '@app/shared/events';
import { untraced } from '@app/shared/observability';
import { Collections, type DocumentStore } from '@app/shared/store';
import { migrateCardFlow, recordFlow, takeDueSnapshots } from './history.js';

/** `_id` of the counter document holding the last `seq` the flow history has recorded. */
export const FLOW_COUNTER = 'flow_history';
/** Default retention of the daily snapshots, in days (`FLOW_RETENTION_DAYS`). */
export const DEFAULT_FLOW_RETENTION_DAYS = 365;

/** Tuning of the flow history's background work; tests shorten both intervals. */
export interface FlowWorkOptions {
  /**
   * How often new events are recorded (ms, default 250, the webhook fan-out's tick): a pass then
   * reads events the store still holds parsed from their numbering, not rows it must parse again.
   */
  recordMs?: number;
  /** How often boards without today's snapshot are looked for (ms, default 10 minutes). */
  snapshotMs?: number;
}

/** The event types the flow history records (docs/flow.md "How the history is kept"). */
const FLOW_EVENT_TYPES = ['task.created', 'task.updated', 'card.moved', 'task.deleted', 'task.restored'] as const;

/**
 * Records the numbered events after the cursor in `counters` into the flow history, 500 at a time,
 * until none is left. Only the types it records are read (task writes, moves, deletes and
 * restores; not board, note or lease events); the cursor moves past the others up to the last `seq` numbered when
 * the pass began. The cursor moves only from the value read (a second replica that moved it first
 * wins; the records are idempotent, so reading the same events twice changes nothing).
 */
export function recordFromCursor(store: DocumentStore, now: () => Date = () => new Date()): Promise<void> {
  // one pass at a time per store in a process: the background loop and the reads that catch it up
  // take turns (replicas may still overlap: records are idempotent, places move forward only)
  const previous = passes.get(store) ?? Promise.resolve();
  const pass = previous.then(() => recordPass(store, now), () => recordPass(store, now));
  const tail = pass.catch(() => undefined);
  passes.set(store, tail);
  void tail.then(() => {
    if (passes.get(store) === tail) passes.delete(store);
  });
  return pass;
}

/** The last pass of {@link recordFromCursor} started on each store in this process. */
const passes = new WeakMap<DocumentStore, Promise<void>>();

/** One pass of {@link recordFromCursor}. */
async function recordPass(store: DocumentStore, now: () => Date): Promise<void> {
  const counters = store.collection<{ _id: string; seq: number }>(Collections.counters);
  const found = await counters.findOne({ _id: FLOW_COUNTER });
  let cursor = found?.seq ?? 0;
  if (!found) await counters.updateOne({ _id: FLOW_COUNTER }, { $set: { seq: 0 } }, { upsert: true });
  // numbering commits in `seq` order, so every event up to the last numbered one is readable now
  const high = await lastSeq(store);
  while (cursor < high) {
    const events = await readOutbox(store, cursor, 500, { types: FLOW_EVENT_TYPES, through: high });
    if (events.length > 0) await recordFlow(store, events, now());
    const full = events.length === 500;
    const next = full ? events[events.length - 1]!.seq : high;
    const { matchedCount } = await counters.updateOne({ _id: FLOW_COUNTER, seq: cursor }, { $set: { seq: next } });
    if (matchedCount === 0 || !full) return;
    cursor = next;
  }
}

/**
 * The flow history's background work in the query service (docs/flow.md "How the history is
 * kept"): records the column changes of task writes and moves (and delete/restore) as they are numbered, and takes each
 * board's daily snapshot once per UTC day. Each loop logs a failure and tries again at its next turn.
 */
export function startFlowWork(deps: BackgroundDeps, opts: FlowWorkOptions = {}): { close(): Promise<void> } {
  const { store, clock, log, config } = deps;
  const days = config?.FLOW_RETENTION_DAYS ?? DEFAULT_FLOW_RETENTION_DAYS;
  let stopped = false;
  let migrated = false;
  const loop = (what: string, everyMs: number, work: () => Promise<unknown>) => {
    let timer: NodeJS.Timeout | undefined;
    let running: Promise<void>;
    const turn = async (): Promise<void> => {
      try {
        await untraced(deps.tracer, work);
      } catch (err) {
        log.warn({ err }, `${what} failed; retrying at the next turn`);
      }
      if (!stopped) {
        timer = setTimeout(() => void (running = turn()), everyMs);
        timer.unref();
      }
    };
    running = turn();
    return async () => {
      if (timer) clearTimeout(timer);
      await running;
    };
  };
  const stops = [
    loop('flow history', opts.recordMs ?? 250, async () => {
      // card histories of the earlier layout become move records first (once per process start)
      if (!migrated) {
        const moved = await migrateCardFlow(store);
        if (moved > 0) log.info({ cards: moved }, 'flow history: card records moved into card_moves');
        migrated = true;
      }
      await recordFromCursor(store, () => clock.now());
    }),
    loop('flow snapshots', opts.snapshotMs ?? 600_000, () => takeDueSnapshots(store, clock.now(), days)),
  ];
  return {
    close: async () => {
      stopped = true;
      for (const stop of stops) await stop();
    },
  };
}
