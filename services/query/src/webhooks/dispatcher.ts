import type { Logger } from 'pino';
import type { EventEnvelope } from '@app/shared/contracts';
import { loadPrincipal, queryLookups, type Clock, type Principal, type TaskDoc } from '@app/shared/domain';
import { AppError } from '@app/shared/errors';
import { AccessSnapshot } from '@app/shared/events';
import { parseQuery, queryMatches, resolveQuery, type Query } from '@app/shared/query';
import { encodeMetadata, type DocumentStore } from '@app/shared/store';
import { ATTEMPT_LOG_MAX, deliveriesOf, deliveryId, NO_LEASE, webhooksOf, type DeliveryDoc, type WebhookDoc } from './model.js';
import type { Sender } from './send.js';
import { readableView } from '../handlers/views.js';
import { inRootSpan, SpanKind, spanContextOf, SpanStatusCode, statusClass, type Metrics, type Span, type Tracer } from '@app/shared/observability';

/** A webhook failing this long without a success is disabled. */
export const DISABLE_AFTER_MS = 24 * 60 * 60 * 1000;
/** Default attempts per delivery (`WEBHOOK_MAX_ATTEMPTS`). */
export const DEFAULT_MAX_ATTEMPTS = 6;
/**
 * Webhooks a dispatcher replica delivers to at once. Each webhook has at most one attempt in flight
 * (its deliveries stay sequential, in `seq` order), so a slow or hanging receiver holds only its
 * own slot: the others go on (docs/events.md "Delivery").
 */
export const PARALLEL_WEBHOOKS = 64;
/** How often a webhook waiting for a retry is looked at again anyway (ms). */
const WAITING_RECHECK_MS = 1_000;
/** The logged error of an attempt not sent because the owner lost access. */
const NOT_VISIBLE = 'not sent: the webhook owner can no longer read what this event is about';
/** Delay before the first retry, before jitter; each later retry waits 4× longer. */
export const FIRST_RETRY_MS = 10_000;

/**
 * Delay in ms before the attempt after failed attempt `attempt` (1-based): exponential backoff
 * with ±20 % jitter, `10 s · 4^(attempt-1)`: ~10 s, 40 s, 2.7 min, 11 min, 43 min, so the
 * default 6 attempts span about an hour and the first retry comes within 12 s.
 * `random` is in [0, 1).
 */
export function backoffMs(attempt: number, random: () => number = Math.random): number {
  return Math.round(FIRST_RETRY_MS * 4 ** (attempt - 1) * (0.8 + 0.4 * random()));
}

/** What the dispatcher is built from; clock, random and sender are injectable for tests. */
export interface DispatcherDeps {
  store: DocumentStore;
  clock: Clock;
  log: Logger;
  sender: Sender;
  maxAttempts?: number;
  random?: () => number;
  /** How long a replica holds a delivery it attempts (ms; longer than an attempt's timeout). */
  leaseMs?: number;
  /** Counts attempts by outcome (`webhook_attempts_total`: `delivered`, `retry`, `failed`). */
  metrics?: Metrics | undefined;
  /**
   * The process's tracer: each attempt is then a `webhook deliver` span linked to the write that
   * emitted the event, and deliveries keep that write's trace context ({@link WebhookDispatcher.fanOut}).
   */
  tracer?: Tracer | undefined;
}

/** What an attempt came to: `webhook_attempts_total`'s `outcome`, and whether the webhook's later deliveries may go next. */
interface Recorded {
  outcome: 'delivered' | 'retry' | 'failed';
  goOn: boolean;
}

/** The task "after the change" of a task event, as a stored task for the query matcher; undefined when the event carries none. */
function taskAfter(e: EventEnvelope): TaskDoc | undefined {
  const t = (e.data as Record<string, unknown>).task as Record<string, unknown> | undefined;
  if (!t || typeof t.id !== 'string') return undefined;
  return {
    description: '', linkedToIds: [], resourceIds: [], ...t,
    _id: t.id, metadata: encodeMetadata((t.metadata as Record<string, unknown> | undefined) ?? {}), deleted: false,
  } as unknown as TaskDoc;
}

