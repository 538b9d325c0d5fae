import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager, StorageType, type ConsumerMessages, type JetStreamManager } from '@nats-io/jetstream';
import { headers as natsHeaders, type NatsConnection } from '@nats-io/transport-node';
import type { Tracer } from '@opentelemetry/api';
import type { Logger } from 'pino';
import { Headers } from '../bus/bus.js';
import { inRootSpan, linksTo, SpanKind, untraced } from '../observability/tracing.js';
import type { DocumentStore } from '../store/port.js';
import type { EventEnvelope } from './envelope.js';
import { DEFAULT_RETENTION_DAYS, readOutbox } from './feed.js';
import { Listeners, makeBatch, type BatchListener, type EventHub } from './hub.js';

/*
 * The distributed deployment's event transport: a relay moves the outbox to a JetStream
 * stream (subjects `<BUS_PREFIX>.events.<type>`, message id = event id so a repeated publish is
 * dropped by the stream's duplicate window), each gateway follows it with an ordered consumer for
 * its SSE streams, and the webhook dispatcher follows it with one durable consumer shared by
 * every replica. An event whose write was traced travels with that write's `traceparent` as a
 * message header (the body is the public envelope), so the fan-out can link its deliveries to it.
 */

const MS = 1_000_000; // nanoseconds per millisecond (JetStream durations)
/** Duplicate window of the events stream: a republished event id within it is dropped. */
const DUPLICATE_WINDOW_MS = 2 * 60_000;

/** Names of the events stream and its subjects for a `BUS_PREFIX`. */
export interface EventsStreamNames {
  stream: string;
  /** `<prefix>.events.>` */
  subjects: string;
  subject(type: string): string;
}

/** The stream name and subjects for `prefix` (`EVENTS` / `events.>` without a prefix). */
export function eventsStreamNames(prefix: string): EventsStreamNames {
  const base = prefix ? `${prefix}.events` : 'events';
  return { stream: prefix ? `${prefix}_EVENTS` : 'EVENTS', subjects: `${base}.>`, subject: (type) => `${base}.${type}` };
}

/**
 * Creates the events stream when missing (file storage, `max_age` = the outbox retention, a
 * two-minute duplicate window); safe to call from every process at start-up.
 */
export async function ensureEventsStream(nc: NatsConnection, prefix: string, retentionDays = DEFAULT_RETENTION_DAYS): Promise<JetStreamManager> {
  const jsm = await jetstreamManager(nc);
  const names = eventsStreamNames(prefix);
  try {
    await jsm.streams.info(names.stream);
  } catch {
    try {
      await jsm.streams.add({
        name: names.stream,
        subjects: [names.subjects],
        storage: StorageType.File,
        max_age: Math.round(retentionDays * 86_400_000) * MS,
        duplicate_window: DUPLICATE_WINDOW_MS * MS,
      });
    } catch (e) {
      // Another process created it meanwhile.
      await jsm.streams.info(names.stream).catch(() => Promise.reject(e));
    }
  }
  return jsm;
}

/**
 * Moves the numbered events (`events`, numbered by the relay, relay.ts) to the events stream, in
 * `seq` order. Every replica may run one: each
 * starts from the last event in the stream, publishes with the event id as message id (the stream
 * drops a repeat within its duplicate window) and waits for each ack, so the stream holds every
 * committed event once, in `seq` order. Polls the outbox every `intervalMs` (default 20 ms; an idle poll is one store read).
 */
export class OutboxRelay {
  private relayed = 0;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> = Promise.resolve();
  private stopped = false;
  private ticking = false;
  private again = false;

  private constructor(
    private readonly store: DocumentStore,
    private readonly nc: NatsConnection,
    private readonly jsm: JetStreamManager,
    private readonly names: EventsStreamNames,
    private readonly log: Logger,
    private readonly intervalMs: number,
    private readonly tracer: Tracer | undefined,
  ) {}

