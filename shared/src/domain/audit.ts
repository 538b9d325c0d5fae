import type { AuditAction, AuditEntry } from '../contracts/audit.js';
import { Collections } from '../store/collections.js';
import type { Collection, Doc, DocumentStore, Session } from '../store/port.js';
import { timeOrderedId } from './task.js';

/** Default of `AUDIT_RETENTION_DAYS`: how long an audit entry is kept (docs/audit.md "Retention"). */
export const DEFAULT_AUDIT_RETENTION_DAYS = 365;

/**
 * A stored audit entry in `audit_log` (docs/audit.md). Append-only: nothing updates an entry; the
 * TTL index of the store's schema removes it past `expires_at`. `_id` is the entry time (ISO UTC)
 * and a time-ordered UUID (increasing within a process, also within one millisecond), so ids
 * sort by time and serve as the page cursor.
 */
export interface AuditDoc extends Doc {
  at: string;
  actor: string | null;
  action: AuditAction;
  target: string | null;
  outcome: 'success' | 'failure';
  source_address: string | null;
  request_id: string;
  details: Record<string, unknown>;
  /** ISO UTC: `at` plus the retention in force when the entry was written. */
  expires_at: string;
}

/** What an action says about itself; the writer adds who, when, from where ({@link AuditStamp}). */
export interface NewAudit {
  action: AuditAction;
  /** `<kind>:<id>` of what the action changed, e.g. `board:<id>`. */
  target?: string;
  /** Default `success`. */
  outcome?: 'success' | 'failure';
  /** Action-specific facts; never a password, token, secret or URL with credentials (docs/audit.md). */
  details?: Record<string, unknown>;
  /** Overrides the stamp's actor (a sign-in names the user it signed in). */
  actor?: string | null;
}

/** Who, when and from where, shared by the entries one request writes. */
export interface AuditStamp {
  actor: string | null;
  requestId: string;
  sourceAddress: string | undefined;
  at: Date;
  /** `AUDIT_RETENTION_DAYS`; default {@link DEFAULT_AUDIT_RETENTION_DAYS}. */
  retentionDays?: number | undefined;
}

/** The `audit_log` collection. */
export function auditOf(store: DocumentStore): Collection<AuditDoc> {
  return store.collection<AuditDoc>(Collections.audit);
}

/** The stored form of `entry` under `stamp`. */
export function auditDoc(entry: NewAudit, stamp: AuditStamp): AuditDoc {
  const at = stamp.at.toISOString();
  const days = stamp.retentionDays ?? DEFAULT_AUDIT_RETENTION_DAYS;
  return {
    _id: `${at}_${timeOrderedId()}`,
    at,
    actor: entry.actor !== undefined ? entry.actor : stamp.actor,
    action: entry.action,
    target: entry.target ?? null,
    outcome: entry.outcome ?? 'success',
    source_address: stamp.sourceAddress ?? null,
    request_id: stamp.requestId,
    details: entry.details ?? {},
    expires_at: new Date(stamp.at.getTime() + days * 86_400_000).toISOString(),
  };
}

/**
 * Appends `entries` to the audit log: in `session` (the transaction of the action they record, so
 * an action never commits without its entry and a rolled-back one leaves none), or on their own
 * when no session is given (a failed sign-in, which writes nothing else). Errors: the store's (503).
 */
export async function appendAudit(store: DocumentStore, session: Session | undefined, entries: readonly NewAudit[], stamp: AuditStamp): Promise<void> {
  if (entries.length === 0) return;
  const docs = entries.map((e) => auditDoc(e, stamp));
  await auditOf(store).insertMany(docs, session ? { session } : {});
}

/** The API view of a stored entry. */
export function toAuditEntry(doc: AuditDoc): AuditEntry {
  return {
    id: doc._id, at: doc.at, actor: doc.actor, action: doc.action, target: doc.target, outcome: doc.outcome,
    source_address: doc.source_address, request_id: doc.request_id, details: doc.details,
  };
}

/**
 * The host of a URL without its credentials, path or query (which may carry secrets, such as a
 * chat webhook's token): what the audit log records of a webhook target.
 */
export function auditHost(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return '';
  }
}
