import type { Logger } from 'pino';
import type { AnyOp, In, Out } from '../contracts/op.js';
import { AppError } from '../errors/index.js';
import type { Binding, Bus, CallMeta, Served, ServeOptions } from './bus.js';
import { decodeReplyText, dispatch, encodeRequest } from './dispatch.js';

interface Entry {
  binding: Binding;
  log: Logger;
}

/**
 * In-process bus (DESIGN §2, §3): the same dispatch and JSON round trip as NATS, delivered
 * through a map. Several serve() calls for one subject share requests round-robin, like a queue
 * group. No globals: every instance has its own map.
 */
export class MemoryBus implements Bus {
  private readonly subjects = new Map<string, Entry[]>();
  private readonly rr = new Map<string, number>();
  private closed = false;

  async request<O extends AnyOp>(op: O, input: In<O>, meta: CallMeta = {}): Promise<Out<O>> {
    return JSON.parse(await this.requestText(op, input, meta)) as Out<O>;
  }

  async requestText<O extends AnyOp>(op: O, input: In<O>, meta: CallMeta = {}): Promise<string> {
    this.assertOpen();
    const entries = this.subjects.get(op.subject);
    if (!entries || entries.length === 0) {
      throw new AppError('SERVICE_UNAVAILABLE', { details: { subject: op.subject } });
    }
    const i = (this.rr.get(op.subject) ?? 0) % entries.length;
    this.rr.set(op.subject, i + 1);
    const entry = entries[i]!;
    const payload = encodeRequest(input);
    const reply = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new AppError('UPSTREAM_TIMEOUT', { details: { subject: op.subject, timeoutMs: op.timeoutMs } })),
        op.timeoutMs,
      );
      // dispatch never rejects: every failure is an error reply
      void dispatch(entry.binding, payload, meta, op.subject, entry.log).then((text) => {
        clearTimeout(timer);
        resolve(text);
      });
    });
    return decodeReplyText(reply);
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

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  private assertOpen(): void {
    if (this.closed) throw new AppError('SERVICE_UNAVAILABLE', { message: 'The bus is closed' });
  }
}
