import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Tracer } from '@opentelemetry/api';
import type { Logger } from 'pino';
import { EVENTS_COUNTER, type EventDoc, type OutboxDoc } from '../domain/events.js';
import { AppError } from '../errors/index.js';
import { inRootSpan, linksTo, SpanKind, untraced } from '../observability/tracing.js';
import { Collections } from '../store/collections.js';
import type { Doc, DocumentStore } from '../store/port.js';
import { toEnvelope, type EventEnvelope } from './envelope.js';

/*
 * The outbox relay (docs/concurrency.md "The events outbox", docs/events.md "Where it runs").
 * A write inserts its events, unnumbered, as one document of `outbox` in its own transaction
 * (`appendEvents`). The relay numbers them after the commit: in ONE store transaction per pass it
 * reads the oldest outbox documents, gives their events the next `seq` values (gapless, from the
 * state document `counters/{_id: 'events'}`), inserts them into `events`, deletes the outbox
 * documents and advances the state document, conditionally on the state it read. Only one process
 * numbers at a time: the one holding the lease recorded in that state document. Readers read only
 * `events`, so they see only numbered events.
 *
 * Safety does not rest on the lease: a pass that raced another (a lease lost during a long pause)
 * fails its conditional update (or the unique `seq` index) and commits nothing. A crash mid-pass
 * commits nothing either, so the next holder starts from the last committed `seq`: no gap, no repeat.
 */

/** How long a relay's lease lasts (ms) without renewal; a crashed holder's successor waits at most this long. */
export const RELAY_LEASE_MS = 3_000;
/** How often a running relay looks at the outbox (ms) when idle (one indexed read of `outbox`). */
export const RELAY_INTERVAL_MS = 20;
/** Outbox documents (writes, or parts of a write) numbered per pass at most; a full pass is followed by another at once. */
export const RELAY_BATCH = 500;
/**
 * Events numbered per pass at most (docs/events.md "The relay's passes"): with {@link RELAY_MAX_BYTES}
 * it keeps a pass's transaction well inside the store's deadline however large the writes
 * behind it were (a pass always takes at least one outbox document).
 */
export const RELAY_MAX_EVENTS = 2_000;
/** Bytes of events (the outbox documents' recorded `bytes`) numbered per pass at most. */
export const RELAY_MAX_BYTES = 8 * 1024 * 1024;
/** How long a reader waits at most for the writes committed before it to be numbered (ms): {@link catchUpOutbox}. */
export const CATCH_UP_WAIT_MS = 1_000;

/**
 * This process's lease holder name (host, pid and a random part). Every relay participant of one
 * process uses it unless told otherwise, so the feed, the stream and the background relay of an
 * all-in-one process share the lease instead of waiting for each other.
 */
export const PROCESS_HOLDER = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;

/** The relay's state document `counters/{_id: 'events'}`: the last `seq` given and the lease. */
interface RelayState extends Doc {
  _id: string;
  /** The last `seq` given (0 or absent: none yet). */
  seq?: number;
  /** Lease holder ({@link PROCESS_HOLDER} of a process, or a test's name). */
  holder?: string;
  /** End of the lease, ms since the epoch (wall clock); 0 or past: free. */
  lease_until?: number;
}

/** Options of one relay pass. */
export interface RelayOptions {
  /** Lease holder name; default {@link PROCESS_HOLDER}. */
  holder?: string;
  /**
   * True for a running relay ({@link EventRelay}): it takes or renews the lease for
   * `leaseMs`. False (default) for a reader that helps once ({@link catchUpOutbox}): it numbers only
   * when nobody else holds the lease and leaves the lease free (or as it was, when it was its own).
   */
  hold?: boolean;
  /** Lease length in ms (default {@link RELAY_LEASE_MS}). */
  leaseMs?: number;
  /** Outbox documents per pass (default {@link RELAY_BATCH}). */
  batch?: number;
  /** Events per pass at most (default {@link RELAY_MAX_EVENTS}; at least one outbox document is taken). */
  maxEvents?: number;
  /** Bytes of events per pass at most (default {@link RELAY_MAX_BYTES}; at least one outbox document is taken). */
  maxBytes?: number;
  /** End of the lease the caller knows it holds (ms); lets an idle pass skip reading the state. */
  leaseUntil?: number;
  /** Wall clock in ms (default `Date.now`; tests move it). */
  now?: () => number;
  /**
   * The process's tracer (the running relay's, when tracing is on): a pass that finds writes
   * pending is then an `events.relay` span, the root of its own trace, linked to the writes it
   * numbers ({@link relaySpan}). Without it no span is made and no trace context is read.
   */
  tracer?: Tracer | undefined;
}

