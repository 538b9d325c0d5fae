import { hash, randomUUID } from 'node:crypto';
import type { TSchema } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import type { Logger } from 'pino';
import { isExpensive } from '../contracts/op.js';
import { scopeOf, scopesAllow } from '../contracts/tokens.js';
import { AppError, type FieldError, type WireError } from '../errors/index.js';
import type { Binding, BusReply, CallContext, CallMeta, IdempotencyInput, ReplyMeta } from './bus.js';
import { EncodedJson } from './json-text.js';
import { QUERY_TIME_LIMIT_MS } from '../store/port.js';
import { inRequest, type RequestScope } from '../util/request-scope.js';

/** The reply envelope on the wire (docs/architecture.md §3). */
export type Reply = { ok: true; data: unknown } | { ok: false; error: WireError };

/** Prefix of every successful reply; lets callers slice the data text without parsing. */
export const OK_PREFIX = '{"ok":true,"data":';

const checks = new WeakMap<TSchema, TypeCheck<TSchema>>();
function checker(schema: TSchema): TypeCheck<TSchema> {
  let c = checks.get(schema);
  if (!c) {
    c = TypeCompiler.Compile(schema);
    checks.set(schema, c);
  }
  return c;
}

/** Validates `value` against `schema`; throws 400 `VALIDATION_FAILED` listing every field at fault. */
export function validate(schema: TSchema, value: unknown): void {
  const c = checker(schema);
  if (c.Check(value)) return;
  const errors: FieldError[] = [];
  for (const e of c.Errors(value)) {
    if (errors.some((x) => x.field === (e.path || '/'))) continue;
    errors.push({ field: e.path || '/', code: `type-${e.type}`, message: e.message });
    if (errors.length >= 20) break;
  }
  const first = errors[0];
  throw new AppError('VALIDATION_FAILED', {
    message: first ? `${first.field.replace(/^\//, '') || 'body'}: ${first.message}` : undefined,
    validationErrors: errors,
  });
}

/**
 * Encodes a request payload: JSON text, or empty for no input. A value JSON cannot carry (a
 * BigInt, a cycle) is the caller's bug: 500 `INTERNAL`, on every bus alike.
 */
export function encodeRequest(input: unknown): string {
  try {
    return input === undefined ? '' : JSON.stringify(input);
  } catch (cause) {
    throw new AppError('INTERNAL', { message: 'The request payload is not JSON-serializable', cause });
  }
}

/** Encodes a reply; the success form always starts with {@link OK_PREFIX}. An {@link EncodedJson} is taken as it is. */
export function encodeOk(data: unknown): string {
  return `${OK_PREFIX}${data === undefined ? 'null' : data instanceof EncodedJson ? data.json : JSON.stringify(data)}}`;
}

/** Encodes an error reply `{ok:false, error}` carrying the AppError's wire form (docs/architecture.md §3). */
export function encodeError(err: AppError): string {
  return JSON.stringify({ ok: false, error: err.toWire() });
}

/**
 * Decodes a reply text: returns the data text on success, throws the carried AppError otherwise.
 */
export function decodeReplyText(text: string): string {
  if (text.startsWith(OK_PREFIX)) return text.slice(OK_PREFIX.length, -1);
  let parsed: Reply;
  try {
    parsed = JSON.parse(text) as Reply;
  } catch (cause) {
    throw new AppError('INTERNAL', { message: 'Unreadable reply from a service', cause });
  }
  if (parsed.ok) return JSON.stringify(parsed.data);
  throw AppError.fromWire(parsed.error);
}

/**
 * Decodes a reply text into a {@link BusReply} with `meta`: the data text on success, the carried
 * AppError otherwise (returned, not thrown).
 */
export function decodeReply(text: string, meta: ReplyMeta): BusReply {
  try {
    return { ok: true, text: decodeReplyText(text), meta };
  } catch (e) {
    return { ok: false, error: AppError.from(e), meta };
  }
}

/**
 * The trace id of a W3C `traceparent` (`00-<32 hex>-<16 hex>-<2 hex>`), or undefined when it is
 * not one (or the all-zero invalid id).
 */
export function traceIdOf(traceparent: string | undefined): string | undefined {
  if (traceparent === undefined) return undefined;
  const m = /^[0-9a-f]{2}-([0-9a-f]{32})-[0-9a-f]{16}-[0-9a-f]{2}$/.exec(traceparent.trim());
  return m && m[1] !== '00000000000000000000000000000000' ? m[1] : undefined;
}

/** The {@link CallContext} of one request; its child logger is made on first use. */
class Context implements CallContext {
  private child: Logger | undefined;
  readonly ifMatch: string | undefined;
  readonly grant: CallContext['grant'];
  readonly sourceAddress: string | undefined;
  idempotency: IdempotencyInput | undefined;
  readonly reply: ReplyMeta = {};
  encoded: { value: unknown; json: string } | undefined;