/**
 * The webhook dispatcher, store-backed so any number of replicas can run it:
 * `fanOut` turns committed events into one delivery document per matching webhook (idempotent:
 * the delivery id is derived from webhook and event), and `deliverDue` makes the attempts that
 * are due — per webhook strictly in `seq` order (a delivery waiting for its retry holds back the
 * later ones), each claimed with a lease so two replicas never make the same attempt.
 */
export class WebhookDispatcher {
  private readonly maxAttempts: number;
  private readonly random: () => number;
  private readonly leaseMs: number;
  private readonly queries = new Map<string, Query>();
  /** Webhooks being delivered to now (one drain each), by id. */
  private readonly inFlight = new Map<string, Promise<number>>();
  /** Webhooks whose oldest pending delivery waits for its retry, by id: until when (ISO). */
  private readonly waiting = new Map<string, string>();

  constructor(private readonly deps: DispatcherDeps) {
    this.maxAttempts = deps.maxAttempts ?? DEFAULT_MAX_ATTEMPTS;
    this.random = deps.random ?? Math.random;
    this.leaseMs = deps.leaseMs ?? 60_000;
  }

  private query(text: string): Query {
    let q = this.queries.get(text);
    if (!q) {
      q = parseQuery(text);
      if (this.queries.size > 1000) this.queries.clear();
      this.queries.set(text, q);
    }
    return q;
  }

  /**
   * The webhook's query (or its saved view's current query) with its functions resolved for its
   * owner (`me()` = the owner, `activeSprint()` = the running sprint of the view's or webhook's
   * board); null when it has none, false when it no longer parses or resolves (the board or the
   * view became unreadable, the view was deleted): then no task event matches.
   */
  private async resolvedQuery(w: WebhookDoc, owner: Principal, now: Date): Promise<Query | null | false> {
    let text = w.query;
    let boardId = w.board_id;
    try {
      if (w.view_id !== undefined) {
        // the view's current query and board, as long as the owner can still read the view
        const view = await readableView(this.deps.store, owner, w.view_id);
        text = view.query;
        boardId = view.board_id ?? w.board_id;
      }
      if (text === undefined || text.trim() === '') return null;
      const ctx = { userId: owner.userId, now, ...(boardId !== undefined ? { boardId } : {}) };
      return await resolveQuery(this.query(text), ctx, queryLookups(this.deps.store, owner));
    } catch {
      return false;
    }
  }

  /** True when webhook `w` wants event `e` (type, board, its resolved query `q` on the task after the change). */
  private wants(w: WebhookDoc, e: EventEnvelope, now: Date, q: Query | null | false): boolean {
    if (e.seq <= w.after_seq) return false;
    if (!w.events.includes('*') && !w.events.includes(e.type)) return false;
    if (w.board_id !== undefined && e.board_id !== w.board_id) return false;
    if (q !== null) {
      const task = taskAfter(e);
      if (task) {
        if (q === false) return false;
        try {
          if (!queryMatches(q, task, now)) return false;
        } catch {
          return false;
        }
      }
    }
    return true;
  }

