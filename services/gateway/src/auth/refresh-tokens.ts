import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { AppError } from '@app/shared/errors';
import { Collections, type Doc, type DocumentStore, type Session } from '@app/shared/store';
import { appendAudit, type AuditStamp, type Clock } from '@app/shared/domain';

/** Refresh token lifetime (docs/architecture.md §5): 30 days. */
export const REFRESH_TOKEN_TTL_MS = 30 * 24 * 60 * 60 * 1000;

/**
 * A stored refresh token. The token itself is never stored, only its SHA-256. Every token issued
 * by rotating another shares its `familyId` (one family per login).
 */
export interface RefreshTokenDoc extends Doc {
  tokenHash: string;
  familyId: string;
  userId: string;
  /** ISO 8601 UTC. */
  created_at: string;
  expires_at: string;
  /** When it was rotated (used); null while unused. */
  used_at: string | null;
  /** True once its family was revoked. */
  revoked: boolean;
}

function tokensOf(store: DocumentStore) {
  return store.collection<RefreshTokenDoc>(Collections.refreshTokens);
}

function sha256(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

async function insertToken(store: DocumentStore, clock: Clock, userId: string, familyId: string, session?: Session): Promise<string> {
  const token = randomBytes(32).toString('base64url');
  const now = clock.now();
  await tokensOf(store).insertOne(
    {
      _id: randomUUID(),
      tokenHash: sha256(token),
      familyId,
      userId,
      created_at: now.toISOString(),
      expires_at: new Date(now.getTime() + REFRESH_TOKEN_TTL_MS).toISOString(),
      used_at: null,
      revoked: false,
    },
    { session },
  );
  return token;
}

/**
 * Issues the first refresh token of a new family (at login), in `session` when given (the sign-in's
 * transaction with its audit entry). Returns the opaque token (base64url, 32 random bytes).
 */
export function issueRefreshToken(store: DocumentStore, clock: Clock, userId: string, session?: Session): Promise<string> {
  return insertToken(store, clock, userId, randomUUID(), session);
}

type Rotation = { kind: 'ok'; userId: string; token: string } | { kind: 'invalid' } | { kind: 'reused' };

/**
 * Rotates a refresh token (docs/architecture.md §5): marks it used and issues its successor in the same family,
 * in one transaction. Throws 401 `REFRESH_TOKEN_INVALID` for an unknown, expired or revoked token,
 * and for a token that was already used — which also revokes its whole family, so a stolen token
 * and its legitimate twin both stop working, and records `auth.refresh_reuse` in the audit log
 * (with `stamp`, in the same transaction; docs/audit.md).
 */
export async function rotateRefreshToken(store: DocumentStore, clock: Clock, token: string, stamp?: AuditStamp): Promise<{ userId: string; token: string }> {
  const col = tokensOf(store);
  const now = clock.now().toISOString();
  const outcome = await store.withTransaction(async (session): Promise<Rotation> => {
    const doc = await col.findOne({ tokenHash: sha256(token) }, { session });
    if (!doc || doc.revoked || doc.expires_at <= now) return { kind: 'invalid' };
    const used = await col.updateOne({ _id: doc._id, used_at: null }, { $set: { used_at: now } }, { session });
    if (used.modifiedCount === 0) {
      await col.updateMany({ familyId: doc.familyId }, { $set: { revoked: true } }, { session });
      if (stamp) await appendAudit(store, session, [{ action: 'auth.refresh_reuse', actor: doc.userId, target: `user:${doc.userId}`, details: { family_id: doc.familyId } }], stamp);
      return { kind: 'reused' };
    }
    return { kind: 'ok', userId: doc.userId, token: await insertToken(store, clock, doc.userId, doc.familyId, session) };
  });
  if (outcome.kind === 'ok') return { userId: outcome.userId, token: outcome.token };
  throw new AppError('REFRESH_TOKEN_INVALID', {
    message: outcome.kind === 'reused' ? 'The refresh token was already used; its session is revoked' : undefined,
  });
}

/**
 * Signs out (docs/auth.md "Logout"): revokes the whole family of refresh token `token` (that token
 * and every one rotated from it), recording `auth.logout` in the same transaction. Throws 401
 * `REFRESH_TOKEN_INVALID` for an unknown, expired or already revoked token. Access tokens (JWTs)
 * already issued stay valid until they expire.
 */
export async function revokeRefreshFamily(store: DocumentStore, clock: Clock, token: string, stamp: AuditStamp): Promise<void> {
  const col = tokensOf(store);
  const now = clock.now().toISOString();
  const revoked = await store.withTransaction(async (session) => {
    const doc = await col.findOne({ tokenHash: sha256(token) }, { session });
    if (!doc || doc.revoked || doc.expires_at <= now) return false;
    await col.updateMany({ familyId: doc.familyId }, { $set: { revoked: true } }, { session });
    await appendAudit(store, session, [{ action: 'auth.logout', actor: doc.userId, target: `user:${doc.userId}` }], stamp);
    return true;
  });
  if (!revoked) throw new AppError('REFRESH_TOKEN_INVALID');
}
