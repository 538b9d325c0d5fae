import { hash } from 'node:crypto';
import { callerId, type CallContext } from '../bus/bus.js';
import { AppError } from '../errors/index.js';
import { activeTraceparent } from '../observability/tracing.js';
import { Collections } from '../store/collections.js';
import type { Collection, Doc, Filter, IndexSpec, Session, Update } from '../store/port.js';
import { COLLECTION_INDEXES } from '../store/schema.js';
import { appendAudit, type NewAudit } from './audit.js';
import { appendEvents, type NewEvent } from './events.js';
import type { ServiceDeps } from './service.js';

/**
 * The one unit of work of every write handler (docs/concurrency.md):
 *
 * 1. With an `Idempotency-Key`: the key is claimed (a `running` record, one insert). When the key
 *    already has a record, that record answers: a finished one the stored reply
 *    (`Idempotency-Replayed: true`, nothing runs); another body → 422 `IDEMPOTENCY_KEY_REUSED`; a
 *    running one → 409 `IDEMPOTENCY_KEY_IN_PROGRESS`; an expired one is taken over.
 * 2. `fn` runs in ONE `store.withTransaction`: its reads and conditional writes, then the events
 *    it emitted ({@link appendEvents}), the audit entries it queued ({@link appendAudit}) and the key's finished record with the reply, so a
 *    committed write never lacks its events or its record, and a rolled-back one has neither.
 *    With a tracer (`deps.tracer`), the outbox document also records the active span's
 *    `traceparent`, which the relay and webhook delivery spans link to (docs/observability.md).
 * 3. A 4xx from `fn` is recorded after the rollback (the same error is replayed); a 5xx drops the
 *    claim, so a retry runs again.
 */

/** What a write handler gets inside the transaction. */
export interface WriteUnit {
  /** The transaction; pass it to every store call of the write. */
  session: Session;
  /** The caller's user id. */
  userId: string;
  /** The write's time, from the service clock. */
  now: Date;
  /** Queues events; they are appended in this transaction after `fn` returns. */
  emit(...events: NewEvent[]): void;
  /**
   * Queues audit log entries (docs/audit.md); they are appended in this transaction after `fn`
   * returns, stamped with the caller, the request id, the client address and the write's time.
   */
  audit(...entries: NewAudit[]): void;
  /**
   * Rolls the whole transaction back (nothing written, no events) and makes `runWrite` answer
   * `result` all the same (an atomic batch whose item failed: 200 with per-item errors). Throws.
   */
  rollbackWith(result: unknown): never;
}

/** Thrown by {@link WriteUnit.rollbackWith}: aborts the transaction, carries the answer. */
class RolledBack {
  constructor(readonly result: unknown) {}
}

/** How long a `running` claim blocks a repeat (409) before another request may take it over: past every op timeout. */
export const IDEMPOTENCY_LEASE_MS = 60_000;
/** Default of `IDEMPOTENCY_TTL_HOURS`: how long a finished answer is replayed. */
export const DEFAULT_IDEMPOTENCY_TTL_HOURS = 24;

/** An Idempotency-Key record in `idempotency` (`_id`: SHA-256 of user, scope and key). */
export interface IdempotencyDoc extends Doc {
  _id: string;
  user_id: string;
  scope: string;
  fingerprint: string;
  state: 'running' | 'done';
  request_id: string;
  created_at: string;
  /** ISO UTC; the record counts as absent from then on (and the TTL index removes it). */
  expires_at: string;
  /** The reply body as JSON text (success). */
  reply?: string;
  /** The wire error as JSON text (a 4xx answer). */
  error?: string;
}

/** The TTL index of the idempotency records (MongoDB TTL index; the embedded store's expiry sweep); defined once in the store's schema. */
export const IDEMPOTENCY_INDEXES: readonly IndexSpec[] = COLLECTION_INDEXES[Collections.idempotency]!;

/**
 * The claim need not be durable before the request runs: every way on ends in a durable write of
 * the same record (the transaction, or the finished / dropped record after it), and a claim lost
 * in a crash only lets a retry run what never committed (port `WriteOptions`).
 */
const CLAIM_WRITE = { awaitDurable: false } as const;

/** The request's Idempotency-Key as the bus carries it (`CallContext.idempotency`). */
type KeyOf = NonNullable<CallContext['idempotency']>;

/**
 * An Idempotency-Key's claim on one request (docs/concurrency.md "Idempotency-Key"), apart from
 * the transaction that runs the write: {@link KeyClaim.take} claims the key or answers from the
 * record already there; then exactly one of {@link finishIn} (inside the write's transaction: the
 * reply, committed with the write), {@link finishRolledBack} (the write rolled back on purpose
 * and answers all the same) or {@link fail} (a 4xx is recorded and replayed, a 5xx drops the
 * claim so a retry runs again) records the outcome.
 */