/** Outcome of one relay pass. */
export interface RelayPass {
  /** Another holder has the lease: nothing was done. */
  busy: boolean;
  /** The events numbered by this pass, in `seq` order, as envelopes. */
  numbered: EventEnvelope[];
  /** The pass took all it could (a full batch, or as many events or bytes as it may): more may be waiting. */
  more: boolean;
  /** End of the lease this holder has after the pass (0: none). */
  leaseUntil: number;
}

/** Find options of an "is there one" read of the outbox: one document, its `_id` only. */
const ONE_ID = { limit: 1, projection: { _id: 1 } } as const;

const idle = (leaseUntil = 0): RelayPass => ({ busy: false, numbered: [], more: false, leaseUntil });

/** The documents a write changed, with the version it left them at (`t:<task id>`, `b:<board id>` → version). */
function versionsOf(entry: OutboxDoc): Map<string, number> {
  const out = new Map<string, number>();
  const note = (key: string, v: unknown) => {
    if (typeof v === 'number') out.set(key, Math.max(out.get(key) ?? v, v));
  };
  for (const e of entry.events) {
    const task = e.data.task as { id?: unknown; version?: unknown } | undefined;
    const board = e.data.board as { id?: unknown; version?: unknown } | undefined;
    if (typeof task?.id === 'string') note(`t:${task.id}`, task.version);
    if (typeof board?.id === 'string') note(`b:${board.id}`, board.version);
  }
  return out;
}

/**
 * Orders one pass's outbox documents (given in `_id` order) so that writes to the same task or
 * board come in commit order, whatever the clocks that made the time-ordered ids: such writes
 * are serialized by the store (each is pinned at the version the previous one left), so the
 * version each left in its events orders them. A write whose version of some document is higher
 * than a waiting write's goes after it; otherwise `_id` order stands. (Every write committed
 * before a later one to the same document is visible to the pass that sees the later one: the
 * pass reads one snapshot.)
 */
export function causalOrder(entries: readonly OutboxDoc[]): OutboxDoc[] {
  if (entries.length < 2) return [...entries]; // one write is in its own order: no versions read
  const versions = entries.map(versionsOf);
  const last = new Map<string, number>();
  let inOrder = true;
  outer: for (const vs of versions) {
    for (const [k, v] of vs) {
      if ((last.get(k) ?? -Infinity) > v) {
        inOrder = false;
        break outer;
      }
      last.set(k, v);
    }
  }
  if (inOrder) return [...entries];
  const waiting = entries.map((_, i) => i);
  const out: OutboxDoc[] = [];
  while (waiting.length > 0) {
    const lowest = new Map<string, number>();
    for (const i of waiting) for (const [k, v] of versions[i]!) lowest.set(k, Math.min(lowest.get(k) ?? v, v));
    const at = waiting.findIndex((i) => [...versions[i]!].every(([k, v]) => v <= lowest.get(k)!));
    const [i] = waiting.splice(Math.max(at, 0), 1);
    out.push(entries[i!]!);
  }
  return out;
}

/** The outbox documents' sizes a pass reads first (`_id`, `event_count`, `bytes`). */
type OutboxHead = Pick<OutboxDoc, '_id' | 'event_count' | 'bytes'>;

/**
 * The oldest of `heads` (in `_id` order) that one pass takes: as many as fit in `maxEvents` events
 * and `maxBytes` bytes, and at least one. A document without recorded sizes counts as one event of
 * no bytes.
 */
