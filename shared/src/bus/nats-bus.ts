import { randomUUID } from 'node:crypto';
import { connect, headers as natsHeaders, type Msg, type NatsConnection, type Subscription } from '@nats-io/transport-node';
import type { Logger } from 'pino';
import type { AnyOp, In } from '../contracts/op.js';
import { AppError } from '../errors/index.js';
import { Headers, ReplyBus, replyMetaFrom, replyMetaHeaders, type Binding, type BusReply, type CallMeta, type Served, type ServeOptions } from './bus.js';
import { decodeReply, dispatchReply, encodeError, encodeRequest } from './dispatch.js';
import { grantFrom, grantHeaders } from './grant.js';
import { natsErrorToAppError } from './nats-errors.js';

/** Options of {@link NatsBus.connect}. */
export interface NatsBusOptions {
  /** NATS server URL(s) (`NATS_URL`), e.g. `nats://127.0.0.1:4222`. */
  servers: string | string[];
  /** `BUS_PREFIX`: subjects become `<prefix>.<domain>.<verb>`; empty or absent means none. */
  prefix?: string;
  /** Connection name shown in the server's monitoring (use the service name). */
  name?: string;
  /** Logs connection changes; `serve` uses its own `opts.log` for requests. */
  log: Logger;
  /** Time allowed for the first connection, in ms (default 5000). */
  connectTimeoutMs?: number;
}

/** Upper bound of a ping or of the flush that confirms new subscriptions, in ms. */
const ROUND_TRIP_TIMEOUT_MS = 2_000;
/**
 * What a request made while the connection is down is told to wait before retrying, in seconds
 * (the `Retry-After` of its 503): the client reconnects within about two seconds of the server's return.
 */
export const BUS_DOWN_RETRY_AFTER_SECONDS = 2;
/** Upper bound of draining on close; then the connection is closed regardless, in ms. */
const DRAIN_TIMEOUT_MS = 5_000;

/**
 * The bus over NATS request-reply (docs/architecture.md §3): one subscription per subject in the service's queue
 * group, each message through the shared {@link dispatch}. The client reconnects forever; while it
 * is known to be disconnected (its status said so), a request fails at once with 503
 * `SERVICE_UNAVAILABLE` (`details.retryAfterSeconds`: {@link BUS_DOWN_RETRY_AFTER_SECONDS}, the
 * gateway's `Retry-After`) instead of waiting its op's timeout, and `ping()` fails at once with
 * 503. A request already sent when the connection drops fails with 503 or 504 by its timeout. NATS errors are mapped once, by
 * {@link natsErrorToAppError}.
 */
export class NatsBus extends ReplyBus {
  private connected = true;
  private closing: Promise<void> | undefined;

  private constructor(
    private readonly nc: NatsConnection,
    private readonly prefix: string,
    private readonly log: Logger,
  ) {
    super();
    void this.watch();
  }

  /**
   * Connects to NATS. Rejects with 503 `SERVICE_UNAVAILABLE` (the NATS error as `cause`) when no
   * server answers within `connectTimeoutMs`.
   */
  static async connect(opts: NatsBusOptions): Promise<NatsBus> {
    try {
      const nc = await connect({
        servers: opts.servers,
        name: opts.name,
        noAsyncTraces: true, // no call-site stack captured per request (docs/bus.md "Connection behaviour")
        reconnect: true,
        maxReconnectAttempts: -1,
        timeout: opts.connectTimeoutMs ?? 5_000,
      });
      return new NatsBus(nc, opts.prefix ?? '', opts.log);
    } catch (e) {
      throw new AppError('SERVICE_UNAVAILABLE', { message: 'Cannot connect to NATS', cause: e });
    }
  }

  async requestReply<O extends AnyOp>(op: O, input: In<O>, meta: CallMeta = {}): Promise<BusReply> {
    if (!this.connected) throw busDown(op.subject);
    let reply: Msg;
    try {
      const h = natsHeaders();
      h.set(Headers.requestId, meta.requestId ?? randomUUID());
      if (meta.userId !== undefined) h.set(Headers.userId, meta.userId);
      if (meta.traceparent !== undefined) h.set(Headers.traceparent, meta.traceparent);
      if (meta.ifMatch !== undefined) h.set(Headers.ifMatch, meta.ifMatch);
      if (meta.idempotencyKey !== undefined) h.set(Headers.idempotencyKey, meta.idempotencyKey);
      if (meta.idempotencyScope !== undefined) h.set(Headers.idempotencyScope, meta.idempotencyScope);
      if (meta.sourceAddress !== undefined) h.set(Headers.sourceAddress, meta.sourceAddress);
      for (const [k, v] of grantHeaders(meta.grant)) h.set(k, v);
      reply = await this.nc.request(this.subject(op.subject), encodeRequest(input), { timeout: op.timeoutMs, headers: h });
    } catch (e) {
      throw natsErrorToAppError(e, { subject: op.subject, timeoutMs: op.timeoutMs });
    }
    const rh = reply.headers;
    return decodeReply(reply.string(), rh ? replyMetaFrom((name) => rh.get(name)) : {});
  }