class KeyClaim<R> {
  private constructor(
    private readonly records: Collection<IdempotencyDoc>,
    private readonly ctx: CallContext,
    /** Matches this request's own `running` record (not one that took the key over). */
    private readonly mine: Filter,
    /** When a finished answer expires (ISO UTC). */
    private readonly expiresAt: string,
  ) {}

  /**
   * Claims `idem` for this request: one insert of a `running` record (a new key costs no read);
   * when the key has a record, that record answers (`replay`; see {@link answerFrom}), and an
   * expired one is taken over. Throws 409 `IDEMPOTENCY_KEY_IN_PROGRESS`, 422
   * `IDEMPOTENCY_KEY_REUSED`, the replayed 4xx, 409 `CONFLICT` when the key changed hands twice
   * while it was claimed, 503 from the store.
   */
  static async take<R>(deps: ServiceDeps, ctx: CallContext, idem: KeyOf): Promise<KeyClaim<R> | { replay: R }> {
    const userId = callerId(ctx);
    const records = deps.store.collection<IdempotencyDoc>(Collections.idempotency);
    const id = hash('sha256', `${userId}\n${idem.scope}\n${idem.key}`, 'hex');
    const now = deps.clock.now();
    const ttlMs = (deps.idempotencyTtlHours ?? DEFAULT_IDEMPOTENCY_TTL_HOURS) * 3_600_000;
    const claim: IdempotencyDoc = {
      _id: id, user_id: userId, scope: idem.scope, fingerprint: idem.fingerprint, state: 'running',
      request_id: ctx.requestId, created_at: now.toISOString(), expires_at: new Date(now.getTime() + IDEMPOTENCY_LEASE_MS).toISOString(),
    };
    const replay = (rec: IdempotencyDoc) => ({ replay: answerFrom<R>(rec, ctx, idem) });
    // a taken `_id` answers CONFLICT, and the record found then answers (or, expired, is taken over)
    for (let attempt = 1; ; attempt++) {
      try {
        await records.insertOne(claim, CLAIM_WRITE);
        break;
      } catch (e) {
        if (!AppError.is(e) || e.code !== 'CONFLICT') throw e;
      }
      const existing = await records.findOne({ _id: id });
      if (existing && existing.expires_at > claim.created_at) return replay(existing);
      if (existing) {
        // expired (a finished answer past its TTL, or a claim whose request died): taken over
        const { _id, ...fields } = claim;
        const taken = await records.updateOne({ _id, expires_at: existing.expires_at, request_id: existing.request_id }, { $set: fields, $unset: { reply: '', error: '' } }, CLAIM_WRITE);
        if (taken.matchedCount === 1) break;
      }
      // another request claimed, dropped or took over the key meanwhile
      if (attempt === 2) {
        const again = await records.findOne({ _id: id });
        if (again) return replay(again);
        throw new AppError('CONFLICT', { message: 'The Idempotency-Key changed hands while it was claimed; retry', details: { key: idem.key } });
      }
    }
    return new KeyClaim<R>(records, ctx, { _id: id, request_id: ctx.requestId, state: 'running' }, new Date(now.getTime() + ttlMs).toISOString());
  }

  /** Records the write's reply in its transaction `session` (committed with the write), and keeps its text for the answer. */
  async finishIn(session: Session, result: R): Promise<void> {
    const json = JSON.stringify(result ?? null);
    await this.records.updateOne(this.mine, this.finished({ reply: json }), { session });
    encode(this.ctx, result, json);
  }

  /** Records the answer of a write that rolled back on purpose (`rollbackWith`), and returns it. */
  async finishRolledBack(result: R): Promise<R> {
    const json = JSON.stringify(result ?? null);
    await this.records.updateOne(this.mine, this.finished({ reply: json }));
    return encode(this.ctx, result, json);
  }

  /**
   * Records a write that failed with `e`: a 4xx is kept and replayed to a repeat; a 5xx drops the
   * claim, so a retry runs again. A store fault while recording is logged, not thrown (the caller
   * answers `e`).
   */
  async fail(e: unknown): Promise<void> {
    const err = AppError.from(e);
    try {
      if (err.status < 500) await this.records.updateOne(this.mine, this.finished({ error: JSON.stringify(err.toWire()) }));
      else await this.records.deleteOne(this.mine);
    } catch (recordErr) {
      this.ctx.log.warn({ err: recordErr }, 'idempotency record not updated after a failed write');
    }
  }

