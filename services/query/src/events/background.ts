import { NatsBus } from '@app/shared/bus';
import type { BackgroundDeps, BackgroundWork } from '@app/shared/domain';
import { DEFAULT_RETENTION_DAYS, EventRelay, lastSeq, readOutbox, sweepEvents, type EventRelayOptions } from '@app/shared/events';
import { Collections, type DocumentStore } from '@app/shared/store';
import { InstrumentedBus, untraced } from '@app/shared/observability';
import { DEFAULT_MAX_ATTEMPTS, WebhookDispatcher } from '../webhooks/dispatcher.js';
import { deliveriesOf } from '../webhooks/model.js';
import { ATTEMPT_TIMEOUT_MS, httpSender, type Sender } from '../webhooks/send.js';
import { targetPolicy } from '../webhooks/ssrf.js';
import { startFlowWork, type FlowWorkOptions } from '../flow/work.js';
import { startJetStreamWork } from './jetstream-work.js';

/** How often the retention sweep runs (ms). */
export const SWEEP_INTERVAL_MS = 60 * 60 * 1000;
/** `_id` of the counter document holding the last `seq` fanned out to webhooks (store-cursor mode). */
export const FANOUT_COUNTER = 'webhooks_fanout';

/** Tuning of the background work; tests shorten the tick and the attempt timeout. */
export interface EventWorkOptions {
  /** Interval of the dispatcher's tick in ms (fan-out in store mode, due attempts): default 250. */
  tickMs?: number;
  /** Timeout of one delivery attempt in ms (default 10 000). */
  attemptTimeoutMs?: number;
  /** Replaces the HTTP sender (tests). */
  sender?: Sender;
  /** Jitter source in [0, 1) (default Math.random). */
  random?: () => number;
  /** Options of the numbering relay (tests: a holder name per simulated process, a short lease). */
  relay?: EventRelayOptions;
  /** Intervals of the flow history's recording and daily snapshots (tests shorten them). */
  flow?: FlowWorkOptions;
}

/**
 * Fans the numbered events out to webhooks from a cursor kept in `counters` (the embedded default:
 * one process). `traced`: the deliveries keep their events' write trace context (the same read brings it).
 */
async function fanOutFromStore(store: DocumentStore, dispatcher: WebhookDispatcher, traced: boolean): Promise<void> {
  const counters = store.collection<{ _id: string; seq: number }>(Collections.counters);
  let cursor = (await counters.findOne({ _id: FANOUT_COUNTER }))?.seq;
  if (cursor === undefined) {
    cursor = await lastSeq(store);
    await counters.updateOne({ _id: FANOUT_COUNTER }, { $set: { seq: cursor } }, { upsert: true });
  }
  for (;;) {
    const traces = traced ? new Map<string, string>() : undefined;
    const events = await readOutbox(store, cursor, 500, {}, traces);
    if (events.length === 0) return;
    await dispatcher.fanOut(events, traces);
    const next = events[events.length - 1]!.seq;
    await counters.updateOne({ _id: FANOUT_COUNTER, seq: cursor }, { $set: { seq: next } });
    cursor = next;
    if (events.length < 500) return;
  }
}

/**
 * The query service's background work, in every replica:
 * - the outbox relay ({@link EventRelay}): numbers the committed writes' events while it holds the lease;
 * - the retention sweep of the outbox and of finished webhook deliveries (hourly; idempotent across replicas);
 * - the flow history (docs/flow.md): card moves recorded from the numbered events, daily board snapshots;
 * - the webhook dispatcher: on NATS, the outbox relay to JetStream and a durable JetStream
 *   consumer feeding the fan-out (`jetstream-work.ts`); on the in-process bus (the embedded
 *   default, one process) a cursor over the outbox in `counters`; then, every tick, the attempts
 *   that are due (store leases keep replicas from making the same attempt twice).
 * Why the query service hosts it: docs/events.md "Where it runs".
 */
