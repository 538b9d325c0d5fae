/**
 * Admission control and cost budgets (docs/http.md "Fair use"; docs/architecture.md §13): at the
 * gateway, in front of the bus request, so REST routes and MCP tool calls pass the same gate. Each
 * principal (the access token's id, else the user id) has
 * - a bound on its requests in flight at once, with a short queue behind it, then 429;
 * - a bound on its expensive requests in flight at once ({@link isExpensive});
 * - a cost budget in ms of measured server time: every reply's `costMs` (the service's handler
 *   time, reply metadata) is charged to it, and so is the gateway's own work for a request beside
 *   the bus (the MCP adapter's time, {@link Admission.charge}); it refills at a steady rate, and an
 *   expensive request of a principal whose budget is spent waits for the refill, or gets 429 with
 *   `Retry-After` when the refill would take longer than the queue wait.
 * Other principals are never slowed by one principal's queue or budget. Each gateway keeps its own
 * budgets (in distributed mode a principal may spend one budget per gateway).
 */
import { isExpensive, type AnyOp, type In, type Out } from '@app/shared/contracts';
import { AppError } from '@app/shared/errors';
import type { Bus, BusReply, CallMeta } from '@app/shared/bus';
import type { Metrics } from '@app/shared/observability';

/** The limits of admission control, in the units of their `shared/src/config` variables. */
export interface AdmissionLimits {
  /** `ADMISSION_IN_FLIGHT`: requests of one principal running at once. */
  inFlight: number;
  /** `ADMISSION_QUEUE`: requests of one principal waiting at once. */
  queue: number;
  /** `ADMISSION_QUEUE_WAIT_MS`: longest wait, ms. */
  queueWaitMs: number;
  /** `ADMISSION_EXPENSIVE_IN_FLIGHT`: expensive requests of one principal running at once. */
  expensiveInFlight: number;
  /** `COST_BUDGET_MS`: the full budget, ms of server time. */
  budgetMs: number;
  /** `COST_REFILL_MS_PER_SECOND`: refill, ms of server time per second. */
  refillMsPerSecond: number;
}

/** The {@link AdmissionLimits} of a loaded config. */
export function admissionLimits(c: {
  ADMISSION_IN_FLIGHT: number; ADMISSION_QUEUE: number; ADMISSION_QUEUE_WAIT_MS: number;
  ADMISSION_EXPENSIVE_IN_FLIGHT: number; COST_BUDGET_MS: number; COST_REFILL_MS_PER_SECOND: number;
}): AdmissionLimits {
  return {
    inFlight: c.ADMISSION_IN_FLIGHT, queue: c.ADMISSION_QUEUE, queueWaitMs: c.ADMISSION_QUEUE_WAIT_MS,
    expensiveInFlight: c.ADMISSION_EXPENSIVE_IN_FLIGHT, budgetMs: c.COST_BUDGET_MS, refillMsPerSecond: c.COST_REFILL_MS_PER_SECOND,
  };
}


/** Why a request waited or was refused (the `reason` label of the admission metrics). */
type Reason = 'in_flight' | 'budget';

/** A request waiting for admission. */
interface Waiter {
  expensive: boolean;
  /** What held it when it began waiting. */
  reason: Reason;
  /** `performance.now()` when it began waiting. */
  since: number;
  admit: () => void;
  refuse: (e: AppError) => void;
}

/** What admission knows of one principal. */
class PrincipalState {
  inFlight = 0;
  expensiveInFlight = 0;
  /** Budget left at `refilledAt`, ms of server time (negative: in debt after a costly reply). */
  budget: number;
  refilledAt: number;
  readonly waiting: Waiter[] = [];

  constructor(
    readonly key: string,
    budget: number,
    now: number,
  ) {
    this.budget = budget;
    this.refilledAt = now;
  }
}

/** How often waiters are checked against their longest wait and the refilling budget, in ms. */
const SWEEP_MS = 10;
/** Principals known before idle ones (nothing in flight, budget full) are dropped. */
const PURGE_AT = 10_000;

/**
 * The admission gate (see the module comment). `enter` admits at once when it can (no promise,
 * no allocation for a known principal), else queues; `leave` frees the slot and charges the cost.
 * One interval, running only while some request waits, times the waiters out and re-checks budgets.
 */
export class Admission {
  /** Principals by user id (JWT requests) and by token id (access-token requests): two maps, so no key string is built per request. */
  private readonly users = new Map<string, PrincipalState>();
  private readonly tokens = new Map<string, PrincipalState>();
  /** Principals with waiters. */
  private readonly queued = new Set<PrincipalState>();
  private sweeper: ReturnType<typeof setInterval> | undefined;
  private readonly refillPerMs: number;

