import { Collections } from './collections.js';
import type { IndexSpec } from './port.js';

/**
 * The one definition of what a collection's writes rely on, whichever service or process writes
 * it (docs/store.md "One definition per collection"): its unique keys and its TTL index. Every
 * process that serves writes ensures all of them before it serves (`serveServices`, the gateway's
 * `buildApp` and `ensureAdmin`), so a service whose own index list forgets one still writes to a
 * collection that has it. A TTL index's field is also the collection's date-valued field: the
 * MongoDB store keeps it as a BSON date (the TTL monitor removes only dates) from the moment it
 * opens, not from the moment some service ensured the index ({@link ttlFieldOf}).
 *
 * Indexes a service needs only for its own reads stay in that service's definition.
 */
export const COLLECTION_INDEXES: Readonly<Partial<Record<(typeof Collections)[keyof typeof Collections], readonly IndexSpec[]>>> = {
  /** Events by `seq`, unique: a second relay pass numbering the same `seq` fails (docs/concurrency.md "The events outbox"). */
  [Collections.events]: [{ collection: Collections.events, keys: { seq: 1 }, unique: true, name: 'events_seq' }],
  /** Idempotency-Key records expire at `expires_at` (docs/concurrency.md "Idempotency-Key"). */
  [Collections.idempotency]: [{ collection: Collections.idempotency, keys: { expires_at: 1 }, expireAfterSeconds: 0, name: 'idempotency_ttl' }],
  /** Audit entries expire at `expires_at`, set from `AUDIT_RETENTION_DAYS` when written (docs/audit.md "Retention"). */
  [Collections.audit]: [{ collection: Collections.audit, keys: { expires_at: 1 }, expireAfterSeconds: 0, name: 'audit_ttl' }],
  /** A board's daily flow snapshot expires at `expires_at` (docs/flow.md "Retention"). */
  [Collections.flowSnapshots]: [{ collection: Collections.flowSnapshots, keys: { expires_at: 1 }, expireAfterSeconds: 0, name: 'flow_snapshots_ttl' }],
  /** One-time OpenID Connect sign-in codes expire at `expires_at` (docs/auth.md "Sign in with OpenID Connect"). */
  [Collections.oidcCodes]: [{ collection: Collections.oidcCodes, keys: { expires_at: 1 }, expireAfterSeconds: 0, name: 'oidc_codes_ttl' }],
  /** One user per username (docs/auth.md). */
  /**
   * One user per provider account (docs/auth.md "What is mapped"): unique and sparse, so local
   * users (no `oidc`) are not in it; two concurrent first sign-ins of one account conflict on it.
   */
  [Collections.users]: [
    { collection: Collections.users, keys: { username: 1 }, unique: true, name: 'username_unique' },
    { collection: Collections.users, keys: { 'oidc.iss': 1, 'oidc.sub': 1 }, unique: true, sparse: true, name: 'oidc_subject' },
  ],
  /** A refresh token is found by its hash, once (docs/auth.md). */
  [Collections.refreshTokens]: [{ collection: Collections.refreshTokens, keys: { tokenHash: 1 }, unique: true, name: 'token_hash_unique' }],
  /** A personal access token is found by its hash, once (docs/auth.md). */
  [Collections.accessTokens]: [{ collection: Collections.accessTokens, keys: { tokenHash: 1 }, unique: true, name: 'access_token_hash_unique' }],
};

/** Every index of {@link COLLECTION_INDEXES}, in one list: what each writing process ensures first. */
export const SCHEMA_INDEXES: readonly IndexSpec[] = Object.values(COLLECTION_INDEXES).flatMap((specs) => specs ?? []);

/** The field of `spec` when it is a TTL index (one key, `expireAfterSeconds` set), else undefined. */
export function ttlFieldOfIndex(spec: IndexSpec): string | undefined {
  const keys = Object.keys(spec.keys);
  return spec.expireAfterSeconds !== undefined && keys.length === 1 ? keys[0] : undefined;
}

/** The TTL field of `collection` by {@link COLLECTION_INDEXES} (kept as a BSON date on MongoDB), if it has one. */
export function ttlFieldOf(collection: string): string | undefined {
  for (const spec of COLLECTION_INDEXES[collection as keyof typeof COLLECTION_INDEXES] ?? []) {
    const field = ttlFieldOfIndex(spec);
    if (field !== undefined) return field;
  }
  return undefined;
}