  /**
   * Ensures the stream and starts relaying. With `tracer`, each batch published is an
   * `events.publish` span linked to the writes of its events ({@link publishTraced}).
   */
  static async start(opts: {
    store: DocumentStore; nc: NatsConnection; prefix: string; log: Logger; retentionDays?: number; intervalMs?: number; tracer?: Tracer | undefined;
  }): Promise<OutboxRelay> {
    const jsm = await ensureEventsStream(opts.nc, opts.prefix, opts.retentionDays);
    const relay = new OutboxRelay(opts.store, opts.nc, jsm, eventsStreamNames(opts.prefix), opts.log, opts.intervalMs ?? 20, opts.tracer);
    relay.running = relay.tick();
    return relay;
  }

  /** `seq` of the newest event in the stream (0 when empty). */
  private async streamLast(): Promise<number> {
    const info = await this.jsm.streams.info(this.names.stream);
    if (info.state.last_seq === 0 || info.state.messages === 0) return 0;
    const msg = await this.jsm.streams.getMessage(this.names.stream, { seq: info.state.last_seq });
    return msg ? (msg.json<EventEnvelope>().seq ?? 0) : 0;
  }

  /**
   * Publishes what the stream does not have yet; returns how many events were published. Asks the
   * stream for its last event only when the outbox has something new (an idle tick is one store read).
   */
  async relayOnce(): Promise<number> {
    const js = jetstream(this.nc);
    let published = 0;
    let synced = false;
    for (;;) {
      // with a tracer, the same read brings each event's write trace context
      const traces = this.tracer ? new Map<string, string>() : undefined;
      // the poll is no span of its own (with a tracer): a batch published is one, publishTraced
      let events = await untraced(this.tracer, () => readOutbox(this.store, this.relayed, 500, {}, traces));
      if (events.length === 0) return published;
      if (!synced) {
        this.relayed = Math.max(this.relayed, await this.streamLast());
        synced = true;
        events = events.filter((e) => e.seq > this.relayed);
        if (events.length === 0) continue;
      }
      const send = async () => {
        for (const e of events) {
          const tp = traces?.get(e.id);
          await js.publish(this.names.subject(e.type), JSON.stringify(e), tp === undefined ? { msgID: e.id } : { msgID: e.id, headers: traceHeaders(tp) });
          this.relayed = e.seq;
          published++;
        }
      };
      await (this.tracer ? this.publishTraced(this.tracer, events, traces!, send) : send());
      if (events.length < 500) return published;
    }
  }

  /**
   * Runs `send` (the publishing of `events`) in an `events.publish` span (PRODUCER), the root of a
   * new trace, linked to the writes of the events (distinct trace contexts, at most
   * `MAX_SPAN_LINKS`; `events.links_dropped` counts the rest), with the stream as
   * `messaging.destination.name`, the number of messages and the first and last `seq`.
   */
  private async publishTraced(tracer: Tracer, events: readonly EventEnvelope[], traces: ReadonlyMap<string, string>, send: () => Promise<void>): Promise<void> {
    const { links, dropped } = linksTo(events.map((e) => traces.get(e.id)));
    const attributes = {
      'messaging.system': 'nats', 'messaging.operation.type': 'send', 'messaging.destination.name': this.names.stream,
      'messaging.batch.message_count': events.length, 'events.seq.first': events[0]!.seq, 'events.seq.last': events[events.length - 1]!.seq,
      'events.links_dropped': dropped,
    };
    await inRootSpan(tracer, 'events.publish', { kind: SpanKind.PRODUCER, links, attributes }, send);
  }

  /**
   * Publishes soon (the process's numbering relay calls it after each pass: one hop from commit
   * to the stream instead of two polls). Several nudges during a publish make one more run.
   */
  nudge(): void {
    if (this.stopped) return;
    if (this.ticking) {
      this.again = true;
      return;
    }
    if (this.timer) clearTimeout(this.timer);
    this.running = this.tick();
  }

  private async tick(): Promise<void> {
    this.ticking = true;
    try {
      await this.relayOnce();
    } catch (err) {
      if (!this.stopped) this.log.warn({ err }, 'outbox relay failed; retrying');
    }
    this.ticking = false;
    if (!this.stopped) {
      const delay = this.again ? 0 : this.intervalMs;
      this.again = false;
      this.timer = setTimeout(() => void (this.running = this.tick()), delay);
      this.timer.unref();
    }
  }

