import type { TObject, TSchema } from '@sinclair/typebox';
import type { AnyOp, In } from '@app/shared/contracts';

/** HTTP verbs the route table uses. */
export type Method = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** The parts of an HTTP request a route's `input` mapper may read (already validated). */
export interface RouteRequest {
  params: Record<string, string>;
  query: Record<string, unknown>;
  body: unknown;
}

/**
 * One row of the gateway's route table (DESIGN §9): the target path, its legacy paths and verbs,
 * the bus op it forwards to (exactly one bus request per HTTP request), the HTTP schemas used for
 * validation and Swagger 2.0, the success status and the maturity mark.
 * Paths use Fastify syntax (`/api/v1/tasks/:taskId`).
 */
export interface RouteSpec<O extends AnyOp = AnyOp> {
  method: Method;
  url: string;
  /** Legacy paths answering the same op, with their own verb when it differs (SPEC "Versioning"). */
  legacy?: ReadonlyArray<{ url: string; method?: Method }>;
  op: O;
  /** Maps the validated HTTP request to the op's input; the caller's user id travels in the bus meta. */
  input: (req: RouteRequest) => In<O>;
  summary: string;
  /** Swagger tag, e.g. `tasks`, `boards`. */
  tag: string;
  maturity: 'live' | 'draft';
  params?: TObject;
  querystring?: TObject;
  body?: TSchema;
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
}

/**
 * `{url, legacy}` of a path in a target family and its legacy twin (SPEC "Target path families").
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

/** Declares a route row with the op's input type checked. */
export function route<O extends AnyOp>(spec: RouteSpec<O>): RouteSpec {
  return spec as unknown as RouteSpec;
}
