import type { AuditPage, AuditQuerystring } from '@app/shared/contracts';
import { auditOf, toAuditEntry, type AuditStamp, type Clock } from '@app/shared/domain';
import { AppError } from '@app/shared/errors';
import { Collections, type DocumentStore, type Filter, type IndexSpec } from '@app/shared/store';
import type { GatewayConfig } from '../config.js';
import { findUserById } from './users.js';

/** Default page size of `GET /api/v1/audit`. */
export const AUDIT_PAGE_DEFAULT = 100;

/** What the gateway's own audit entries are stamped from: the request's id and client address. */
export interface AuditOrigin {
  requestId?: string | undefined;
  ip?: string | undefined;
}

/**
 * The stamp of the audit entries a gateway request writes (sign-in, logout, refresh-token reuse,
 * access tokens; docs/audit.md): `actor`, the request id, the client address, now, and
 * `AUDIT_RETENTION_DAYS`.
 */
export function gatewayAuditStamp(
  origin: AuditOrigin,
  deps: { clock: Clock; config: Pick<GatewayConfig, 'AUDIT_RETENTION_DAYS'> },
  actor: string | null,
): AuditStamp {
  return { actor, requestId: origin.requestId ?? '', sourceAddress: origin.ip, at: deps.clock.now(), retentionDays: deps.config.AUDIT_RETENTION_DAYS };
}

/**
 * 403 `ADMIN_ONLY` unless `userId` is an administrator (docs/audit.md "Who may read it"): the
 * account named by `ADMIN_USERNAME`, or a user with the `admin` role. Read per request, never from
 * the token, so a changed role holds at once.
 */
export async function assertAdmin(store: DocumentStore, config: Pick<GatewayConfig, 'ADMIN_USERNAME'>, userId: string): Promise<void> {
  const user = await findUserById(store, userId);
  const admin = user !== null && (user.role === 'admin' || (config.ADMIN_USERNAME !== undefined && user.username === config.ADMIN_USERNAME));
  if (!admin) throw new AppError('ADMIN_ONLY');
}

/**
 * One page of the audit log, oldest first (docs/audit.md "Reading the log"): entries matching
 * every given filter (`actor`, `action`, `from` inclusive, `to` exclusive) with an id after
 * `after`, at most `limit` ({@link AUDIT_PAGE_DEFAULT}). `next_after` is the last entry's id, or
 * `after` when nothing is newer. The time bounds are bounds of `_id` (which starts with the entry
 * time), and `actor` and `action` have indexes ({@link auditIndexes}), so no filter scans the log.
 * Errors: the store's (503).
 */
export async function readAudit(store: DocumentStore, q: AuditQuerystring): Promise<AuditPage> {
  const filter: Filter = {};
  if (q.actor !== undefined) filter.actor = q.actor;
  if (q.action !== undefined) filter.action = q.action;
  // `_id` is `<at>_<time-ordered id>`: `from` and `to` bound it (the `_id` index answers them, in
  // the order the page is read), the same entries as bounds on `at` would select
  const id: Record<string, string> = {};
  if (q.from !== undefined) id.$gte = new Date(q.from).toISOString();
  if (q.to !== undefined) id.$lt = new Date(q.to).toISOString();
  if (q.after !== undefined) id.$gt = q.after;
  if (Object.keys(id).length > 0) filter._id = id;
  const docs = await auditOf(store).find(filter, { sort: { _id: 1 }, limit: q.limit ?? AUDIT_PAGE_DEFAULT });
  return { data: docs.map(toAuditEntry), next_after: docs.at(-1)?._id ?? q.after ?? null };
}

/**
 * Indexes of the audit log's reads (docs/audit.md "Reading the log"): by actor and by action, each
 * with `_id` (the time order pages are read in). The time bounds use `_id` itself.
 */
export const auditIndexes: IndexSpec[] = [
  { collection: Collections.audit, keys: { actor: 1, _id: 1 }, name: 'audit_actor' },
  { collection: Collections.audit, keys: { action: 1, _id: 1 }, name: 'audit_action' },
];
