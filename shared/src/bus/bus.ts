import type { Logger } from 'pino';
import type { AnyOp, In, Out } from '../contracts/op.js';
import type { TokenGrant } from '../contracts/tokens.js';
import { AppError } from '../errors/index.js';
import type { EncodedJson } from './json-text.js';

/** What a caller tells the bus about a request; carried as headers (docs/architecture.md §3). */
export interface CallMeta {
  /** `x-request-id`; generated when absent. */
  requestId?: string;
  /** `x-user-id`: the authenticated caller (the gateway sets it from the JWT `sub`). */
  userId?: string;
  /** W3C `traceparent`, passed through. */
  traceparent?: string;
  /**
   * `if-match`: the HTTP `If-Match` the gateway checked for form: `*` or a comma list of
   * quoted versions (`"3"`, `W/"3"`). The write handlers compare it with the stored version.
   */
  ifMatch?: string;
  /** `idempotency-key`: the HTTP `Idempotency-Key` (1..255 visible ASCII characters). */
  idempotencyKey?: string;
  /** `x-idempotency-scope`: `<METHOD> <path>` of the HTTP request the key is scoped to. */
  idempotencyScope?: string;
  /**
   * `x-token-*`: what the access token the caller used may do (docs/auth.md "Access tokens");
   * absent for a JWT. Its `userId` is the meta's `userId`.
   */
  grant?: TokenGrant;
  /**
   * `x-source-address`: the client address the gateway saw (Fastify's `req.ip`: the socket's
   * peer address), recorded in audit entries (docs/audit.md).
   */
  sourceAddress?: string;
}

/**
 * What a service tells the caller beside the reply body; carried as reply headers.
 * Set by the handler through {@link CallContext.reply} or by the dispatch step.
 */
export interface ReplyMeta {
  /** The version of the one task or board the reply returns (the gateway's `ETag`). */
  version?: number;
  /** True when the reply is the stored answer of an earlier request with the same Idempotency-Key. */
  replayed?: boolean;
  /** On a replayed error: the request id of the first answer, so the error body is the same. */
  traceId?: string;
  /**
   * What serving the request cost the service, in whole ms of handler time (set by the dispatch
   * when it is 1 ms or more); the gateway charges it to the caller's cost budget (docs/http.md "Fair use").
   */
  costMs?: number;
}

/** The request's idempotency key with its scope (see {@link CallMeta}) and the payload's SHA-256 (hex). */
export interface IdempotencyInput {
  key: string;
  scope: string;
  fingerprint: string;
}

/** What a handler gets besides its input. Transport-free: no NATS types (docs/architecture.md §10). */
export interface CallContext {
  requestId: string;
  /** The caller's user id, or undefined for internal calls without a user. */
  userId: string | undefined;
  traceparent: string | undefined;
  subject: string;
  /** Child logger bound to `{reqId, subject}`. */
  log: Logger;
  /** The `If-Match` value, when the request carries one (see {@link CallMeta.ifMatch}). */
  ifMatch: string | undefined;
  /** The access token's grant, when the caller used one (see {@link CallMeta.grant}); its scope was checked before the handler ran. */
  grant: TokenGrant | undefined;
  /** The Idempotency-Key with its scope and the payload fingerprint, when the request carries a key. */
  idempotency: IdempotencyInput | undefined;
  /** The client address the gateway saw (see {@link CallMeta.sourceAddress}); absent for internal calls. */
  sourceAddress?: string | undefined;
  /** Reply headers the handler wants sent (replay flag); the dispatch adds the op's version. */
  reply: ReplyMeta;
  /**
   * A reply value the handler's code already serialized, with its JSON text (an Idempotency-Key
   * record's reply): when the handler returns that very object, the dispatch sends
   * `json` instead of serializing it again (a replay is then the stored text itself).
   */
  encoded?: { value: unknown; json: string };
}

/**
 * The caller's user id, which every user-facing op needs (the gateway sets it from the JWT `sub`).
 * Throws 401 `UNAUTHORIZED` for a request without one.
 */