  /**
   * Creates the deliveries of `events` (oldest first) for every active webhook that wants them and
   * whose owner can read what they are about now (docs/architecture.md §5). Returns how many were created.
   * `traceparents` (event id → the write's `traceparent`) is kept on the deliveries when this
   * dispatcher traces, for the attempts' span links.
   */
  async fanOut(events: readonly EventEnvelope[], traceparents?: ReadonlyMap<string, string>): Promise<number> {
    if (events.length === 0) return 0;
    const { store, clock } = this.deps;
    const hooks = await webhooksOf(store).find({ active: true });
    if (hooks.length === 0) return 0;
    const now = clock.now();
    const access = await AccessSnapshot.load(store, events);
    const principals = new Map<string, Principal>();
    for (const owner of new Set(hooks.map((h) => h.owner_id))) principals.set(owner, await loadPrincipal(store, owner));
    const queries = new Map<string, Query | null | false>();
    for (const w of hooks) queries.set(w._id, await this.resolvedQuery(w, principals.get(w.owner_id)!, now));
    const iso = now.toISOString();
    const traces = this.deps.tracer ? traceparents : undefined;
    const docs: DeliveryDoc[] = [];
    for (const e of events) {
      const traceparent = traces?.get(e.id);
      for (const w of hooks) {
        if (!this.wants(w, e, now, queries.get(w._id)!) || !access.canRead(principals.get(w.owner_id)!, e)) continue;
        docs.push({
          _id: deliveryId(w._id, e.id), webhook_id: w._id, event_id: e.id, event_type: e.type, seq: e.seq, event: e,
          status: 'pending', attempt: 0, next_attempt_at: iso, lease_until: NO_LEASE, attempts: [], created_at: iso, updated_at: iso,
          ...(traceparent === undefined ? {} : { traceparent }),
        });
      }
    }
    if (docs.length === 0) return 0;
    const existing = new Set((await deliveriesOf(store).find({ _id: { $in: docs.map((d) => d._id) } }, { projection: { _id: 1 } })).map((d) => d._id));
    const fresh = docs.filter((d) => !existing.has(d._id));
    try {
      if (fresh.length) await deliveriesOf(store).insertMany(fresh);
    } catch (e) {
      if (!AppError.is(e) || e.code !== 'CONFLICT') throw e;
      for (const d of fresh) await deliveriesOf(store).insertOne(d).catch((err: unknown) => (AppError.is(err) && err.code === 'CONFLICT' ? undefined : Promise.reject(err)));
    }
    return fresh.length;
  }

  /**
   * Starts delivering to every webhook with an attempt due now that is not being delivered to
   * already, up to {@link PARALLEL_WEBHOOKS} webhooks at once, and returns without waiting for them
   * ({@link settle} does). Each webhook's deliveries go one at a time in `seq` order; webhooks are
   * independent: one whose receiver hangs until the attempt timeout delays only its own deliveries,
   * and its backlog does not hide the others' due deliveries (webhooks in flight, or waiting for a
   * retry, are left out of the search). Returns how many webhooks it started.
   */
  async deliverDue(): Promise<number> {
    if (this.inFlight.size >= PARALLEL_WEBHOOKS) return 0;
    const nowIso = this.deps.clock.now().toISOString();
    for (const [id, until] of this.waiting) if (until <= nowIso) this.waiting.delete(id);
    const skip = [...this.inFlight.keys(), ...this.waiting.keys()];
    const due = await deliveriesOf(this.deps.store).find(
      { status: 'pending', next_attempt_at: { $lte: nowIso }, ...(skip.length > 0 ? { webhook_id: { $nin: skip } } : {}) },
      { sort: { seq: 1 }, limit: 500, projection: { webhook_id: 1 } },
    );
    let started = 0;
    for (const id of new Set(due.map((d) => d.webhook_id))) {
      if (this.inFlight.size >= PARALLEL_WEBHOOKS) break;
      if (this.inFlight.has(id)) continue;
      const run = this.drain(id)
        .catch((err: unknown) => {
          this.deps.log.warn({ err, webhookId: id }, 'webhook delivery failed; retrying next tick');
          return 0;
        })
        .finally(() => this.inFlight.delete(id));
      this.inFlight.set(id, run);
      started++;
    }
    return started;
  }

  /** Waits until the deliveries started so far are done (shutdown, tests); returns the attempts they made. */
  async settle(): Promise<number> {
    let made = 0;
    while (this.inFlight.size > 0) made += (await Promise.all([...this.inFlight.values()])).reduce((a, b) => a + b, 0);
    return made;
  }

