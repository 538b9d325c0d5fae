import type { Tracer } from '@opentelemetry/api';
import type { Collection, Doc, DocumentStore, IndexSpec, Session, StoreStats } from '../store/port.js';
import type { Instruments } from './instrumented-bus.js';
import { outcomeOf } from './metrics.js';
import { inSpan, SpanKind } from './tracing.js';

/** The collection methods of the port. */
const OPS = [
  'find', 'findOne', 'countDocuments', 'insertOne', 'insertMany', 'updateOne', 'updateMany',
  'findOneAndUpdate', 'deleteOne', 'deleteMany', 'bulkWrite',
] as const satisfies ReadonlyArray<Exclude<keyof Collection, 'name'>>;

const seconds = (t0: number) => (performance.now() - t0) / 1000;

/** MongoDB's refusal of a write in a transaction that another one wrote first (code 112). */
const isWriteConflict = (e: unknown): boolean =>
  typeof e === 'object' && e !== null && ((e as { code?: unknown }).code === 112 || (e as { codeName?: unknown }).codeName === 'WriteConflict');

/**
 * A {@link DocumentStore} that measures and traces the one it wraps, whichever backend it is
 * (docs/observability.md): every collection call in `store_operation_duration_seconds` by
 * collection, operation and outcome, every transaction in `store_transaction_duration_seconds`
 * and its extra attempts in `store_transaction_retries_total`, the attempts a write conflict ended
 * in `store_write_conflicts_total`; with a tracer, each call and
 * transaction is a CLIENT span, child of the active span (the service's handler span). Results,
 * errors and sessions pass through unchanged.
 */
export class InstrumentedStore implements DocumentStore {
  private readonly collections = new Map<string, Collection>();
  /** Sessions of attempts whose call was refused with a `WriteConflict` (counted there). */
  private readonly conflicted = new WeakSet<Session>();
  constructor(readonly inner: DocumentStore, private readonly tools: Instruments) {}

  get stats(): StoreStats {
    return this.inner.stats;
  }

  collection<T extends Doc = Doc>(name: string): Collection<T> {
    let c = this.collections.get(name);
    if (!c) this.collections.set(name, (c = this.wrapCollection(name)));
    return c as unknown as Collection<T>;
  }

  async withTransaction<R>(fn: (session: Session) => Promise<R>): Promise<R> {
    const { metrics, tracer } = this.tools;
    const t0 = performance.now();
    let attempts = 0;
    let outcome = 'ok';
    // an attempt that was followed by another (or ended in CONFLICT) without a WriteConflict of
    // one of its calls conflicted at its commit
    let last: Session | undefined;
    let conflicts = 0;
    const endAttempt = () => {
      if (last && !this.conflicted.has(last)) conflicts++;
    };
    const run = () => this.inner.withTransaction((s) => {
      if (attempts > 0) endAttempt();
      attempts++;
      last = s;
      return fn(s);
    });
    try {
      return tracer ? await inSpan(tracer, 'store transaction', SpanKind.CLIENT, {}, run) : await run();
    } catch (e) {
      outcome = outcomeOf(e);
      if (outcome === 'conflict') endAttempt();
      throw e;
    } finally {
      if (metrics) {
        metrics.transactionDuration.labels(outcome).observe(seconds(t0));
        if (attempts > 1) metrics.transactionRetries.inc(attempts - 1);
        if (conflicts > 0) metrics.writeConflicts.inc(conflicts);
      }
    }
  }

  ensureIndexes(specs: IndexSpec[]): Promise<void> {
    return this.inner.ensureIndexes(specs);
  }

  ping(): Promise<void> {
    return this.inner.ping();
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close();
  }

  private wrapCollection(name: string): Collection {
    const inner = this.inner.collection(name);
    const { tracer } = this.tools;
    const calls = this.tools.metrics?.storeDuration;
    const wrapped: Record<string, unknown> = { name: inner.name };
    for (const op of OPS) {
      // (every method of the port takes at most three arguments)
      const method = inner[op] as (this: Collection, a?: unknown, b?: unknown, c?: unknown) => Promise<unknown>;
      const ok = calls?.labels(name, op, 'ok');
      // A read of the embedded store costs a few µs: its observation is one `then` on the call's
      // promise (no async frame, no argument array), docs/bench.md "Where a request's time goes".
      const timed = (a?: unknown, b?: unknown, c?: unknown): Promise<unknown> => {
        const t0 = performance.now();
        let called: Promise<unknown>;
        try {
          called = method.call(inner, a, b, c);
        } catch (e) {
          calls?.labels(name, op, outcomeOf(e)).observe(seconds(t0));
          return Promise.reject(e as Error); // a rejection, as from the async method it stands for
        }
        return called.then(
          (r) => {
            ok?.observe(seconds(t0));
            return r;
          },
          (e: unknown) => {
            calls?.labels(name, op, outcomeOf(e)).observe(seconds(t0));
            if (isWriteConflict(e)) {
              this.tools.metrics?.writeConflicts.inc();
              const session = (op === 'updateOne' || op === 'updateMany' || op === 'findOneAndUpdate' ? c : b) as { session?: Session } | undefined;
              if (session?.session) this.conflicted.add(session.session);
            }
            throw e;
          },
        );
      };
      wrapped[op] = tracer
        ? (a?: unknown, b?: unknown, c?: unknown) =>
          inSpan(tracer, `store ${op} ${name}`, SpanKind.CLIENT, { 'db.collection.name': name, 'db.operation.name': op }, () => timed(a, b, c))
        : timed;
    }
    return wrapped as unknown as Collection;
  }
}

/** The store itself when there is nothing to instrument with, else an {@link InstrumentedStore} around it. */
export function instrumentStore(store: DocumentStore, tools: Instruments): DocumentStore {
  return tools.metrics || tools.tracer ? new InstrumentedStore(store, tools) : store;
}

export type { Tracer };
