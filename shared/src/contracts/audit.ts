import { Type, type Static } from '@sinclair/typebox';
import { StringEnum, Timestamp } from './schemas.js';

/**
 * The actions the audit log records (docs/audit.md "Actions"). Sign-in records its outcome
 * (`failure` for a wrong password); every other action is recorded when it succeeds, in the
 * transaction that performs it.
 */
export const AUDIT_ACTIONS = [
  'auth.login',
  'auth.logout',
  'auth.refresh_reuse',
  'token.create',
  'token.revoke',
  'board.share',
  'board.unshare',
  'board.delete',
  'group.create',
  'group.member_add',
  'group.member_role',
  'group.member_remove',
  'webhook.create',
  'webhook.update',
  'webhook.delete',
] as const;

/** One of {@link AUDIT_ACTIONS}. */
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

/** Longest `after` cursor accepted (an entry id is 61 characters). */
const AUDIT_CURSOR_MAX = 128;

/** Query of `GET /api/v1/audit` (docs/audit.md "Reading the log"); every filter is optional and they combine. */
export const AuditQuerystring = Type.Object(
  {
    actor: Type.Optional(Type.String({ minLength: 1, maxLength: 128, description: 'user id of the actor' })),
    action: Type.Optional(StringEnum([...AUDIT_ACTIONS], { description: 'one action name' })),
    from: Type.Optional(Type.String({ format: 'date-time', description: 'entries at or after this instant' })),
    to: Type.Optional(Type.String({ format: 'date-time', description: 'entries before this instant' })),
    after: Type.Optional(Type.String({ minLength: 1, maxLength: AUDIT_CURSOR_MAX, description: 'the previous page\'s `next_after`' })),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 500, default: 100, description: 'entries per page' })),
  },
  { additionalProperties: false },
);
export type AuditQuerystring = Static<typeof AuditQuerystring>;

/** One audit entry as the API shows it (docs/audit.md "Fields"). Never holds a password, token, secret or URL credentials. */
export const AuditEntry = Type.Object({
  id: Type.String({ description: 'time-ordered; the cursor of the page after it' }),
  at: Timestamp,
  actor: Type.Union([Type.String(), Type.Null()], { description: 'user id; null for a failed sign-in of an unknown user' }),
  action: StringEnum([...AUDIT_ACTIONS]),
  target: Type.Union([Type.String(), Type.Null()], { description: '`<kind>:<id>`, e.g. `board:<id>`; null when the action has none' }),
  outcome: StringEnum(['success', 'failure']),
  source_address: Type.Union([Type.String(), Type.Null()], { description: 'the client address the gateway saw' }),
  request_id: Type.String(),
  details: Type.Object({}, { additionalProperties: true, description: 'action-specific, never secret (docs/audit.md)' }),
});
export type AuditEntry = Static<typeof AuditEntry>;

/** A page of the audit log, oldest first. */
export const AuditPage = Type.Object({
  data: Type.Array(AuditEntry),
  next_after: Type.Union([Type.String(), Type.Null()], { description: 'pass as `after` for the next page: the last entry\'s id, or the `after` given when nothing is newer (null then if none was given)' }),
});
export type AuditPage = Static<typeof AuditPage>;