  /** Attempts webhook `id`'s deliveries in `seq` order while the oldest pending one is due (at most 100 per call). */
  private async drain(id: string): Promise<number> {
    const { store, clock } = this.deps;
    let made = 0;
    for (let i = 0; i < 100; i++) {
      const now = clock.now();
      const nowIso = now.toISOString();
      const [head] = await deliveriesOf(store).find({ webhook_id: id, status: 'pending' }, { sort: { seq: 1 }, limit: 1 });
      if (!head) break;
      if (head.next_attempt_at > nowIso) {
        // its later deliveries look due too: leave the webhook out of the search until its retry,
        // looking again each second (a retry asked for through the API makes it due sooner)
        const recheck = new Date(now.getTime() + WAITING_RECHECK_MS).toISOString();
        this.waiting.set(id, head.next_attempt_at < recheck ? head.next_attempt_at : recheck);
        break;
      }
      if (head.lease_until > nowIso) break;
      const hook = await webhooksOf(store).findOne({ _id: id });
      if (!hook || !hook.active) break;
      const leased = await deliveriesOf(store).findOneAndUpdate(
        { _id: head._id, status: 'pending', lease_until: head.lease_until },
        { $set: { lease_until: new Date(now.getTime() + this.leaseMs).toISOString() } },
      );
      if (!leased) break;
      const tracer = this.deps.tracer;
      const goOn = tracer
        ? await this.attemptSpan(tracer, hook, head, (span) => this.attempt(hook, head, nowIso, span))
        : await this.attempt(hook, head, nowIso);
      if (goOn === undefined) continue;
      made++;
      if (!goOn) break;
    }
    return made;
  }

  /**
   * One attempt at leased delivery `head`: not sent when the owner can no longer read what it is
   * about (the delivery fails; returns undefined), else the POST and its record. Returns whether
   * the webhook's later deliveries may go next (false also when recording failed). `span` (when
   * tracing) gets the attempt's outcome, HTTP status and status class.
   */
  private async attempt(hook: WebhookDoc, head: DeliveryDoc, nowIso: string, span?: Span): Promise<boolean | undefined> {
    const { store, clock, log } = this.deps;
    if (!(await this.stillVisible(hook, head))) {
      await deliveriesOf(store).updateOne(
        { _id: head._id },
        {
          $set: {
            status: 'failed', attempt: head.attempt + 1, lease_until: NO_LEASE, updated_at: nowIso,
            attempts: [...head.attempts, { attempt: head.attempt + 1, at: nowIso, duration_ms: 0, error: NOT_VISIBLE }].slice(-ATTEMPT_LOG_MAX),
          },
        },
      );
      span?.setAttributes({ 'webhook.outcome': 'failed', 'webhook.sent': false });
      span?.setStatus({ code: SpanStatusCode.ERROR, message: NOT_VISIBLE });
      return undefined;
    }
    const outcome = await this.deps.sender({ url: hook.url, id: head.event_id, body: JSON.stringify(head.event), secret: hook.secret, at: clock.now() });
    if (span) {
      span.setAttributes({
        'webhook.sent': true, 'http.response.status_class': outcome.status_code === undefined ? 'none' : statusClass(outcome.status_code),
        ...(outcome.status_code === undefined ? {} : { 'http.response.status_code': outcome.status_code }),
      });
      if (!outcome.ok) span.setStatus({ code: SpanStatusCode.ERROR, message: outcome.error ?? 'failed' });
    }
    try {
      const r = await this.record(hook, head, outcome);
      span?.setAttribute('webhook.outcome', r.outcome);
      return r.goOn;
    } catch (err) {
      log.warn({ err, webhookId: hook._id, deliveryId: head._id }, 'recording a webhook attempt failed');
      return false;
    }
  }

