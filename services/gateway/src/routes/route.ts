import type { Static, TObject, TSchema } from '@sinclair/typebox';
import type { AnyOp, In } from '@app/shared/contracts';
import type { AccessClaims } from '../plugins/auth.js';

/** HTTP verbs the route table uses. */
export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * The parts of an HTTP request a route's `input` mapper may read, already validated against the
 * row's schemas (so typed by them, see {@link RequestOf}).
 */
export interface RouteRequest<B = unknown, Q = Record<string, unknown>, P = Record<string, string>> {
  params: P;
  query: Q;
  body: B;
  /** The authenticated caller (routes that need a bearer token). */
  user?: AccessClaims;
  /** The request's id (`x-request-id`), for what the gateway records itself (the audit log). */
  requestId?: string;
  /** The client address the gateway saw (Fastify's `req.ip`), for the audit log. */
  ip?: string;
}

/**
 * The request a row's schemas describe: each part typed by its TypeBox schema (`Static`), or
 * untyped when the row declares none. Rows get it through {@link route}, so a mapper reads
 * `req.body.title` with no cast.
 */
export type RequestOf<B extends TSchema | undefined, Q extends TObject | undefined, P extends TObject | undefined> = RouteRequest<
  [B] extends [TSchema] ? Static<B> : unknown,
  [Q] extends [TObject] ? Static<Q> : Record<string, unknown>,
  [P] extends [TObject] ? Static<P> : Record<string, string>
>;

/**
 * One row of the gateway's route table (docs/architecture.md §9): the target path, its legacy paths and verbs,
 * the bus op it forwards to (exactly one bus request per HTTP request), the HTTP schemas used for
 * validation and Swagger 2.0, the success status and the maturity mark.
 * Paths use Fastify syntax (`/api/v1/tasks/:taskId`).
 */
export interface RouteSpec<
  O extends AnyOp = AnyOp,
  B extends TSchema | undefined = TSchema | undefined,
  Q extends TObject | undefined = TObject | undefined,
  P extends TObject | undefined = TObject | undefined,
> {
  method: Method;
  url: string;
  /** Legacy paths answering the same op, with their own verb when it differs (docs/http.md "Legacy paths"). */
  legacy?: ReadonlyArray<{ url: string; method?: Method }>;
  op: O;
  /** Maps the validated HTTP request to the op's input; the caller's user id travels in the bus meta. */
  input: (req: RequestOf<B, Q, P>) => In<O>;
  summary: string;
  /** The documents' `operationId` when the derived one reads badly (docs/http.md "Operation ids"; routes/operation-ids.ts). */
  operationId?: string;
  /** The documents' description of the operation; default: made from the row (summary, auth, versions, dry run). */
  description?: string;
  /** Swagger tag, e.g. `tasks`, `boards`. */
  tag: string;
  maturity: 'live' | 'draft';
  params?: P;
  querystring?: Q;
  body?: B;
  /** Success response schema (Swagger only; replies are passed through as JSON text). */
  response?: TSchema;
  /** Success status; default 200. 204 sends no body. */
  status?: number;
  /** A `null` reply answers 204 with no body (the claim when no card is free); other replies `status`. */
  noContentWhenNull?: boolean;
  /**
   * The op a request with `?dry_run=true` goes to instead of `op` (board create and update):
   * same input, answered 200 with its reply (`dryRunResponse` in Swagger). The row's
   * `querystring` must declare `dry_run`.
   */
  dryRun?: { op: AnyOp; response: TSchema };
  /**
   * The row reads or writes ONE task or board: a write honours `If-Match`, a GET
   * answers `If-None-Match` with 304. Every reply carrying a version gets its `ETag` regardless.
   */
  conditional?: boolean;
  /** Largest request body in bytes, when the row takes more than the gateway's `BODY_LIMIT` (imports). */
  bodyLimit?: number;
}

/**
 * `{url, legacy}` of a path in a target family and its legacy twin (docs/http.md "Legacy paths").
 * `legacyMethod` is the legacy verb when it differs from the row's (task update: legacy POST).
 */
function family(target: string, legacy: string) {
  return (suffix: string, legacyMethod?: Method) => ({
    url: `${target}${suffix}`,
    legacy: [legacyMethod ? { url: `${legacy}${suffix}`, method: legacyMethod } : { url: `${legacy}${suffix}` }],
  });
}

/** `/api/v1/tasks<suffix>`, also answering at the legacy `/api/v1/todolist<suffix>`. */
export const tasksAt = family('/api/v1/tasks', '/api/v1/todolist');
/** `/api/v1/boards<suffix>`, also answering at the legacy `/api/v1/kanban/boards<suffix>`. */
export const boardsAt = family('/api/v1/boards', '/api/v1/kanban/boards');

/**
 * Declares a route row: the request parts its `input` reads are typed by the row's own schemas,
 * and what it returns is checked against the op's input. The table holds rows of every op, so the
 * row is returned as a plain {@link RouteSpec}.
 */
export function route<
  O extends AnyOp,
  B extends TSchema | undefined = undefined,
  Q extends TObject | undefined = undefined,
  P extends TObject | undefined = undefined,
>(spec: RouteSpec<O, B, Q, P>): RouteSpec {
  return spec as unknown as RouteSpec;
}
