import { hash } from 'node:crypto';
import { callerId, type CallContext } from '../bus/bus.js';
import { AppError } from '../errors/index.js';
import { activeTraceparent } from '../observability/tracing.js';
import { Collections } from '../store/collections.js';
import type { Doc, DocumentStore, IndexSpec, Session } from '../store/port.js';
import { appendEvents, EVENT_INDEXES, type NewEvent } from './events.js';
import type { ServiceDeps } from './service.js';

/**
 * The one unit of work of every write handler (docs/concurrency.md):
 *
 * 1. With an `Idempotency-Key`: the key is claimed (a `running` record, one insert). When the key
 *    already has a record, that record answers: a finished one the stored reply
 *    (`Idempotency-Replayed: true`, nothing runs); another body → 422 `IDEMPOTENCY_KEY_REUSED`; a
 *    running one → 409 `IDEMPOTENCY_KEY_IN_PROGRESS`; an expired one is taken over.
 * 2. `fn` runs in ONE `store.withTransaction`: its reads and conditional writes, then the events
 *    it emitted ({@link appendEvents}) and the key's finished record with the reply, so a
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

/** The TTL index of the idempotency records (MongoDB TTL index; the embedded store's expiry sweep). */
export const IDEMPOTENCY_INDEXES: IndexSpec[] = [{ collection: Collections.idempotency, keys: { expires_at: 1 }, expireAfterSeconds: 0, name: 'idempotency_ttl' }];

/** Indexes of every service that writes through {@link runWrite}: the outbox's and the idempotency records'. */
export const WRITE_INDEXES: IndexSpec[] = [...EVENT_INDEXES, ...IDEMPOTENCY_INDEXES];

/**
 * The claim need not be durable before the request runs: every way on ends in a durable write of
 * the same record (the transaction, or the finished / dropped record after it), and a claim lost
 * in a crash only lets a retry run what never committed (port `WriteOptions`).
 */
const CLAIM_WRITE = { awaitDurable: false } as const;

/**
 * Runs a write as one unit of work (see the file comment). `fn` may run more than once (the
 * store retries a transaction on write conflicts): keep it free of side effects outside the store.
 * Throws what `fn` throws, 409/422 for the key rules above, 503 from the store.
 */
export async function runWrite<R>(deps: ServiceDeps, ctx: CallContext, fn: (w: WriteUnit) => Promise<R>): Promise<R> {
  const userId = callerId(ctx);
  const { store, clock } = deps;
  // events of the attempt that ran last (the committed one, when withTransaction returns)
  let emitted = 0;
  const signal = <T>(r: T): T => {
    if (emitted > 0) deps.outbox?.committed();
    return r;
  };
  const inTransaction = (session: Session, record?: (r: R, session: Session) => Promise<void>) => async () => {
    const events: NewEvent[] = [];
    emitted = 0;
    const now = clock.now();
    const rollbackWith = (r: unknown): never => {
      throw new RolledBack(r);
    };
    const result = await fn({ session, userId, now, emit: (...e) => void events.push(...e), rollbackWith });
    // traced: the active span (the store transaction's, in the service's request span) becomes the write's trace context
    const traceparent = deps.tracer && events.length > 0 ? activeTraceparent() : undefined;
    await appendEvents(store, session, events, {
      actor: userId, request_id: ctx.requestId, occurred_at: now.toISOString(), ...(ctx.grant ? { actor_token: ctx.grant.tokenId } : {}), ...(traceparent ? { traceparent } : {}),
    });
    emitted = events.length;
    if (record) await record(result, session);
    return result;
  };
  const idem = ctx.idempotency;
  if (!idem) {
    try {
      return signal(await store.withTransaction((session) => inTransaction(session)()));
    } catch (e) {
      if (e instanceof RolledBack) return e.result as R;
      throw e;
    }
  }

  const records = store.collection<IdempotencyDoc>(Collections.idempotency);
  const id = hash('sha256', `${userId}\n${idem.scope}\n${idem.key}`, 'hex');
  const now = clock.now();
  const ttlMs = (deps.idempotencyTtlHours ?? DEFAULT_IDEMPOTENCY_TTL_HOURS) * 3_600_000;

  // the reply's text, made once: stored in the record and sent as it is (CallContext.encoded)
  const encoded = (value: R, json: string): R => {
    ctx.encoded = { value, json };
    return value;
  };
  const answer = (rec: IdempotencyDoc): R => {
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
    return encoded(JSON.parse(rec.reply ?? 'null') as R, rec.reply ?? 'null');
  };

  const claim: IdempotencyDoc = {
    _id: id, user_id: userId, scope: idem.scope, fingerprint: idem.fingerprint, state: 'running',
    request_id: ctx.requestId, created_at: now.toISOString(), expires_at: new Date(now.getTime() + IDEMPOTENCY_LEASE_MS).toISOString(),
  };
  // The claim is inserted straight away (a new key, the common case, costs no read); a taken `_id`
  // answers CONFLICT, and the record found then answers (or, expired, is taken over).
  for (let attempt = 1; ; attempt++) {
    try {
      await records.insertOne(claim, CLAIM_WRITE);
      break;
    } catch (e) {
      if (!AppError.is(e) || e.code !== 'CONFLICT') throw e;
    }
    const existing = await records.findOne({ _id: id });
    if (existing && existing.expires_at > claim.created_at) return answer(existing);
    if (existing) {
      // expired (a finished answer past its TTL, or a claim whose request died): taken over
      const { _id, ...fields } = claim;
      const taken = await records.updateOne({ _id, expires_at: existing.expires_at, request_id: existing.request_id }, { $set: fields, $unset: { reply: '', error: '' } }, CLAIM_WRITE);
      if (taken.matchedCount === 1) break;
    }
    // another request claimed, dropped or took over the key meanwhile
    if (attempt === 2) {
      const again = await records.findOne({ _id: id });
      if (again) return answer(again);
      throw new AppError('CONFLICT', { message: 'The Idempotency-Key changed hands while it was claimed; retry', details: { key: idem.key } });
    }
  }
  const mine = { _id: id, request_id: ctx.requestId, state: 'running' };
  const finish = (fields: Partial<IdempotencyDoc>) => ({ $set: { ...fields, state: 'done', expires_at: new Date(now.getTime() + ttlMs).toISOString() } });
  try {
    return signal(
      await store.withTransaction((session) =>
        inTransaction(session, async (result, s) => {
          const json = JSON.stringify(result ?? null);
          await records.updateOne(mine, finish({ reply: json }), { session: s });
          encoded(result, json);
        })(),
      ),
    );
  } catch (e) {
    if (e instanceof RolledBack) {
      const json = JSON.stringify(e.result ?? null);
      await records.updateOne(mine, finish({ reply: json }));
      return encoded(e.result as R, json);
    }
    const err = AppError.from(e);
    try {
      if (err.status < 500) await records.updateOne(mine, finish({ error: JSON.stringify(err.toWire()) }));
      else await records.deleteOne(mine);
    } catch (recordErr) {
      ctx.log.warn({ err: recordErr }, 'idempotency record not updated after a failed write');
    }
    throw e;
  }
}
