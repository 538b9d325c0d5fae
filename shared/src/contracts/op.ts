import type { Static, TSchema } from '@sinclair/typebox';

/**
 * One bus operation: its subject, request and response schemas and the caller's timeout
 * (docs/architecture.md §1, §3). Defined once in `shared/src/contracts/<domain>.ts` and imported by the gateway,
 * the owning service and the tests; nothing else writes a subject string.
 */
export interface Op<Req extends TSchema = TSchema, Res extends TSchema = TSchema> {
  /** `<domain>.<verb>`; the bus may prepend `BUS_PREFIX`. */
  readonly subject: string;
  readonly request: Req;
  readonly response: Res;
  /** Caller's upper bound in milliseconds; a reply later than this is a 504. */
  readonly timeoutMs: number;
  /**
   * Where the reply carries the version of the ONE task or board it returns: the
   * dispatch step reads it from the handler's result and sends it as the `x-version` reply header,
   * which the gateway answers as `ETag: "<version>"`. Absent for ops without such a reply.
   */
  readonly versionOf?: (out: Static<Res>) => number | undefined;
}

/** Any op, whatever its schemas (for registries and generic callers). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type AnyOp = Op<any, any>;
/** The request payload type of an op. */
export type In<O extends AnyOp> = Static<O['request']>;
/** The response payload type of an op. */
export type Out<O extends AnyOp> = Static<O['response']>;

/** Default caller timeout for an op, in milliseconds. */
export const DEFAULT_TIMEOUT_MS = 5_000;

/** Declares an op; `timeoutMs` defaults to {@link DEFAULT_TIMEOUT_MS}. */
export function op<Req extends TSchema, Res extends TSchema>(o: {
  subject: string;
  request: Req;
  response: Res;
  timeoutMs?: number;
  versionOf?: (out: Static<Res>) => number | undefined;
}): Op<Req, Res> {
  return Object.freeze({ ...o, timeoutMs: o.timeoutMs ?? DEFAULT_TIMEOUT_MS });
}

/** Ops that read or write many documents at once besides the `query.` and `flow.` families. */
const EXPENSIVE_OPS: ReadonlySet<string> = new Set([
  'boards.get', 'sprints.burndown', 'sprints.report', 'sprints.velocity', 'sprints.close', 'views.query',
  'tasks.createBatch', 'tasks.updateBatch', 'tasks.updateEach', 'tasks.updateMany', 'tasks.deleteMany', 'tasks.getMany', 'tasks.transfer', 'tasks.movePath',
]);

/**
 * True for an op whose cost can grow with the data it covers (`subject` as in {@link Op}, without
 * a bus prefix): every `query.` op (queries, board and column reads, summaries, exports), every
 * `flow.` op, board reads, sprint reports, views and the batch writes. The gateway's admission
 * takes these from the cost budget (docs/http.md "Fair use"); the dispatch step holds their reads
 * to one deadline for the whole request (docs/store.md "Long reads and other users' requests").
 */
export function isExpensive(subject: string): boolean {
  return subject.startsWith('query.') || subject.startsWith('flow.') || EXPENSIVE_OPS.has(subject);
}