  async serve(bindings: readonly Binding[], opts: ServeOptions): Promise<Served> {
    const subs: Subscription[] = [];
    const inFlight = new Set<Promise<void>>();
    try {
      for (const binding of bindings) {
        const sub = this.nc.subscribe(this.subject(binding.op.subject), {
          queue: opts.queue,
          callback: (err, msg) => {
            if (err) return opts.log.error({ err, subject: binding.op.subject }, 'subscription failed');
            const handled = this.respond(binding, msg, opts.log);
            inFlight.add(handled);
            void handled.finally(() => inFlight.delete(handled));
          },
        });
        subs.push(sub);
      }
      // Once the server has seen the subscriptions, requests from other connections reach them.
      await this.roundTrip();
    } catch (e) {
      for (const sub of subs) sub.unsubscribe();
      throw natsErrorToAppError(e);
    }
    let stopping: Promise<void> | undefined;
    // Drain: the server stops routing to us (a queue peer takes over); then wait for the handlers
    // still running, so their replies go out before the caller closes the connection.
    const drain = async () => {
      await Promise.all(subs.map((s) => s.drain()));
      await Promise.all(inFlight);
    };
    const close = () =>
      (stopping ??= within(drain(), DRAIN_TIMEOUT_MS).then(
        () => undefined,
        (err: unknown) => {
          if (!this.nc.isClosed()) opts.log.warn({ err }, 'serve: drain incomplete');
        },
      ));
    return { close, [Symbol.asyncDispose]: close };
  }

  /** A bounded server round trip; 503 when disconnected, closed or too slow. */
  async ping(): Promise<void> {
    await this.roundTrip();
  }

  /** Drains (bounded by 5 s, skipped while disconnected) and closes the connection; idempotent. */
  async close(): Promise<void> {
    this.closing ??= this.shutdown();
    await this.closing;
  }

  /**
   * The NATS connection, for work beside request-reply that needs JetStream (the outbox
   * relay, the stream feed, the webhook consumer). Handlers never see it (docs/architecture.md §10).
   */
  get connection(): NatsConnection {
    return this.nc;
  }

  /** `BUS_PREFIX` as given (may be empty). */
  get subjectPrefix(): string {
    return this.prefix;
  }

  private subject(subject: string): string {
    return this.prefix ? `${this.prefix}.${subject}` : subject;
  }

  private async respond(binding: Binding, msg: Msg, log: Logger): Promise<void> {
    const h = msg.headers;
    const meta: CallMeta = {
      requestId: h?.get(Headers.requestId) || undefined,
      userId: h?.get(Headers.userId) || undefined,
      traceparent: h?.get(Headers.traceparent) || undefined,
    };
    const ifMatch = h?.get(Headers.ifMatch);
    if (ifMatch) meta.ifMatch = ifMatch;
    const key = h?.get(Headers.idempotencyKey);
    if (key) {
      meta.idempotencyKey = key;
      meta.idempotencyScope = h?.get(Headers.idempotencyScope) || undefined;
    }
    const source = h?.get(Headers.sourceAddress);
    if (source) meta.sourceAddress = source;
    const grant = h ? grantFrom((name) => h.get(name), meta.userId) : undefined;
    if (grant) meta.grant = grant;
    const { text: reply, meta: replyMeta } = await dispatchReply(binding, msg.string(), meta, binding.op.subject, log);
    try {
      const pairs = replyMetaHeaders(replyMeta);
      if (pairs.length === 0) msg.respond(reply);
      else {
        const rh = natsHeaders();
        for (const [k, v] of pairs) rh.set(k, v);
        msg.respond(reply, { headers: rh });
      }
    } catch (err) {
      log.error({ err, reqId: meta.requestId, subject: binding.op.subject }, 'reply not sent');
      // Tell the caller now instead of letting it wait for its timeout (e.g. a reply over max_payload).
      try {
        // a bus fault (503), not a bug: the same request with a smaller page gets through
        const message = 'The reply could not be sent over the bus (larger than its max_payload?); ask for a smaller page';
        msg.respond(encodeError(new AppError('SERVICE_UNAVAILABLE', { message, details: { subject: binding.op.subject, replyBytes: Buffer.byteLength(reply) } })));
      } catch {
        // the connection is gone: the caller times out (504)
      }
    }
  }

  private async roundTrip(): Promise<void> {
    if (this.nc.isClosed() || this.closing) throw new AppError('SERVICE_UNAVAILABLE', { message: 'The bus is closed' });
    if (!this.connected) throw new AppError('SERVICE_UNAVAILABLE', { message: 'The bus is disconnected' });
    try {
      await within(this.nc.flush(), ROUND_TRIP_TIMEOUT_MS);
    } catch (e) {
      throw AppError.is(e) ? e : new AppError('SERVICE_UNAVAILABLE', { cause: e });
    }
  }

  private async shutdown(): Promise<void> {
    if (this.nc.isClosed()) return;
    if (this.connected) {
      await within(this.nc.drain(), DRAIN_TIMEOUT_MS).catch((err: unknown) => this.log.warn({ err }, 'bus drain incomplete'));
    }
    await this.nc.close();
  }

  /** Tracks the connection for ping() and logs its changes. Ends when the connection closes. */
  private async watch(): Promise<void> {
    for await (const s of this.nc.status()) {
      if (s.type === 'disconnect') {
        this.connected = false;
        this.log.warn({ server: s.server }, 'bus disconnected');
      } else if (s.type === 'reconnect') {
        this.connected = true;
        this.log.info({ server: s.server }, 'bus reconnected');
      } else if (s.type === 'error') {
        this.log.error({ err: s.error }, 'bus error');
      }
    }
  }
}

/** The 503 of a request made while the connection is known to be down. */
function busDown(subject: string): AppError {
  return new AppError('SERVICE_UNAVAILABLE', {
    message: 'The bus is disconnected; retry shortly',
    details: { subject, retryAfterSeconds: BUS_DOWN_RETRY_AFTER_SECONDS },
  });
}

/** Settles like `p`, or rejects with 503 after `ms` milliseconds. */
async function within<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new AppError('SERVICE_UNAVAILABLE', { message: 'The bus did not answer in time' })), ms);
  });
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}
