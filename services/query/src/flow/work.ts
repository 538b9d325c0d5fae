import type { BackgroundDeps } from '@app/shared/domain';
import { readOutbox } from '@app/shared/events';
import { untraced } from '@app/shared/observability';
import { Collections, type DocumentStore } from '@app/shared/store';
import { recordFlow, takeDueSnapshots } from './history.js';

/** `_id` of the counter document holding the last `seq` the flow history has recorded. */
export const FLOW_COUNTER = 'flow_history';
/** Default retention of the daily snapshots, in days (`FLOW_RETENTION_DAYS`). */
export const DEFAULT_FLOW_RETENTION_DAYS = 365;

/** Tuning of the flow history's background work; tests shorten both intervals. */
export interface FlowWorkOptions {
  /** How often new events are recorded (ms, default 1 000). */
  recordMs?: number;
  /** How often boards without today's snapshot are looked for (ms, default 10 minutes). */
  snapshotMs?: number;
}

/**
 * Records the numbered events after the cursor in `counters` into the flow history, 500 at a time,
 * until none is left. The cursor moves only from the value read (a second replica that moved it
 * first wins; the records are idempotent, so reading the same events twice changes nothing).
 */
export async function recordFromCursor(store: DocumentStore): Promise<void> {
  const counters = store.collection<{ _id: string; seq: number }>(Collections.counters);
  const found = await counters.findOne({ _id: FLOW_COUNTER });
  let cursor = found?.seq ?? 0;
  if (!found) await counters.updateOne({ _id: FLOW_COUNTER }, { $set: { seq: 0 } }, { upsert: true });
  for (;;) {
    const events = await readOutbox(store, cursor, 500);
    if (events.length === 0) return;
    await recordFlow(store, events);
    const next = events[events.length - 1]!.seq;
    const { matchedCount } = await counters.updateOne({ _id: FLOW_COUNTER, seq: cursor }, { $set: { seq: next } });
    if (matchedCount === 0 || events.length < 500) return;
    cursor = next;
  }
}

/**
 * The flow history's background work in the query service (docs/flow.md "How the history is
 * kept"): records `card.moved` (and delete/restore) events as they are numbered, and takes each
 * board's daily snapshot once per UTC day. Each loop logs a failure and tries again at its next turn.
 */
export function startFlowWork(deps: BackgroundDeps, opts: FlowWorkOptions = {}): { close(): Promise<void> } {
  const { store, clock, log, config } = deps;
  const days = config?.FLOW_RETENTION_DAYS ?? DEFAULT_FLOW_RETENTION_DAYS;
  let stopped = false;
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
    loop('flow history', opts.recordMs ?? 1_000, () => recordFromCursor(store)),
    loop('flow snapshots', opts.snapshotMs ?? 600_000, () => takeDueSnapshots(store, clock.now(), days)),
  ];
  return {
    close: async () => {
      stopped = true;
      for (const stop of stops) await stop();
    },
  };
}