export function eventWork(opts: EventWorkOptions = {}): (deps: BackgroundDeps) => Promise<BackgroundWork> {
  return async (deps) => {
    const { store, clock, log, config } = deps;
    const days = config?.EVENT_RETENTION_DAYS ?? DEFAULT_RETENTION_DAYS;
    const sweep = async (): Promise<void> => {
      try {
        const now = clock.now();
        const removed = await sweepEvents(store, now, days);
        // Finished deliveries leave the delivery log after the same retention.
        const cutoff = new Date(now.getTime() - days * 86_400_000).toISOString();
        const { deletedCount } = await deliveriesOf(store).deleteMany({ status: { $in: ['delivered', 'failed'] }, updated_at: { $lt: cutoff } });
        if (removed > 0 || deletedCount > 0) log.info({ removed, deliveries: deletedCount, days }, 'event retention sweep');
      } catch (err) {
        log.warn({ err }, 'event retention sweep failed; retrying next interval');
      }
    };
    let sweeping = sweep();
    const sweepTimer = setInterval(() => void (sweeping = sweep()), SWEEP_INTERVAL_MS);
    sweepTimer.unref();

    const dispatcher = new WebhookDispatcher({
      store, clock, log,
      sender: opts.sender ?? httpSender(targetPolicy(config), opts.attemptTimeoutMs ?? ATTEMPT_TIMEOUT_MS),
      maxAttempts: config?.WEBHOOK_MAX_ATTEMPTS ?? DEFAULT_MAX_ATTEMPTS,
      ...(opts.random ? { random: opts.random } : {}),
      metrics: deps.metrics,
      tracer: deps.tracer,
    });
    // scrape-time gauges (docs/observability.md): committed writes whose events the relay has not
    // numbered yet, and the oldest delivery still waiting
    const stopGauges = deps.metrics
      ? [
          deps.metrics.observe('events_outbox_lag', () => store.collection(Collections.outbox).countDocuments({})),
          deps.metrics.observe('webhook_oldest_pending_age_seconds', async () => {
            const [oldest] = await deliveriesOf(store).find({ status: 'pending' }, { sort: { created_at: 1 }, limit: 1, projection: { created_at: 1 } });
            return oldest ? Math.max(0, (clock.now().getTime() - Date.parse(oldest.created_at)) / 1000) : 0;
          }),
        ]
      : [];
    // The numbering relay (shared/src/events/relay.ts): every replica runs one; the lease holder
    // numbers. It passes right after each commit the services of this process signal; on NATS other
    // processes write too, so it also polls every 20 ms; on the in-process bus every writer signals,
    // and a poll each second is only a safety net (an idle all-in-one wakes up for nothing else).
    const onNats = (deps.bus instanceof InstrumentedBus ? deps.bus.inner : deps.bus) instanceof NatsBus;
    const numbering = new EventRelay(store, { log, tracer: deps.tracer, ...(onNats ? {} : { pollMs: 1_000 }), ...opts.relay }).start();
    const stopSignal = deps.outbox?.listen(() => numbering.nudge());
    const jet = await startJetStreamWork(deps, dispatcher, numbering);
    const tickMs = opts.tickMs ?? 250;
    let stopped = false;
    let timer: NodeJS.Timeout | undefined;
    let running: Promise<void> = Promise.resolve();
    const tick = async (): Promise<void> => {
      try {
        // the tick's polling and fan-out are no spans (with a tracer); each attempt is one, linked to its write
        await untraced(deps.tracer, async () => {
          if (!jet) await fanOutFromStore(store, dispatcher, deps.tracer !== undefined);
          await dispatcher.deliverDue();
        });
      } catch (err) {
        log.warn({ err }, 'webhook dispatch tick failed; retrying next tick');
      }
      if (!stopped) {
        timer = setTimeout(() => void (running = tick()), tickMs);
        timer.unref();
      }
    };
    running = tick();
    const flow = startFlowWork(deps, opts.flow);
    return {
      close: async () => {
        stopped = true;
        await flow.close();
        for (const stop of stopGauges) stop();
        clearInterval(sweepTimer);
        if (timer) clearTimeout(timer);
        await running;
        await dispatcher.settle();
        await sweeping;
        await jet?.close();
        stopSignal?.();
        await numbering.close();
      },
    };
  };
}