  async close(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }
}

/** The NATS headers of an event message whose write was traced: its `traceparent`. */
function traceHeaders(traceparent: string) {
  const h = natsHeaders();
  h.set(Headers.traceparent, traceparent);
  return h;
}

/**
 * The gateway's live source on NATS: an ordered JetStream consumer from the stream's
 * current end, started before the gateway listens; every replica gets every event. Messages
 * arriving together are handed out as one batch.
 */
export class JetStreamHub implements EventHub {
  private readonly listeners: Listeners;
  private pending: EventEnvelope[] = [];
  private flushing = false;

  private constructor(
    private readonly store: DocumentStore,
    private readonly messages: ConsumerMessages,
    log: Logger,
  ) {
    this.listeners = new Listeners(log);
  }

  /** Ensures the stream and starts following it. */
  static async start(opts: { store: DocumentStore; nc: NatsConnection; prefix: string; log: Logger; retentionDays?: number }): Promise<JetStreamHub> {
    await ensureEventsStream(opts.nc, opts.prefix, opts.retentionDays);
    const names = eventsStreamNames(opts.prefix);
    const consumer = await jetstream(opts.nc).consumers.get(names.stream, { deliver_policy: DeliverPolicy.New, filter_subjects: names.subjects });
    const messages = await consumer.consume();
    const hub = new JetStreamHub(opts.store, messages, opts.log);
    void hub.follow(opts.log);
    return hub;
  }

  private async follow(log: Logger): Promise<void> {
    try {
      for await (const m of this.messages) {
        try {
          this.pending.push(m.json<EventEnvelope>());
        } catch (err) {
          log.warn({ err }, 'unreadable event on the events stream');
          continue;
        }
        if (!this.flushing) {
          this.flushing = true;
          queueMicrotask(() => {
            this.flushing = false;
            const events = this.pending.splice(0);
            if (events.length) this.listeners.emit(makeBatch(this.store, events));
          });
        }
      }
    } catch (err) {
      log.warn({ err }, 'events stream consumer stopped');
    }
  }

  subscribe(listener: BatchListener): () => void {
    return this.listeners.add(listener);
  }

  /** Nothing to do: the consumer was live before any listener subscribed. */
  rewind(): void {}

  async close(): Promise<void> {
    await this.messages.close();
  }
}

/**
 * Follows the events stream with the durable consumer `name`, shared by every replica that calls
 * this (the webhook dispatcher): each event goes to one replica; `max_ack_pending: 1`
 * keeps them in `seq` order across replicas. `handle` runs before the ack, with the write's
 * `traceparent` when the message carries one; when it throws, the event is redelivered after a second.
 */
export async function followDurable(opts: {
  nc: NatsConnection;
  prefix: string;
  name: string;
  log: Logger;
  handle(event: EventEnvelope, traceparent?: string): Promise<void>;
}): Promise<{ close(): Promise<void> }> {
  const names = eventsStreamNames(opts.prefix);
  const jsm = await jetstreamManager(opts.nc);
  try {
    await jsm.consumers.info(names.stream, opts.name);
  } catch {
    await jsm.consumers.add(names.stream, {
      durable_name: opts.name,
      ack_policy: AckPolicy.Explicit,
      deliver_policy: DeliverPolicy.All,
      max_ack_pending: 1,
      ack_wait: 30_000 * MS,
      filter_subject: names.subjects,
    });
  }
  const consumer = await jetstream(opts.nc).consumers.get(names.stream, opts.name);
  const messages = await consumer.consume({ max_messages: 10 });
  const done = (async () => {
    for await (const m of messages) {
      try {
        await opts.handle(m.json<EventEnvelope>(), m.headers?.get(Headers.traceparent) || undefined);
        m.ack();
      } catch (err) {
        opts.log.warn({ err, seq: m.seq }, 'event handling failed; redelivering');
        m.nak(1_000);
      }
    }
  })();
  return {
    close: async () => {
      await messages.close();
      await done.catch(() => undefined);
    },
  };
}