  private finished(fields: Partial<IdempotencyDoc>): Update {
    return { $set: { ...fields, state: 'done', expires_at: this.expiresAt } };
  }
}

/** Keeps the reply's text, made once: stored in the record and sent as it is (`CallContext.encoded`). */
function encode<R>(ctx: CallContext, value: R, json: string): R {
  ctx.encoded = { value, json };
  return value;
}

/**
 * What a key's existing record answers a repeat: another body → 422 `IDEMPOTENCY_KEY_REUSED`; still
 * running → 409 `IDEMPOTENCY_KEY_IN_PROGRESS`; finished → its stored reply or error, replayed
 * (`Idempotency-Replayed: true`).
 */
function answerFrom<R>(rec: IdempotencyDoc, ctx: CallContext, idem: KeyOf): R {
  if (rec.fingerprint !== idem.fingerprint) {
    throw new AppError('IDEMPOTENCY_KEY_REUSED', {
      message: 'This Idempotency-Key was used with another request body; use a new key for a new request',
      details: { key: idem.key },
    });
  }
  if (rec.state === 'running') {
    throw new AppError('IDEMPOTENCY_KEY_IN_PROGRESS', { message: 'A request with this Idempotency-Key is still running; retry later', details: { key: idem.key } });
  }
  ctx.reply.replayed = true;
  if (rec.error !== undefined) {
    ctx.reply.traceId = rec.request_id;
    throw AppError.fromWire(JSON.parse(rec.error));
  }
  return encode(ctx, JSON.parse(rec.reply ?? 'null') as R, rec.reply ?? 'null');
}

/**
 * One attempt of the write in its transaction `session`: `fn`, then the events it emitted
 * ({@link appendEvents}, naming the access token of the call when it used one, with the active
 * span's `traceparent` when traced) and the audit entries it queued. Returns `fn`'s result
 * and how many events were appended.
 */
async function attempt<R>(deps: ServiceDeps, ctx: CallContext, fn: (w: WriteUnit) => Promise<R>, session: Session): Promise<{ result: R; events: number }> {
  const userId = callerId(ctx);
  const events: NewEvent[] = [];
  const audits: NewAudit[] = [];
  const now = deps.clock.now();
  const rollbackWith = (r: unknown): never => {
    throw new RolledBack(r);
  };
  const result = await fn({ session, userId, now, emit: (...e) => void events.push(...e), audit: (...a) => void audits.push(...a), rollbackWith });
  // traced: the active span (the store transaction's, in the service's request span) becomes the write's trace context
  const traceparent = deps.tracer && events.length > 0 ? activeTraceparent() : undefined;
  await appendEvents(deps.store, session, events, {
    actor: userId, request_id: ctx.requestId, occurred_at: now.toISOString(), ...(ctx.grant ? { actor_token: ctx.grant.tokenId } : {}), ...(traceparent ? { traceparent } : {}),
  });
  await appendAudit(deps.store, session, audits, {
    actor: userId, requestId: ctx.requestId, sourceAddress: ctx.sourceAddress, at: now, retentionDays: deps.config?.AUDIT_RETENTION_DAYS,
  });
  return { result, events: events.length };
}

/**
 * Runs a write as one unit of work (see the file comment): the Idempotency-Key's claim
 * ({@link KeyClaim}) around one transaction holding `fn`, its events and the key's finished
 * record. `fn` may run more than once (the store retries a transaction on write conflicts): keep
 * it free of side effects outside the store. Throws what `fn` throws, 409/422 for the key rules
 * above, 503 from the store.
 */
export async function runWrite<R>(deps: ServiceDeps, ctx: CallContext, fn: (w: WriteUnit) => Promise<R>): Promise<R> {
  const taken = ctx.idempotency ? await KeyClaim.take<R>(deps, ctx, ctx.idempotency) : undefined;
  if (taken && 'replay' in taken) return taken.replay;
  const claim = taken;
  // events of the attempt that ran last (the committed one, when withTransaction returns)
  let emitted = 0;
  try {
    const result = await deps.store.withTransaction(async (session) => {
      const done = await attempt(deps, ctx, fn, session);
      emitted = done.events;
      await claim?.finishIn(session, done.result);
      return done.result;
    });
    if (emitted > 0) deps.outbox?.committed();
    return result;
  } catch (e) {
    if (e instanceof RolledBack) return claim ? claim.finishRolledBack(e.result as R) : (e.result as R);
    await claim?.fail(e);
    throw e;
  }
}