export function passOf(heads: readonly OutboxHead[], maxEvents: number, maxBytes: number): OutboxHead[] {
  let events = 0;
  let bytes = 0;
  let n = 0;
  for (const h of heads) {
    events += h.event_count ?? 1;
    bytes += h.bytes ?? 0;
    if (n > 0 && (events > maxEvents || bytes > maxBytes)) break;
    n++;
  }
  return heads.slice(0, n);
}

/**
 * One relay pass (see the file comment): numbers up to `batch` outbox documents, oldest first
 * ({@link causalOrder}), holding at most `maxEvents` events and `maxBytes` bytes (at least one
 * document: {@link passOf}; their sizes are read first, then only those documents), in one store transaction, when this holder may (the lease is free, expired
 * or its own). An idle pass (nothing pending, no lease to renew) is one read of `outbox` and no
 * transaction. Each numbered event keeps its write's `traceparent` (stored, not in the envelope).
 * Returns what it numbered. Errors: the store's (503); `CONFLICT` (409) when another pass
 * committed first (nothing written; the next pass goes on from there).
 */
export async function relayOutbox(store: DocumentStore, opts: RelayOptions = {}): Promise<RelayPass> {
  const holder = opts.holder ?? PROCESS_HOLDER;
  const hold = opts.hold ?? false;
  const leaseMs = opts.leaseMs ?? RELAY_LEASE_MS;
  const batch = opts.batch ?? RELAY_BATCH;
  const maxEvents = opts.maxEvents ?? RELAY_MAX_EVENTS;
  const maxBytes = opts.maxBytes ?? RELAY_MAX_BYTES;
  const now = opts.now ?? Date.now;
  const counters = store.collection<RelayState>(Collections.counters);
  const outbox = store.collection<OutboxDoc>(Collections.outbox);
  const events = store.collection<EventDoc>(Collections.events);

  const heldByOther = (s: RelayState | null, t: number) => s?.holder !== undefined && s.holder !== holder && (s.lease_until ?? 0) > t;

  // Without a transaction when there is nothing to do: nothing pending (and no lease to renew), or
  // another holder's lease (a read of the state; the pass below checks it again in its transaction).
  const known = hold && (opts.leaseUntil ?? 0) - now() > leaseMs / 2;
  // "is anything there": one id (an idle relay asks it 50 times a second; a pending document
  // holds a write's events, up to OUTBOX_PART_BYTES, which MongoDB would otherwise send each time)
  // With a tracer these reads make no spans: only a pass that numbers is one (relaySpan).
  const { tracer } = opts;
  const anyPending = (await untraced(tracer, () => outbox.find({}, ONE_ID))).length > 0;
  if (!anyPending && (!hold || known)) return idle(known ? opts.leaseUntil : 0);
  if (!known && heldByOther(await untraced(tracer, () => counters.findOne({ _id: EVENTS_COUNTER })), now())) return { busy: true, numbered: [], more: false, leaseUntil: 0 };

  // the outbox documents the committed attempt numbered (for the span's links)
  let carried: readonly OutboxDoc[] = [];
  const pass = () => store.withTransaction(async (session): Promise<RelayPass> => {
    carried = [];
    const t = now();
    const state = await counters.findOne({ _id: EVENTS_COUNTER }, { session });
    if (heldByOther(state, t)) return { busy: true, numbered: [], more: false, leaseUntil: 0 };
    const ownLease = state?.holder === holder && (state.lease_until ?? 0) > t ? state.lease_until! : 0;
    const renew = hold && ownLease - t <= leaseMs / 2;
    const heads = await outbox.find({}, { sort: { _id: 1 }, limit: batch, projection: { _id: 1, event_count: 1, bytes: 1 }, session });
    if (heads.length === 0 && !renew) return idle(ownLease);
    const taken = passOf(heads, maxEvents, maxBytes);
    const pending = taken.length === 0 ? [] : await outbox.find({ _id: { $in: taken.map((h) => h._id) } }, { sort: { _id: 1 }, session });

    const leaseUntil = renew ? t + leaseMs : ownLease;
    let seq = state?.seq ?? 0;
    const numbered: EventDoc[] = [];
    // the write's trace context goes with each of its events (internal; the envelope leaves it out)
    for (const entry of causalOrder(pending)) {
      for (const e of entry.events) numbered.push(entry.traceparent === undefined ? { ...e, seq: ++seq } : { ...e, seq: ++seq, traceparent: entry.traceparent });
    }
    if (numbered.length > 0) await events.insertMany(numbered, { session });
    if (pending.length > 0) {
      const { deletedCount } = await outbox.deleteMany({ _id: { $in: pending.map((p) => p._id) } }, { session });
      if (deletedCount !== pending.length) throw new AppError('CONFLICT', { message: 'Another relay pass numbered these outbox entries first' });
    }
    const next = { seq, holder, lease_until: leaseUntil };
    if (state) {
      // compare-and-set on what this pass read: a pass of another holder in between changed one of them
      const guard = {
        _id: EVENTS_COUNTER,
        seq: state.seq ?? { $exists: false },
        holder: state.holder ?? { $exists: false },
        lease_until: state.lease_until ?? { $exists: false },
      };
      const r = await counters.updateOne(guard, { $set: next }, { session });
      if (r.matchedCount !== 1) throw new AppError('CONFLICT', { message: 'Another relay pass moved the events counter first' });
    } else {
      await counters.insertOne({ _id: EVENTS_COUNTER, ...next }, { session });
    }
    carried = pending;
    return { busy: false, numbered: numbered.map(toEnvelope), more: heads.length === batch || taken.length < heads.length, leaseUntil };
  });
  // a pass that only renews the lease is no span (it would be one every lease half-life while idle)
  return tracer && anyPending ? relaySpan(tracer, pass, () => carried) : untraced(tracer, pass);
}