  constructor(
    readonly limits: AdmissionLimits,
    private readonly metrics?: Metrics,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.refillPerMs = limits.refillMsPerSecond / 1000;
  }

  /** The state of a principal (`kind` user or token, and its id), made on its first request. */
  stateOf(kind: 'user' | 'token', id: string): PrincipalState {
    const map = kind === 'user' ? this.users : this.tokens;
    let s = map.get(id);
    if (s === undefined) {
      if (map.size >= PURGE_AT) this.purge(map);
      s = new PrincipalState(id, this.limits.budgetMs, this.now());
      map.set(id, s);
    }
    return s;
  }

  /**
   * The state of the principal a bus call is made for: the access token of `meta.grant` when the
   * call carries one, else the user `meta.userId`; undefined for an internal call (neither), which
   * is not admitted.
   */
  principalOf(meta: Pick<CallMeta, 'userId' | 'grant'> | undefined): PrincipalState | undefined {
    const grant = meta?.grant;
    if (grant !== undefined) return this.stateOf('token', grant.tokenId);
    const userId = meta?.userId;
    return userId === undefined ? undefined : this.stateOf('user', userId);
  }

  /**
   * Charges `costMs` (ms of server time, fractions kept; 0 or less charges nothing) that the
   * gateway itself spent for `s` outside any bus request, e.g. the MCP adapter's own time around
   * a tool call (mcp/server.ts), to its budget, as {@link leave} charges a reply's `costMs`. It may
   * take the budget into debt; it holds and refuses nothing itself: the principal's next expensive
   * request meets the spent budget (a wait for the refill or 429 `RATE_LIMITED`, `reason: "budget"`).
   */
  charge(s: PrincipalState, costMs: number): void {
    if (!(costMs > 0)) return;
    this.refill(s, this.now());
    s.budget -= costMs;
  }

  /** Budget of `s` now, after the refill since it was last looked at (capped at the full budget). */
  private refill(s: PrincipalState, now: number): number {
    if (s.budget < this.limits.budgetMs) s.budget = Math.min(this.limits.budgetMs, s.budget + (now - s.refilledAt) * this.refillPerMs);
    s.refilledAt = now;
    return s.budget;
  }

  /** Why `s` cannot start a request now, or undefined when it can. */
  private blocked(s: PrincipalState, expensive: boolean, now: number): Reason | undefined {
    if (s.inFlight >= this.limits.inFlight) return 'in_flight';
    if (!expensive) return undefined;
    if (s.expensiveInFlight >= this.limits.expensiveInFlight) return 'in_flight';
    if (this.refill(s, now) <= 0) return 'budget';
    return undefined;
  }

  private start(s: PrincipalState, expensive: boolean): void {
    s.inFlight++;
    if (expensive) s.expensiveInFlight++;
  }

  /**
   * Admits a request of `s`: returns true when it may run now (its slot taken), else a promise
   * settled when it may (resolves) or is refused (rejects with 429 `RATE_LIMITED`, `details:
   * {reason, retryAfterSeconds}`). Waiting requests of one principal start in arrival order.
   */
  enter(s: PrincipalState, expensive: boolean): true | Promise<void> {
    const now = this.now();
    if (s.waiting.length === 0 && this.blocked(s, expensive, now) === undefined) {
      this.start(s, expensive);
      return true;
    }
    const reason = this.blocked(s, expensive, now) ?? 'in_flight';
    if (s.waiting.length >= this.limits.queue) return Promise.reject(this.refuse(s, reason, now));
    if (reason === 'budget' && -s.budget / this.refillPerMs > this.limits.queueWaitMs) return Promise.reject(this.refuse(s, 'budget', now));
    return new Promise<void>((resolve, reject) => {
      s.waiting.push({ expensive, reason, since: now, admit: resolve, refuse: reject });
      this.queued.add(s);
      this.sweeper ??= setInterval(() => this.sweep(), SWEEP_MS);
    });
  }

  /** Ends a request of `s` that cost `costMs` (ms of server time): frees its slot, charges its cost, starts waiters. */
  leave(s: PrincipalState, expensive: boolean, costMs: number | undefined): void {
    s.inFlight--;
    if (expensive) s.expensiveInFlight--;
    if (costMs !== undefined) {
      this.refill(s, this.now());
      s.budget -= costMs;
    }
    if (s.waiting.length > 0) this.wake(s, this.now());
  }

