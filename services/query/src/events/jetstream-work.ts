import { NatsBus } from '@app/shared/bus';
import type { BackgroundDeps } from '@app/shared/domain';
import { followDurable, OutboxRelay, type EventRelay } from '@app/shared/events';
import { InstrumentedBus, untraced } from '@app/shared/observability';
import type { WebhookDispatcher } from '../webhooks/dispatcher.js';

/** Name of the webhook dispatcher's durable JetStream consumer (one per `BUS_PREFIX`). */
export const WEBHOOK_CONSUMER = 'webhooks';

/** Handle of the JetStream side of the background work. */
export interface JetStreamWork {
  close(): Promise<void>;
}

/**
 * On NATS (distributed): starts this replica's publisher of numbered events to JetStream
 * (nudged by `numbering`, this process's numbering relay, after each of its passes) and its share of the durable
 * webhook consumer, which fans each event out to webhook deliveries before acking it. Returns
 * undefined on the in-process bus, or when the NATS server has no JetStream (logged): the
 * dispatcher then fans out from a store cursor, as in the embedded default.
 */
export async function startJetStreamWork(deps: BackgroundDeps, dispatcher: WebhookDispatcher, numbering?: EventRelay): Promise<JetStreamWork | undefined> {
  // the transport under the metrics and traces wrapper, when there is one
  const bus = deps.bus instanceof InstrumentedBus ? deps.bus.inner : deps.bus;
  if (!(bus instanceof NatsBus)) return undefined;
  const nc = bus.connection;
  const prefix = bus.subjectPrefix;
  let relay: OutboxRelay;
  try {
    relay = await OutboxRelay.start({
      store: deps.store, nc, prefix, log: deps.log, tracer: deps.tracer,
      ...(deps.config ? { retentionDays: deps.config.EVENT_RETENTION_DAYS } : {}),
    });
  } catch (err) {
    deps.log.warn({ err }, 'JetStream unavailable; webhooks fan out from the outbox in the store instead');
    return undefined;
  }
  // what this process's relay numbers is published at once (the poll covers the other replicas' numbering)
  const off = numbering?.onRelayed(() => relay.nudge());
  const consumer = await followDurable({
    nc, prefix, name: WEBHOOK_CONSUMER, log: deps.log,
    handle: async (event, traceparent) => {
      // no span of its own: the deliveries keep the write's trace context, and each attempt's span links to it
      await untraced(deps.tracer, () => dispatcher.fanOut([event], traceparent === undefined ? undefined : new Map([[event.id, traceparent]])));
    },
  });
  return {
    close: async () => {
      off?.();
      await consumer.close();
      await relay.close();
    },
  };
}
