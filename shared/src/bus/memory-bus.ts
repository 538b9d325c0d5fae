import type { Logger } from 'pino';
import type { AnyOp, In } from '../contracts/op.js';
import { AppError } from '../errors/index.js';
import { ReplyBus, type Binding, type BusReply, type CallMeta, type Served, type ServeOptions } from './bus.js';
import { decodeReply, dispatchReply, encodeRequest } from './dispatch.js';
import { noResponders } from './no-responders.js';

interface Entry {
  binding: Binding;
  log: Logger;
}

/** A request waiting for its reply: when it times out (`performance.now()` ms) and how it fails. */
interface Pending {
  deadline: number;
  timeOut: () => void;
}

/**
 * How often pending requests are checked against their deadlines, in ms: a request times out at
 * most this much after its op's `timeoutMs`. One interval for all requests, running only while
 * some are pending, costs less per request than a timer each.
 */
export const TIMEOUT_SWEEP_MS = 20;

/**
 * In-process bus (docs/architecture.md §2, §3): the same dispatch and JSON round trip as NATS, delivered
 * through a map. Several serve() calls for one subject share requests round-robin, like a queue
 * group. No globals: every instance has its own map.
 */
export class MemoryBus extends ReplyBus {
  private readonly subjects = new Map<string, Entry[]>();
  private readonly rr = new Map<string, number>();
  /**
   * The requests waiting for a reply; a new set at every sweep. A set that lives long while
   * entries come and go rebuilds its table now and then, and V8 keeps a link from the old table to
   * the new one: once a table has been promoted to the old generation, every later request (and
   * all it refers to) would stay alive until the next full GC (docs/store.md "Memory and garbage
   * collection").
   */
  private pending = new Set<Pending>();
  private sweeper: ReturnType<typeof setInterval> | undefined;
  private closed = false;

  /** One promise per request: no async wrapper around the reply's. */
  requestReply<O extends AnyOp>(op: O, input: In<O>, meta: CallMeta = {}): Promise<BusReply> {
    let entry: Entry;
    let payload: string;
    try {
      this.assertOpen();
      const entries = this.subjects.get(op.subject);
      if (!entries || entries.length === 0) {
        throw noResponders(op.subject);
      }
      const i = (this.rr.get(op.subject) ?? 0) % entries.length;
      this.rr.set(op.subject, i + 1);
      entry = entries[i]!;
      payload = encodeRequest(input);
    } catch (e) {
      return Promise.reject(e);
    }
    return new Promise<BusReply>((resolve, reject) => {
      const pending: Pending = {
        deadline: performance.now() + op.timeoutMs,
        timeOut: () => reject(new AppError('UPSTREAM_TIMEOUT', { details: { subject: op.subject, timeoutMs: op.timeoutMs } })),
      };
      this.track(pending);
      // dispatch never rejects: every failure is an error reply
      void dispatchReply(entry.binding, payload, meta, op.subject, entry.log).then((reply) => {
        this.pending.delete(pending);
        resolve(decodeReply(reply.text, reply.meta));
      });
    });
  }

  async serve(bindings: readonly Binding[], opts: ServeOptions): Promise<Served> {
    this.assertOpen();
    const added: Array<[string, Entry]> = [];
    for (const binding of bindings) {
      const entry = { binding, log: opts.log };
      const list = this.subjects.get(binding.op.subject) ?? [];
      list.push(entry);
      this.subjects.set(binding.op.subject, list);
      added.push([binding.op.subject, entry]);
    }
    const close = async () => {
      for (const [subject, entry] of added) {
        const list = this.subjects.get(subject) ?? [];
        this.subjects.set(subject, list.filter((e) => e !== entry));
      }
    };
    return { close, [Symbol.asyncDispose]: close };
  }

  async ping(): Promise<void> {
    this.assertOpen();
  }

  async close(): Promise<void> {
    this.closed = true;
    this.subjects.clear();
  }

  private track(p: Pending): void {
    this.pending.add(p);
    this.sweeper ??= setInterval(() => this.sweep(), TIMEOUT_SWEEP_MS);
  }

  /** Fails the requests past their deadline; stops the interval once nothing is pending. */
  private sweep(): void {
    const now = performance.now();
    const waiting = new Set<Pending>();
    for (const p of this.pending) {
      if (p.deadline > now) waiting.add(p);
      else p.timeOut();
    }
    this.pending = waiting;
    if (waiting.size === 0) {
      clearInterval(this.sweeper);
      this.sweeper = undefined;
    }
  }

  private assertOpen(): void {
    if (this.closed) throw new AppError('SERVICE_UNAVAILABLE', { message: 'The bus is closed' });
  }
}