export function callerId(ctx: Pick<CallContext, 'userId'>): string {
  if (!ctx.userId) throw new AppError('UNAUTHORIZED');
  return ctx.userId;
}

/**
 * A handler: a plain async function of `(input, ctx)` returning the op's response, or that
 * response already serialized ({@link EncodedJson}).
 */
export type Handler<O extends AnyOp> = (input: In<O>, ctx: CallContext) => Promise<Out<O> | EncodedJson<Out<O>>>;

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
 * Request-reply between the gateway and the services (docs/architecture.md §3). Two implementations share one
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
  /**
   * As `requestText`, but never rejects for a service's error reply: resolves with the outcome
   * (the data text, or the AppError) and the reply's {@link ReplyMeta}. Transport faults (503,
   * 504) are thrown as in `request`.
   */
  requestReply<O extends AnyOp>(op: O, input: In<O>, meta?: CallMeta): Promise<BusReply>;
  serve(bindings: readonly Binding[], opts: ServeOptions): Promise<Served>;
  /** Round trip to the transport itself (readiness). Rejects with an AppError when down. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/**
 * What both transports derive from their own `requestReply` (docs/architecture.md §3): `request` parses the
 * reply, `requestText` passes its JSON text on, both throw a service's error reply as its
 * AppError; disposing closes. `NatsBus` and `MemoryBus` extend it.
 */
export abstract class ReplyBus implements Bus {
  abstract requestReply<O extends AnyOp>(op: O, input: In<O>, meta?: CallMeta): Promise<BusReply>;
  abstract serve(bindings: readonly Binding[], opts: ServeOptions): Promise<Served>;
  abstract ping(): Promise<void>;
  abstract close(): Promise<void>;

  async request<O extends AnyOp>(op: O, input: In<O>, meta: CallMeta = {}): Promise<Out<O>> {
    return JSON.parse(await this.requestText(op, input, meta)) as Out<O>;
  }

  async requestText<O extends AnyOp>(op: O, input: In<O>, meta: CallMeta = {}): Promise<string> {
    const r = await this.requestReply(op, input, meta);
    if (!r.ok) throw r.error;
    return r.text;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }
}

/** The outcome of {@link Bus.requestReply}. */
export type BusReply = { ok: true; text: string; meta: ReplyMeta } | { ok: false; error: AppError; meta: ReplyMeta };

/** Header names used on the wire. */
export const Headers = {
  requestId: 'x-request-id',
  userId: 'x-user-id',
  traceparent: 'traceparent',
  ifMatch: 'if-match',
  idempotencyKey: 'idempotency-key',
  idempotencyScope: 'x-idempotency-scope',
  sourceAddress: 'x-source-address',
  /** Reply headers. */
  version: 'x-version',
  replayed: 'idempotency-replayed',
  traceId: 'x-trace-id',
  costMs: 'x-cost-ms',
} as const;

/** Reply meta as wire headers (only the set ones). */
export function replyMetaHeaders(meta: ReplyMeta): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  if (meta.version !== undefined) out.push([Headers.version, String(meta.version)]);
  if (meta.replayed) out.push([Headers.replayed, 'true']);
  if (meta.traceId !== undefined) out.push([Headers.traceId, meta.traceId]);
  if (meta.costMs !== undefined) out.push([Headers.costMs, String(meta.costMs)]);
  return out;
}

/** Reply meta from wire headers (`get` returns '' or undefined for a missing header). */
export function replyMetaFrom(get: (name: string) => string | undefined): ReplyMeta {
  const meta: ReplyMeta = {};
  const version = get(Headers.version);
  if (version) meta.version = Number(version);
  if (get(Headers.replayed) === 'true') meta.replayed = true;
  const traceId = get(Headers.traceId);
  if (traceId) meta.traceId = traceId;
  const cost = Number(get(Headers.costMs));
  if (cost > 0) meta.costMs = cost;
  return meta;
}
