import type { Logger } from 'pino';
import type { AnyOp, In, Out } from '../contracts/op.js';
import { AppError } from '../errors/index.js';

/** What a caller tells the bus about a request; carried as headers (DESIGN §3). */
export interface CallMeta {
  /** `x-request-id`; generated when absent. */
  requestId?: string;
  /** `x-user-id`: the authenticated caller (the gateway sets it from the JWT `sub`). */
  userId?: string;
  /** W3C `traceparent`, passed through. */
  traceparent?: string;
}

/** What a handler gets besides its input. Transport-free: no NATS types (DESIGN §10). */
export interface CallContext {
  requestId: string;
  /** The caller's user id, or undefined for internal calls without a user. */
  userId: string | undefined;
  traceparent: string | undefined;
  subject: string;
  /** Child logger bound to `{reqId, subject}`. */
  log: Logger;
}

/**
 * The caller's user id, which every user-facing op needs (the gateway sets it from the JWT `sub`).
 * Throws 401 `UNAUTHORIZED` for a request without one.
 */
export function callerId(ctx: Pick<CallContext, 'userId'>): string {
  if (!ctx.userId) throw new AppError('UNAUTHORIZED');
  return ctx.userId;
}

/** A handler: a plain async function of `(input, ctx)` returning the op's response. */
export type Handler<O extends AnyOp> = (input: In<O>, ctx: CallContext) => Promise<Out<O>>;

/** An op paired with its handler; a service is a list of these. */
export interface Binding {
  readonly op: AnyOp;
  readonly handler: (input: never, ctx: CallContext) => Promise<unknown>;
}

/** Pairs an op with its handler, checking the handler's types against the op's schemas. */
export function bind<O extends AnyOp>(op: O, handler: Handler<O>): Binding {
  return { op, handler: handler as Binding['handler'] };
}

/** Handle on a set of served bindings; disposing it stops taking requests. */
export interface Served extends AsyncDisposable {
  close(): Promise<void>;
}

/** Options of {@link Bus.serve}. */
export interface ServeOptions {
  /** Queue group: the service name (`tasks`, `boards`, `sprints`, `query`). */
  queue: string;
  /** Logger whose children handle each request. */
  log: Logger;
}

/**
 * Request-reply between the gateway and the services (DESIGN §3). Two implementations share one
 * dispatch path: `NatsBus` (network) and `MemoryBus` (in-process, same JSON round trip).
 *
 * `request` resolves with the op's response or rejects with an `AppError`: the handler's own,
 * `UPSTREAM_TIMEOUT` (504) after `op.timeoutMs`, or `SERVICE_UNAVAILABLE` (503) when nothing serves
 * the subject.
 */
export interface Bus extends AsyncDisposable {
  request<O extends AnyOp>(op: O, input: In<O>, meta?: CallMeta): Promise<Out<O>>;
  /**
   * As `request`, but resolves with the response's JSON text (no parse); the gateway passes it
   * straight through to HTTP. Errors are thrown as in `request`.
   */
  requestText<O extends AnyOp>(op: O, input: In<O>, meta?: CallMeta): Promise<string>;
  serve(bindings: readonly Binding[], opts: ServeOptions): Promise<Served>;
  /** Round trip to the transport itself (readiness). Rejects with an AppError when down. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** Header names used on the wire. */
export const Headers = {
  requestId: 'x-request-id',
  userId: 'x-user-id',
  traceparent: 'traceparent',
} as const;