/**
 * Runs one relay pass in an `events.relay` span (INTERNAL), the root of a new trace (a background
 * job, not part of any request), whose store calls are its children. After the pass it links to
 * the writes it numbered: one link per outbox document with a trace context, at most
 * `MAX_SPAN_LINKS` (128; `events.links_dropped` counts the rest), with `events.count` (events
 * numbered), `events.write_count` (outbox documents) and the first and last `seq`.
 */
async function relaySpan(tracer: Tracer, pass: () => Promise<RelayPass>, carried: () => readonly OutboxDoc[]): Promise<RelayPass> {
  return inRootSpan(tracer, 'events.relay', { kind: SpanKind.INTERNAL }, async (span) => {
    const r = await pass();
    // links known only once the pass has read (and committed) the outbox documents
    const writes = carried();
    const { links, dropped } = linksTo(writes.map((w) => w.traceparent));
    span.addLinks(links);
    span.setAttributes({ 'events.count': r.numbered.length, 'events.write_count': writes.length, 'events.links_dropped': dropped });
    if (r.numbered.length > 0) span.setAttributes({ 'events.seq.first': r.numbered[0]!.seq, 'events.seq.last': r.numbered[r.numbered.length - 1]!.seq });
    if (r.busy) span.setAttribute('events.busy', true);
    return r;
  });
}

/**
 * Read-your-writes for a reader (the feed, the SSE stream's start, the burndown): makes every
 * outbox document committed before the call numbered before it returns, when possible within
 * `waitMs` (default {@link CATCH_UP_WAIT_MS}). With nothing pending it is one read. Otherwise it
 * runs relay passes itself when the lease is free or this process's ({@link relayOutbox} without
 * `hold`), and while another process holds it, waits for that relay (looking every 5 ms). After
 * `waitMs` by the options' clock `now` (default `Date.now`) it returns anyway (the reader then shows what is numbered; the rest follows). Errors:
 * the store's (503).
 */
