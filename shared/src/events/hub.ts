import type { Logger } from 'pino';
import { untraced, type Tracer } from '../observability/tracing.js';
import type { DocumentStore } from '../store/port.js';
import type { EventEnvelope } from './envelope.js';
import { lastSeq, readOutbox } from './feed.js';
import { AccessSnapshot } from './access.js';

/**
 * A batch of committed events, in `seq` order, as the live side hands them out. `access()` reads
 * the access fields of the tasks and boards they name once for every listener (memoized), so a
 * hundred streams cost one read per batch, not a hundred.
 */
export interface EventBatch {
  events: readonly EventEnvelope[];
  access(): Promise<AccessSnapshot>;
}

/** A listener of live batches. */
export type BatchListener = (batch: EventBatch) => void;

/**
 * The live side of event delivery in one process: hands every committed event, once,
 * in `seq` order, to each subscribed listener, from the moment it subscribed. Two sources:
 * {@link OutboxPoller} (the embedded default: a short poll of the outbox by `seq`) and the
 * JetStream feed (`jetstream.ts`, distributed). Gaps between the subscription point and a
 * listener's resume point are filled from the store by the listener (`readOutbox`).
 */
export interface EventHub {
  subscribe(listener: BatchListener): () => void;
  /**
   * Makes sure every event after `seq` is still handed out from here on: a listener that read the
   * store up to `seq` after subscribing calls it, so an event committed meanwhile cannot fall
   * between its store read and the hub's position (the poller moves back; a feed that was live
   * before the listener subscribed has nothing to do).
   */
  rewind(seq: number): void;
  close(): Promise<void>;
}

/** A batch whose access snapshot is read at most once, on first use. */
export function makeBatch(store: DocumentStore, events: readonly EventEnvelope[]): EventBatch {
  let access: Promise<AccessSnapshot> | undefined;
  return { events, access: () => (access ??= AccessSnapshot.load(store, events)) };
}

/** Fan-out of batches to listeners; a throwing listener is logged and kept away from the others. */
export class Listeners {
  private readonly set = new Set<BatchListener>();
  constructor(private readonly log?: Logger) {}
  get size(): number {
    return this.set.size;
  }
  add(l: BatchListener): () => void {
    this.set.add(l);
    return () => void this.set.delete(l);
  }
  emit(batch: EventBatch): void {
    for (const l of this.set) {
      try {
        l(batch);
      } catch (err) {
        this.log?.warn({ err }, 'event listener failed');
      }
    }
  }
}

/** Options of {@link OutboxPoller}. */
export interface OutboxPollerOptions {
  /** Poll interval in ms while someone listens (default 20; docs/bench.md "events" has 50, 20 and 10 measured). */
  intervalMs?: number;
  /** Events read per poll at most (default 500); a full read polls again at once. */
  batchSize?: number;
  log?: Logger;
  /**
   * Runs before each poll's read: a relay pass (`relayOutbox`), so that in one process with no
   * running relay the outbox is still numbered while someone listens. Its failure is ignored
   * (another relay holds the lease or won the pass; the read goes on).
   */
  relay?: () => Promise<unknown>;
  /**
   * The process's tracer when tracing is on: each poll's store work (the relay pass and the read)
   * then makes no spans, as the running relay's idle reads make none (docs/observability.md
   * "Traces"); without it a stream's polls, 50 a second, would each be a trace. A relay pass that
   * numbers writes still makes its own `events.relay` span when `relay` is given the tracer.
   */
  tracer?: Tracer | undefined;
}

/**
 * The embedded default's live source: while at least one listener is subscribed, reads
 * the numbered events after the last `seq` it handed out every `intervalMs` (after a relay pass,
 * when given one) (default 20 ms; one indexed range read on the
 * in-memory store; nothing when no one listens). Chosen over a commit hook so the write path stays
 * untouched and the same code serves any store; docs/bench.md has its commit-to-SSE latency.
 */
export class OutboxPoller implements EventHub {
  private readonly listeners: Listeners;
  private readonly intervalMs: number;
  private readonly batchSize: number;
  private readonly relay: (() => Promise<unknown>) | undefined;
  private readonly tracer: Tracer | undefined;
  private cursor: number | undefined;
  private rewindTo: number | undefined;
  private timer: NodeJS.Timeout | undefined;
  private running = false;
  private closed = false;

  constructor(private readonly store: DocumentStore, opts: OutboxPollerOptions = {}) {
    this.listeners = new Listeners(opts.log);
    this.intervalMs = opts.intervalMs ?? 20;
    this.batchSize = opts.batchSize ?? 500;
    this.relay = opts.relay;
    this.tracer = opts.tracer;
  }

  subscribe(listener: BatchListener): () => void {
    const off = this.listeners.add(listener);
    if (!this.timer && !this.closed) this.schedule(0);
    return () => {
      off();
      if (this.listeners.size === 0 && this.timer) {
        clearTimeout(this.timer);
        this.timer = undefined;
        this.cursor = undefined;
        this.rewindTo = undefined;
      }
    };
  }

  rewind(seq: number): void {
    this.rewindTo = Math.min(this.rewindTo ?? seq, seq);
  }

  private schedule(ms: number): void {
    this.timer = setTimeout(() => void this.poll(), ms);
    this.timer.unref?.();
  }

  private async poll(): Promise<void> {
    if (this.running || this.closed) return;
    this.running = true;
    let again = false;
    try {
      if (this.rewindTo !== undefined) {
        this.cursor = Math.min(this.cursor ?? this.rewindTo, this.rewindTo);
        this.rewindTo = undefined;
      }
      const events = await untraced(this.tracer, () => this.read());
      if (events.length > 0) {
        this.cursor = events[events.length - 1]!.seq;
        this.listeners.emit(makeBatch(this.store, events));
        again = events.length === this.batchSize;
      }
    } catch {
      // Store fault: try again on the next tick (streams stay open; nothing is skipped, the cursor did not move).
    } finally {
      this.running = false;
      if (!this.closed && this.listeners.size > 0) this.schedule(again ? 0 : this.intervalMs);
      else this.timer = undefined;
    }
  }

  /**
   * One poll's store work: a relay pass (when given one; its failure is ignored), then the numbered
   * events after the cursor. The first poll after a quiet period only starts the cursor at the
   * current end and reads none: listeners fill their own past.
   */
  private async read(): Promise<readonly EventEnvelope[]> {
    if (this.relay) await this.relay().catch(() => undefined);
    if (this.cursor === undefined) {
      this.cursor = await lastSeq(this.store);
      return [];
    }
    return readOutbox(this.store, this.cursor, this.batchSize);
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
  }
}
