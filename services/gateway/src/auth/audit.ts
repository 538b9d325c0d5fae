import type { AuditPage, AuditQuerystring } from '@app/shared/contracts';
import { auditOf, toAuditEntry, type AuditStamp, type Clock } from '@app/shared/domain';
import { AppError } from '@app/shared/errors';
import type { DocumentStore, Filter } from '@app/shared/store';
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
 * `after` when nothing is newer. Errors: the store's (503).
 */
export async function readAudit(store: DocumentStore, q: AuditQuerystring): Promise<AuditPage> {
  const filter: Filter = {};
  if (q.actor !== undefined) filter.actor = q.actor;
  if (q.action !== undefined) filter.action = q.action;
  const at: Record<string, string> = {};
  if (q.from !== undefined) at.$gte = new Date(q.from).toISOString();
  if (q.to !== undefined) at.$lt = new Date(q.to).toISOString();
  if (Object.keys(at).length > 0) filter.at = at;
  if (q.after !== undefined) filter._id = { $gt: q.after };
  const docs = await auditOf(store).find(filter, { sort: { _id: 1 }, limit: q.limit ?? AUDIT_PAGE_DEFAULT });
  return { data: docs.map(toAuditEntry), next_after: docs.at(-1)?._id ?? q.after ?? null };
}
