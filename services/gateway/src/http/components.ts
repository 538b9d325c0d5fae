import type { TSchema } from '@sinclair/typebox';
import {
  AccessToken, AuditEntry, Board, BoardList, BoardMember, CardLease, Column, ColumnAction, CreatedAccessToken, Delivery, EventEnvelope, Group, Note,
  SprintReport, SprintSummary, Task, TaskDetail, TaskLease, View, Webhook,
} from '@app/shared/contracts';
import { ErrorBodySchema } from './error-mapping.js';

/**
 * The resources both API documents name (docs/http.md "Named schemas"): component name → the
 * contract's schema. A schema in a document that is structurally the same as one of these
 * (ignoring its own `description`) becomes a `$ref` to it, so generators get a `Task`, `Board`, …
 * type. Add a resource here to name it; nothing else changes.
 */
export const NAMED_SCHEMAS: Readonly<Record<string, TSchema>> = {
  Task, TaskDetail, TaskLease, Note, Board, BoardList, Column, ColumnAction, BoardMember, Group,
  Sprint: SprintSummary, SprintReport, Event: EventEnvelope, Webhook, Delivery, AccessToken, CreatedAccessToken,
  Lease: CardLease, View, AuditEntry, Error: ErrorBodySchema,
};

type J = Record<string, unknown>;
const isObj = (v: unknown): v is J => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A schema's identity for matching: canonical JSON (sorted keys) without its top-level `description`. */
function keyOf(s: J): string {
  const canon = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(canon);
    if (!isObj(v)) return v;
    return Object.fromEntries(Object.keys(v).sort().map((k) => [k, canon(v[k])]));
  };
  const { description: _d, ...rest } = s;
  return JSON.stringify(canon(rest));
}

/** Keywords whose value is one schema, and whose value is a map or list of schemas. */
const ONE = ['items', 'additionalProperties', 'not', 'contains', 'if', 'then', 'else', 'unevaluatedProperties', 'propertyNames'];
const MANY = ['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas'];
const LIST = ['allOf', 'anyOf', 'oneOf', 'prefixItems', 'x-anyOf', 'x-oneOf', 'x-tuple'];

/**
 * Names the resources of one document. `convert` turns a contract schema into the document's
 * dialect (the same conversion its routes' schemas went through), `ref` makes a reference from a
 * name, and `siblings` says whether a `description` may stand beside `$ref` (OpenAPI 3.1: yes;
 * Swagger 2.0: no). Returns the named schemas for `components/schemas` (or `definitions`) and a
 * function rewriting one schema of the document, in place of its copies of them. Pure.
 */
export function schemaNamer(convert: (s: unknown) => unknown, ref: (name: string) => string, siblings: boolean) {
  const converted = Object.entries(NAMED_SCHEMAS).map(([name, s]) => [name, convert(structuredClone(s)) as J] as const);
  const byKey = new Map(converted.map(([name, s]) => [keyOf(s), name]));
  const rewrite = (s: unknown, self?: string): unknown => {
    if (Array.isArray(s)) return s.map((v) => rewrite(v));
    if (!isObj(s)) return s;
    const name = byKey.get(keyOf(s));
    if (name !== undefined && name !== self) {
      const description = s.description;
      return siblings && typeof description === 'string' && description !== NAMED_SCHEMAS[name]!.description ? { $ref: ref(name), description } : { $ref: ref(name) };
    }
    const out: J = { ...s };
    for (const k of ONE) if (isObj(out[k])) out[k] = rewrite(out[k]);
    for (const k of MANY) if (isObj(out[k])) out[k] = Object.fromEntries(Object.entries(out[k] as J).map(([n, v]) => [n, rewrite(v)]));
    for (const k of LIST) if (Array.isArray(out[k])) out[k] = (out[k] as unknown[]).map((v) => rewrite(v));
    return out;
  };
  const components: J = Object.fromEntries(converted.map(([name, s]) => [name, rewrite(s, name)]));
  return { components, rewrite: (s: unknown) => rewrite(s) };
}

/**
 * Whether a route's body must be sent (`requestBody.required`, a Swagger 2.0 body parameter's
 * `required`): a missing body reads as `{}` (routes/register.ts), so a body is required unless
 * `{}` is a valid one, i.e. unless it is an object schema naming no required property. Pure.
 */
export function bodyRequired(schema: unknown): boolean {
  if (!isObj(schema)) return false;
  if (schema.type !== 'object') return true;
  return Array.isArray(schema.required) && schema.required.length > 0;
}

/** What each area (tag) of the API holds, for the documents' `tags`; a tag not listed here is described by its name. */
export const TAG_DESCRIPTIONS: Readonly<Record<string, string>> = {
  auth: 'Sign-up, sign-in (password or OpenID Connect), token refresh and sign-out (docs/auth.md)',
  tasks: 'Tasks (cards): create, read, update, delete, metadata, notes, batches and the task query (docs/tasks.md)',
  boards: 'Boards, their columns (defined by queries), cards on them, moves, members and WIP limits (docs/boards.md)',
  groups: 'Groups of users that boards are shared with (docs/boards.md)',
  leases: 'Claiming a card from a column and renewing, completing or releasing the lease (docs/boards.md)',
  sprints: 'Sprints on a board: create, start, close with rollover, report, velocity and burndown (docs/sprints.md)',
  events: 'The event feed and the live event stream (docs/events.md)',
  webhooks: 'Webhooks and their deliveries (docs/events.md)',
  views: 'Saved views: a named query over tasks (docs/views.md)',
  flow: 'Cumulative flow and cycle time of a board (docs/flow.md)',
  tokens: 'Personal access tokens with scopes (docs/auth.md "Access tokens")',
  audit: 'The audit log (docs/audit.md)',
  health: 'Liveness, readiness, version and metrics (docs/observability.md)',
  mcp: 'The Model Context Protocol endpoint for agents (docs/agents.md)',
};

/** The documents' `tags`: every tag the operations use, in first-use order, each with its description. */
export function documentTags(schemas: readonly unknown[]): Array<{ name: string; description: string }> {
  const names = new Set<string>();
  for (const s of schemas) if (isObj(s) && Array.isArray(s.tags)) for (const t of s.tags) names.add(String(t));
  return [...names].map((name) => ({ name, description: TAG_DESCRIPTIONS[name] ?? `Operations of ${name}` }));
}