  /**
   * Runs one attempt in a `webhook deliver` span (CLIENT), the root of a new trace (the attempt is
   * background work), linked to the write that emitted the event when the delivery kept its trace
   * context. Attributes: `webhook.attempt` (this attempt's number), `webhook.outcome`, the HTTP
   * status and its class, the target's host only (`server.address`: never its path, query or
   * credentials), and the webhook, delivery and event ids and the event type (ids are span
   * attributes, never metric labels). The store calls recording the attempt are its children.
   */
  private async attemptSpan<R>(tracer: Tracer, hook: WebhookDoc, head: DeliveryDoc, fn: (span: Span) => Promise<R>): Promise<R> {
    const write = spanContextOf(head.traceparent);
    const host = URL.canParse(hook.url) ? new URL(hook.url).hostname : undefined;
    const attributes = {
      'webhook.attempt': head.attempt + 1, 'webhook.id': hook._id, 'webhook.delivery.id': head._id, 'event.id': head.event_id, 'event.type': head.event_type,
      'http.request.method': 'POST', ...(host ? { 'server.address': host } : {}),
    };
    return inRootSpan(tracer, 'webhook deliver', { kind: SpanKind.CLIENT, ...(write ? { links: [{ context: write }] } : {}), attributes }, fn);
  }

  /** Access at delivery time (docs/architecture.md §5): the owner must still be able to read what the event is about. */
  private async stillVisible(hook: WebhookDoc, d: DeliveryDoc): Promise<boolean> {
    const [principal, access] = await Promise.all([loadPrincipal(this.deps.store, hook.owner_id), AccessSnapshot.load(this.deps.store, [d.event])]);
    return access.canRead(principal, d.event);
  }

  /** Writes an attempt's outcome; returns it, and whether later deliveries of the webhook may go next. */
  private async record(hook: WebhookDoc, d: DeliveryDoc, o: Awaited<ReturnType<Sender>>): Promise<Recorded> {
    const { store, clock, log } = this.deps;
    const now = clock.now();
    const iso = now.toISOString();
    const attempt = d.attempt + 1;
    const entry = { attempt, at: iso, duration_ms: o.duration_ms, ...(o.status_code !== undefined ? { status_code: o.status_code } : {}), ...(o.error ? { error: o.error } : {}) };
    const attempts = [...d.attempts, entry].slice(-ATTEMPT_LOG_MAX);
    // a retry asked for while pending is an attempt on top of the schedule (not counted against the limit)
    const extra_attempts = (d.extra_attempts ?? 0) + (d.bonus === true ? 1 : 0);
    const done = { attempt, attempts, extra_attempts, lease_until: NO_LEASE, manual: false, bonus: false, updated_at: iso };
    const scheduled = attempt - extra_attempts;
    const exhausted = d.manual === true || (d.bonus !== true && scheduled >= this.maxAttempts);
    const outcome = o.ok ? 'delivered' : exhausted ? 'failed' : 'retry';
    this.deps.metrics?.webhookAttempts.labels(outcome).inc();
    if (o.ok) {
      await deliveriesOf(store).updateOne({ _id: d._id }, { $set: { status: 'delivered', ...done }, $unset: { resume_at: '' } });
      if (hook.failing_since !== undefined) await webhooksOf(store).updateOne({ _id: hook._id }, { $unset: { failing_since: '' } });
      return { outcome, goOn: true };
    }
    // after an extra attempt the schedule goes on: the scheduled attempt keeps its time when still ahead
    const next = d.bonus === true && d.resume_at !== undefined && d.resume_at > iso
      ? d.resume_at
      : new Date(now.getTime() + backoffMs(Math.max(1, scheduled), this.random)).toISOString();
    await deliveriesOf(store).updateOne(
      { _id: d._id },
      { $set: { status: exhausted ? 'failed' : 'pending', ...done, next_attempt_at: next }, $unset: { resume_at: '' } },
    );
    const since = hook.failing_since ?? iso;
    if (hook.failing_since === undefined) await webhooksOf(store).updateOne({ _id: hook._id, failing_since: { $exists: false } }, { $set: { failing_since: iso } });
    if (now.getTime() - Date.parse(since) >= DISABLE_AFTER_MS) {
      const reason = `disabled: every delivery failed since ${since} (24 h); PATCH active: true to re-enable`;
      await webhooksOf(store).updateOne({ _id: hook._id }, { $set: { active: false, disabled_reason: reason, updated_at: iso } });
      log.warn({ webhookId: hook._id, since }, 'webhook disabled after failing for 24 h');
      return { outcome, goOn: false };
    }
    return { outcome, goOn: exhausted };
  }
}