  constructor(
    readonly requestId: string,
    readonly userId: string | undefined,
    readonly traceparent: string | undefined,
    readonly subject: string,
    private readonly base: Logger,
    meta: CallMeta,
  ) {
    this.ifMatch = meta.ifMatch;
    this.grant = meta.grant;
    this.sourceAddress = meta.sourceAddress;
  }

  /**
   * Bound to `{reqId, subject}` and, when the request carries a `traceparent`, its `trace_id`;
   * made on first use: most requests log nothing, and a pino child costs ~3 % of a point read.
   */
  get log(): Logger {
    if (this.child) return this.child;
    const traceId = traceIdOf(this.traceparent);
    return (this.child = this.base.child(traceId ? { reqId: this.requestId, subject: this.subject, trace_id: traceId } : { reqId: this.requestId, subject: this.subject }));
  }
}

/**
 * Sets `costMs` (whole ms since `started`, less `waitedMs`: the time its reads waited for other
 * requests' steps) on a reply that cost 1 ms or more: cheaper ones carry no header.
 */
function measured(reply: ReplyMeta, started: number, waitedMs: number): void {
  const ms = Math.round(performance.now() - started - waitedMs);
  if (ms >= 1) reply.costMs = ms;
}

/**
 * The one responder step shared by every bus (docs/architecture.md §3): decode → validate → handler → encode.
 * Never throws: every failure becomes an error reply. Unexpected errors are logged once here.
 */
export async function dispatch(binding: Binding, payload: string, meta: CallMeta, subject: string, log: Logger): Promise<string> {
  return (await dispatchReply(binding, payload, meta, subject, log)).text;
}

/**
 * {@link dispatch} with the reply's {@link ReplyMeta}: the version of the returned task or board
 * (`op.versionOf`), what the handler set on `ctx.reply` (the idempotent replay flag), and the
 * handler's time as `costMs` when 1 ms or more (the gateway's cost budget, docs/http.md "Fair use"). The
 * Idempotency-Key reaches the handler with the SHA-256 of the payload, to tell a repeat with the
 * same body from one with another.
 */
export async function dispatchReply(
  binding: Binding, payload: string, meta: CallMeta, subject: string, log: Logger,
): Promise<{ text: string; meta: ReplyMeta }> {
  const started = performance.now();
  // a token's grant, and for an op of data-sized cost the read time limit counting the request's
  // whole time (docs/store.md "Long reads and other users' requests"); a cheap op of a JWT needs
  // neither, and its reads keep their own limit
  const scope: RequestScope | undefined = meta.grant !== undefined || isExpensive(binding.op.subject)
    ? { grant: meta.grant, readDeadline: started + QUERY_TIME_LIMIT_MS, open: true, waitedMs: 0 }
    : undefined;
  const ctx = new Context(meta.requestId ?? randomUUID(), meta.userId, meta.traceparent, subject, log, meta);
  if (meta.idempotencyKey !== undefined) {
    ctx.idempotency = {
      key: meta.idempotencyKey,
      scope: meta.idempotencyScope ?? subject,
      fingerprint: hash('sha256', payload, 'hex'),
    };
  }
  try {
    // a token's scope is checked first: a request it may not make learns nothing about its input
    const grant = meta.grant;
    if (grant !== undefined) {
      const need = scopeOf(binding.op);
      if (!scopesAllow(grant.scopes, need)) {
        throw new AppError('INSUFFICIENT_SCOPE', { message: `This access token lacks the ${need} scope`, details: { required: need, scopes: grant.scopes } });
      }
    }
    let input: unknown;
    try {
      input = payload === '' ? undefined : JSON.parse(payload);
    } catch {
      throw new AppError('BAD_REQUEST', { message: 'Request payload is not JSON' });
    }
    validate(binding.op.request, input);
    const out = scope ? await inRequest(scope, () => binding.handler(input as never, ctx)) : await binding.handler(input as never, ctx);
    if (scope) scope.open = false;
    const version = out === null || out === undefined ? undefined : out instanceof EncodedJson ? out.version : binding.op.versionOf?.(out);
    if (version !== undefined) ctx.reply.version = version;
    const text = ctx.encoded !== undefined && ctx.encoded.value === out ? `${OK_PREFIX}${ctx.encoded.json}}` : encodeOk(out);
    if (log.isLevelEnabled('debug')) ctx.log.debug('request handled');
    measured(ctx.reply, started, scope?.waitedMs ?? 0);
    return { text, meta: ctx.reply };
  } catch (e) {
    if (scope) scope.open = false;
    const err = AppError.from(e);
    if (err.status >= 500) ctx.log.error({ err: AppError.is(e) && err.code !== 'INTERNAL' ? err : e }, 'request failed');
    else if (log.isLevelEnabled('debug')) ctx.log.debug({ code: err.code }, 'request answered with an error');
    measured(ctx.reply, started, scope?.waitedMs ?? 0);
    return { text: encodeError(err), meta: ctx.reply };
  }
}
