import { AppError } from '../errors/index.js';
import type { Collection, Doc, DocumentStore, IndexSpec, Session, SessionOption, StoreStats } from '../store/port.js';

/** A collection method of the port. */
export type StoreOp = Exclude<keyof Collection, 'name'>;

/** One collection call as a {@link FaultyStore} predicate sees it. */
export interface StoreCall {
  collection: string;
  op: StoreOp;
  /** True when the call carries a transaction session. */
  inTransaction: boolean;
  /** 0-based position of the call among all collection calls through this FaultyStore. */
  callIndex: number;
}

/** Position of the options argument (which may carry `session`) of each collection method. */
const OPTIONS_ARG = {
  find: 1, findOne: 1, countDocuments: 1, insertOne: 1, insertMany: 1, updateOne: 2, updateMany: 2,
  findOneAndUpdate: 2, deleteOne: 1, deleteMany: 1, bulkWrite: 1,
} as const satisfies Record<StoreOp, number>;

interface Rule {
  predicate: (call: StoreCall) => boolean;
  remaining: number;
}

/**
 * TEST SEAM, never used by production code: wraps any `DocumentStore` and makes chosen
 * collection calls throw `AppError('STORE_UNAVAILABLE')` before they reach the store, e.g. the
 * last write of close-sprint inside its transaction, to prove that nothing is half-written.
 * `calls` records every collection call made through it.
 */
export class FaultyStore implements DocumentStore {
  readonly calls: StoreCall[] = [];
  private readonly rules: Rule[] = [];

  constructor(readonly inner: DocumentStore) {}

  /** Fails the next `times` (default 1) calls matching `predicate`. Returns this for chaining. */
  failOn(predicate: (call: StoreCall) => boolean, opts: { times?: number } = {}): this {
    this.rules.push({ predicate, remaining: opts.times ?? 1 });
    return this;
  }

  collection<T extends Doc = Doc>(name: string): Collection<T> {
    const inner = this.inner.collection<T>(name);
    const wrapped: Record<string, unknown> = { name: inner.name };
    for (const op of Object.keys(OPTIONS_ARG) as StoreOp[]) {
      wrapped[op] = async (...args: unknown[]) => {
        const options = args[OPTIONS_ARG[op]] as SessionOption | undefined;
        this.check({ collection: name, op, inTransaction: options?.session !== undefined, callIndex: this.calls.length });
        return (inner[op] as (...a: unknown[]) => Promise<unknown>).apply(inner, args);
      };
    }
    return wrapped as unknown as Collection<T>;
  }

  withTransaction<R>(fn: (session: Session) => Promise<R>): Promise<R> {
    return this.inner.withTransaction(fn);
  }

  ensureIndexes(specs: IndexSpec[]): Promise<void> {
    return this.inner.ensureIndexes(specs);
  }

  ping(): Promise<void> {
    return this.inner.ping();
  }

  get stats(): StoreStats {
    return this.inner.stats;
  }

  close(): Promise<void> {
    return this.inner.close();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  private check(call: StoreCall): void {
    this.calls.push(call);
    const rule = this.rules.find((r) => r.remaining > 0 && r.predicate(call));
    if (!rule) return;
    rule.remaining--;
    throw new AppError('STORE_UNAVAILABLE', {
      message: `Injected fault: ${call.op} on ${call.collection}`,
      details: { injected: true, ...call },
    });
  }
}