export async function catchUpOutbox(store: DocumentStore, opts: Omit<RelayOptions, 'hold'> & { waitMs?: number } = {}): Promise<void> {
  const outbox = store.collection<OutboxDoc>(Collections.outbox);
  const now = opts.now ?? Date.now;
  const [newest] = await outbox.find({}, { ...ONE_ID, sort: { _id: -1 } });
  if (!newest) return;
  const until = now() + (opts.waitMs ?? CATCH_UP_WAIT_MS);
  for (;;) {
    let busy = true;
    try {
      busy = (await relayOutbox(store, { ...opts, hold: false })).busy;
    } catch (e) {
      // another pass committed first (409): look again; a store fault (503) is the reader's answer
      if (!AppError.is(e) || e.code !== 'CONFLICT') throw e;
    }
    if ((await outbox.find({ _id: { $lte: newest._id } }, ONE_ID)).length === 0) return;
    if (now() >= until) return;
    await sleep(busy ? 5 : 0);
  }
}

/** Options of {@link EventRelay}. */
export interface EventRelayOptions {
  /** Lease holder name; default {@link PROCESS_HOLDER}. */
  holder?: string;
  /** Lease length in ms (default {@link RELAY_LEASE_MS}). */
  leaseMs?: number;
  /** Least time between two passes in ms (default {@link RELAY_INTERVAL_MS}). */
  intervalMs?: number;
  /**
   * Time between two passes when no commit was signalled ({@link EventRelay.nudge}), in ms
   * (default `intervalMs`). Where every writer is in this process and signals its commits (the
   * all-in-one on the in-process bus), a long poll is only a safety net.
   */
  pollMs?: number;
  /** Outbox documents per pass (default {@link RELAY_BATCH}). */
  batch?: number;
  /** Events per pass (default {@link RELAY_MAX_EVENTS}). */
  maxEvents?: number;
  /** Bytes of events per pass (default {@link RELAY_MAX_BYTES}). */
  maxBytes?: number;
  log?: Logger;
  /** The process's tracer: each pass that numbers events is an `events.relay` span linked to the writes ({@link RelayOptions.tracer}). */
  tracer?: Tracer | undefined;
}

/**
 * The running relay of a process (the query service's background work, in every replica): polls
 * the outbox every `pollMs`, and right after a signalled commit ({@link nudge}, at most one pass
 * per `intervalMs`), and numbers what is pending while it holds the lease (taking it
 * when free or expired, renewing it at half its length). The other replicas' relays find it
 * held and wait; when the holder dies, the first to look after its lease expired takes over from
 * the last committed `seq`. `onRelayed` listeners get each pass's numbered events (the JetStream
 * publisher of the same process sends them on at once). `close` gives the lease up.
 *
 * A pass that fails (other than losing a race, 409) halves the next pass's bounds (documents,
 * events, bytes; down to one outbox document), and each pass that commits doubles them back up to
 * the options': a backlog whose passes outgrow the store's transaction deadline still drains
 * instead of retrying the same too-large pass forever (docs/events.md "The relay's passes").
 */
export class EventRelay {
  private readonly listeners = new Set<(events: EventEnvelope[]) => void>();
  private readonly holder: string;
  private readonly leaseMs: number;
  private readonly intervalMs: number;
  private readonly batch: number;
  private readonly maxEvents: number;
  private readonly maxBytes: number;
  /** The share of the bounds the next pass uses (1: all; halved after a failed pass, doubled back after one that commits). */
  private scale = 1;
  private leaseUntil = 0;
  private readonly pollMs: number;
  private timer: NodeJS.Timeout | undefined;
  private timerAt = 0;
  private lastPass = 0;
  private ticking = false;
  private nudged = false;
  private running: Promise<void> = Promise.resolve();
  private stopped = false;

  constructor(
    private readonly store: DocumentStore,
    private readonly opts: EventRelayOptions = {},
  ) {
    this.holder = opts.holder ?? PROCESS_HOLDER;
    this.leaseMs = opts.leaseMs ?? RELAY_LEASE_MS;
    this.intervalMs = opts.intervalMs ?? RELAY_INTERVAL_MS;
    this.pollMs = opts.pollMs ?? this.intervalMs;
    this.batch = opts.batch ?? RELAY_BATCH;
    this.maxEvents = opts.maxEvents ?? RELAY_MAX_EVENTS;
    this.maxBytes = opts.maxBytes ?? RELAY_MAX_BYTES;
  }

