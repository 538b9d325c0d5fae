import { Type, type Static } from '@sinclair/typebox';
import type { AnyOp } from './op.js';
import { StringEnum, Timestamp } from './schemas.js';

/*
 * Personal access tokens (docs/auth.md "Access tokens"): what a token may do (its scopes and its
 * boards), how that travels on the bus, and which scope each bus op needs. The gateway owns the
 * token records; every service checks the scope of an op in the one dispatch step and the board
 * narrowing where it checks access (shared/src/domain/access.ts).
 */

/** The scopes a token can carry. */
export const SCOPES = ['read', 'write', 'admin'] as const;
/**
 * A token scope: `read` (every read), `write` (tasks, cards, moves, notes, sprints, views),
 * `admin` (boards, sharing, groups, webhooks, tokens). `write` and `admin` each include `read`.
 */
export type Scope = (typeof SCOPES)[number];

/** What a request made with an access token may do, as the gateway resolved it. A JWT request carries none. */
export interface TokenGrant {
  /** The token's id (also recorded as the `actor_token` of every event its writes emit). */
  tokenId: string;
  /** The token's name (a lease claimed with it shows it as `holder_token_name`). */
  tokenName?: string;
  /** The token's user: a grant only ever narrows what this user may do. */
  userId: string;
  scopes: readonly Scope[];
  /** When set, the token reaches only these boards and their cards. */
  boardIds?: readonly string[];
}

/** True when `scopes` allow an op needing `need`: the scope itself, or any scope for `read`. */
export function scopesAllow(scopes: readonly Scope[], need: Scope): boolean {
  return scopes.includes(need) || (need === 'read' && scopes.length > 0);
}

/**
 * The scope each bus op needs from a token, by subject. An op missing here needs `admin` (a new
 * op is closed to narrower tokens until it is listed); a test keeps every served op listed.
 */
export const OP_SCOPES: Readonly<Record<string, Scope>> = {
  // boards: reads, cards and moves; the board itself and its sharing are admin
  'boards.list': 'read', 'boards.get': 'read', 'boards.members': 'read', 'boards.previewActions': 'read',
  'boards.previewCreate': 'read', 'boards.previewUpdate': 'read',
  'boards.ensureDefault': 'write', 'boards.createTask': 'write', 'boards.move': 'write',
  'boards.claim': 'write', 'boards.renewLease': 'write', 'boards.completeLease': 'write', 'boards.releaseLease': 'write',
  'boards.create': 'admin', 'boards.update': 'admin', 'boards.remove': 'admin', 'boards.share': 'admin', 'boards.unshare': 'admin',
  'boards.addMember': 'admin', 'boards.updateMember': 'admin', 'boards.removeMember': 'admin',
  'groups.list': 'read', 'groups.get': 'read',
  'groups.create': 'admin', 'groups.addMember': 'admin', 'groups.removeMember': 'admin',
  // reads of task lists and the feed
  'query.tasks': 'read', 'query.board': 'read', 'query.column': 'read', 'query.boardTasks': 'read', 'query.summary': 'read',
  'query.validate': 'read', 'query.events': 'read',
  'webhooks.create': 'admin', 'webhooks.list': 'admin', 'webhooks.get': 'admin', 'webhooks.update': 'admin',
  'webhooks.remove': 'admin', 'webhooks.deliveries': 'admin', 'webhooks.retry': 'admin',
  'sprints.list': 'read', 'sprints.report': 'read', 'sprints.velocity': 'read', 'sprints.burndown': 'read',
  'sprints.close': 'write', 'sprints.create': 'write', 'sprints.start': 'write',
  'tasks.get': 'read', 'tasks.listNotes': 'read', 'tasks.getMany': 'read',
  'tasks.create': 'write', 'tasks.update': 'write', 'tasks.remove': 'write', 'tasks.setMetadata': 'write', 'tasks.deleteMetadata': 'write',
  'tasks.movePath': 'write', 'tasks.addNote': 'write', 'tasks.createBatch': 'write', 'tasks.updateBatch': 'write', 'tasks.restore': 'write',
  'tasks.checkIn': 'write', 'tasks.updateMany': 'write', 'tasks.updateEach': 'write', 'tasks.deleteMany': 'write', 'tasks.transfer': 'write',
  'tasks.upsert': 'write',
  'views.list': 'read', 'views.get': 'read', 'views.query': 'read',
  'views.create': 'write', 'views.update': 'write', 'views.remove': 'write',
  'flow.cumulative': 'read', 'flow.cycleTime': 'read', 'flow.snapshot': 'write',
  // imports create boards (admin, like boards.create); their state, dry runs and exports are reads
  'imports.get': 'read', 'imports.preview': 'read', 'query.exportPage': 'read', 'imports.create': 'admin',
  'customFields.list': 'read', 'customFields.get': 'read',
  'customFields.create': 'admin', 'customFields.update': 'admin', 'customFields.remove': 'admin',
};

/** The scope `op` needs from a token ({@link OP_SCOPES}; `admin` when unlisted). */
export function scopeOf(op: Pick<AnyOp, 'subject'>): Scope {
  return OP_SCOPES[op.subject] ?? 'admin';
}

/** The token id pattern in paths: a UUID. */
const TokenId = Type.String({ minLength: 1, maxLength: 64, description: 'the token id (UUID)' });

/** Most boards one token may be narrowed to. */
export const TOKEN_BOARDS_MAX = 100;

/** Body of `POST /api/v1/tokens` (docs/auth.md "Access tokens"). */
export const TokenCreateBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 100, description: 'a label for the token, e.g. the agent that uses it' }),
    scopes: Type.Array(StringEnum([...SCOPES]), {
      minItems: 1, maxItems: SCOPES.length, uniqueItems: true, description: '`read`, `write` (tasks, cards, moves, sprints), `admin` (boards, sharing, groups, webhooks, tokens); `write` and `admin` include `read`',
    }),
    board_ids: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64 }), {
      minItems: 1, maxItems: TOKEN_BOARDS_MAX, uniqueItems: true, description: 'narrows the token to these boards (each one you can read) and their cards',
    })),
    expires_at: Type.Optional(Type.String({ format: 'date-time', description: 'ISO 8601; must be in the future. Absent: the token does not expire' })),
  },
  { additionalProperties: false },
);
export type TokenCreateBody = Static<typeof TokenCreateBody>;

/** An access token as listed: everything but the secret. */
export const AccessToken = Type.Object({
  id: Type.String(),
  name: Type.String(),
  scopes: Type.Array(Type.String()),
  board_ids: Type.Optional(Type.Array(Type.String())),
  /** First characters of the secret, so a user can tell tokens apart (`bts_ab12…`). */
  prefix: Type.String({ description: 'the first 8 characters of the token, e.g. `bts_Ab1c`' }),
  created_at: Timestamp,
  expires_at: Type.Optional(Timestamp),
  last_used_at: Type.Optional(Timestamp),
  revoked: Type.Boolean(),
});
export type AccessToken = Static<typeof AccessToken>;

/** Answer of `POST /api/v1/tokens`: the listed fields plus the secret, shown this once. */
export const CreatedAccessToken = Type.Object({
  ...AccessToken.properties,
  token: Type.String({ description: 'the secret (`bts_…`), shown only in this answer; send it as `Authorization: Bearer bts_…`' }),
});
export type CreatedAccessToken = Static<typeof CreatedAccessToken>;

/** Path parameters of `DELETE /api/v1/tokens/{tokenId}`. */
export const TokenParams = Type.Object({ tokenId: TokenId }, { additionalProperties: false });