  /** Starts the waiters of `s` that may run now, in order (a blocked one holds those behind it). */
  private wake(s: PrincipalState, now: number): void {
    while (s.waiting.length > 0) {
      const w = s.waiting[0]!;
      const reason = this.blocked(s, w.expensive, now);
      if (reason === undefined) {
        s.waiting.shift();
        this.start(s, w.expensive);
        this.metrics?.admissionQueueWait.labels(w.reason).observe((now - w.since) / 1000);
        w.admit();
        continue;
      }
      if (now - w.since >= this.limits.queueWaitMs) {
        s.waiting.shift();
        w.refuse(this.refuse(s, reason, now));
        continue;
      }
      break;
    }
    if (s.waiting.length === 0) this.queued.delete(s);
  }

  /** The 429 of a request of `s` refused for `reason`, counted; `Retry-After` from the budget's refill or the queue wait. */
  private refuse(s: PrincipalState, reason: Reason, now: number): AppError {
    this.metrics?.admissionRejections.labels(reason).inc();
    const retryMs = reason === 'budget' ? Math.max(0, -this.refill(s, now)) / this.refillPerMs + 1 : this.limits.queueWaitMs;
    const message = reason === 'budget'
      ? 'Your recent requests used up their cost budget (server time); retry after the Retry-After seconds, or make the query narrower'
      : 'Too many of your requests are running at once; retry after the Retry-After seconds';
    return new AppError('RATE_LIMITED', { message, details: { reason, retryAfterSeconds: Math.max(1, Math.ceil(retryMs / 1000)) } });
  }

  /** Drops the principals of `map` with nothing in flight or waiting and a full budget (they start afresh next time). */
  private purge(map: Map<string, PrincipalState>): void {
    const now = this.now();
    for (const s of map.values()) {
      if (s.inFlight === 0 && s.waiting.length === 0 && this.refill(s, now) >= this.limits.budgetMs) map.delete(s.key);
    }
  }

  private sweep(): void {
    const now = this.now();
    for (const s of this.queued) this.wake(s, now);
    if (this.queued.size === 0) {
      clearInterval(this.sweeper);
      this.sweeper = undefined;
    }
  }

  /** Principals known now (users and tokens; idle ones are dropped only once many are known). */
  get size(): number {
    return this.users.size + this.tokens.size;
  }

  /** Refuses every waiter (the gateway is closing) and stops the sweep. */
  close(): void {
    for (const s of this.queued) {
      for (const w of s.waiting.splice(0)) w.refuse(new AppError('SERVICE_UNAVAILABLE', { message: 'The gateway is shutting down' }));
    }
    this.queued.clear();
    clearInterval(this.sweeper);
    this.sweeper = undefined;
  }
}


/**
 * The gateway's bus with admission in front of every request of a principal (REST and MCP alike):
 * {@link Admission.enter} before `requestReply`, {@link Admission.leave} with the reply's
 * `costMs` after it. Requests without a principal (internal calls) and `ping` pass straight through.
 */
export class AdmittedBus implements Bus {
  constructor(
    private readonly inner: Bus,
    readonly admission: Admission,
  ) {}

  requestReply<O extends AnyOp>(op: O, input: In<O>, meta?: CallMeta): Promise<BusReply> {
    // the principal: the access token when one is used, else the user; internal calls have none
    const s = this.admission.principalOf(meta);
    if (s === undefined) return this.inner.requestReply(op, input, meta);
    const expensive = isExpensive(op.subject);
    const entered = this.admission.enter(s, expensive);
    if (entered === true) return this.run(s, expensive, op, input, meta);
    return entered.then(() => this.run(s, expensive, op, input, meta));
  }

  private run<O extends AnyOp>(s: PrincipalState, expensive: boolean, op: O, input: In<O>, meta: CallMeta | undefined): Promise<BusReply> {
    let p: Promise<BusReply>;
    try {
      p = this.inner.requestReply(op, input, meta);
    } catch (e) {
      this.admission.leave(s, expensive, undefined);
      throw e;
    }
    return p.then(
      (reply) => {
        this.admission.leave(s, expensive, reply.meta.costMs);
        return reply;
      },
      (e: unknown) => {
        this.admission.leave(s, expensive, undefined);
        throw e;
      },
    );
  }

  async request<O extends AnyOp>(op: O, input: In<O>, meta?: CallMeta): Promise<Out<O>> {
    return JSON.parse(await this.requestText(op, input, meta)) as Out<O>;
  }

  async requestText<O extends AnyOp>(op: O, input: In<O>, meta?: CallMeta): Promise<string> {
    const r = await this.requestReply(op, input, meta);
    if (!r.ok) throw r.error;
    return r.text;
  }

  serve(...args: Parameters<Bus['serve']>): ReturnType<Bus['serve']> {
    return this.inner.serve(...args);
  }

  ping(): Promise<void> {
    return this.inner.ping();
  }

  async close(): Promise<void> {
    this.admission.close();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}