  /** The next pass's bounds: the options' times the current scale, at least one document and one event. */
  get bounds(): { batch: number; maxEvents: number; maxBytes: number } {
    const of = (n: number) => Math.max(1, Math.floor(n * this.scale));
    return { batch: of(this.batch), maxEvents: of(this.maxEvents), maxBytes: of(this.maxBytes) };
  }

  /** Starts polling (the first pass at once). Returns this relay. */
  start(): this {
    this.running = this.tick();
    return this;
  }

  /** True while this relay holds the lease (as far as it knows). */
  get leading(): boolean {
    return this.leaseUntil > Date.now();
  }

  /** Adds a listener of numbered events (called after each pass's commit, in `seq` order); returns its remover. */
  onRelayed(listener: (events: EventEnvelope[]) => void): () => void {
    this.listeners.add(listener);
    return () => void this.listeners.delete(listener);
  }

  /** One pass now, holding the lease (also what the poll runs). */
  async pass(): Promise<RelayPass> {
    let r: RelayPass;
    try {
      r = await relayOutbox(this.store, {
        holder: this.holder, hold: true, leaseMs: this.leaseMs, ...this.bounds, leaseUntil: this.leaseUntil, tracer: this.opts.tracer,
      });
    } catch (err) {
      // a pass too large for the store's deadline fails the same way every time: take less next time
      if (!(AppError.is(err) && err.code === 'CONFLICT')) this.scale = Math.max(this.scale / 2, 1 / (2 * Math.max(this.batch, this.maxEvents)));
      throw err;
    }
    if (!r.busy) this.scale = Math.min(1, this.scale * 2);
    this.leaseUntil = r.leaseUntil;
    if (r.numbered.length > 0) {
      for (const l of this.listeners) {
        try {
          l(r.numbered);
        } catch (err) {
          this.opts.log?.warn({ err }, 'relay listener failed');
        }
      }
    }
    return r;
  }

  /**
   * A write of this process committed events (the all-in-one's services signal it, `OutboxSignal`):
   * a pass runs at once, or, when one ran less than `intervalMs` ago, that long after it (at most
   * one pass per interval under load, so a pass still numbers many writes; none while idle).
   */
  nudge(): void {
    if (this.stopped) return;
    if (this.ticking) {
      this.nudged = true;
      return;
    }
    const at = Math.max(Date.now(), this.lastPass + this.intervalMs);
    if (this.timer && this.timerAt <= at) return;
    this.schedule(at - Date.now());
  }

  private schedule(ms: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timerAt = Date.now() + ms;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.running = this.tick();
    }, ms);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    this.ticking = true;
    this.lastPass = Date.now();
    let more = false;
    try {
      more = (await this.pass()).more;
    } catch (err) {
      // 409: another pass won (nothing written); 503: the store is away. Either way: next tick.
      if (!this.stopped && !(AppError.is(err) && err.code === 'CONFLICT')) this.opts.log?.warn({ err, next: this.bounds }, 'outbox relay pass failed; retrying with a smaller pass');
    }
    this.ticking = false;
    if (this.stopped) return;
    // a full batch: on at once; a commit signalled meanwhile: after the interval; else the poll
    const nudged = this.nudged;
    this.nudged = false;
    this.schedule(more ? 0 : nudged ? Math.min(this.intervalMs, this.pollMs) : this.pollMs);
  }

  /** Stops polling, waits for a pass in flight and gives the lease up (a successor need not wait for it to expire). */
  async close(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
    if (this.leaseUntil > 0) {
      this.leaseUntil = 0;
      await this.store
        .collection<RelayState>(Collections.counters)
        .updateOne({ _id: EVENTS_COUNTER, holder: this.holder }, { $set: { lease_until: 0 } })
        .catch((err: unknown) => this.opts.log?.warn({ err }, 'relay lease not released; it expires by itself'));
    }
  }
}
