import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { scopesAllow, type AccessToken, type CreatedAccessToken, type Scope, type TokenCreateBody, type TokenGrant } from '@app/shared/contracts';
import { appendAudit, canReadBoard, loadPrincipal, type AuditStamp, type Clock, type Shared } from '@app/shared/domain';
import { AppError, invalidField } from '@app/shared/errors';
import { Collections, type Doc, type DocumentStore, type IndexSpec } from '@app/shared/store';

/*
 * Personal access tokens (docs/auth.md "Access tokens"): long-lived bearer secrets for scripts
 * and agents, each with scopes and optionally a list of boards. The gateway creates, lists,
 * revokes and resolves them; the secret is shown once and stored only as its SHA-256.
 */

/** Every token starts with this, so secret scanners can find one in a leaked file. */
export const TOKEN_PREFIX = 'bts_';

/** How long a resolved token is remembered by the gateway that resolved it (a revocation there evicts it at once). */
export const TOKEN_CACHE_TTL_MS = 5_000;
/**
 * A token's `last_used_at` is written at most this often (milliseconds): the first request with
 * it at once, later ones when the recorded time is older than this, so a busy agent costs one
 * small write a minute, not one per request.
 */
export const LAST_USED_RESOLUTION_MS = 60_000;

/** A stored access token; never the secret itself. */
export interface AccessTokenDoc extends Doc {
  user_id: string;
  /** The user's name at creation (the principal's `name`). */
  username: string;
  name: string;
  /** SHA-256 (hex) of the secret. */
  tokenHash: string;
  /** The secret's first 8 characters, to tell tokens apart in a list. */
  prefix: string;
  scopes: Scope[];
  board_ids?: string[];
  /** ISO 8601 UTC. */
  created_at: string;
  expires_at?: string;
  revoked: boolean;
  revoked_at?: string;
  /** ISO 8601 UTC of the last request made with it, to {@link LAST_USED_RESOLUTION_MS}. */
  last_used_at?: string;
}

/**
 * Indexes of the token records: by user (the list). The unique index by hash (the lookup of every
 * request) is the collection's, in the store's schema (docs/store.md "One definition per collection").
 */
export const accessTokenIndexes: IndexSpec[] = [{ collection: Collections.accessTokens, keys: { user_id: 1, created_at: 1 }, name: 'access_tokens_by_user' }];

function tokensOf(store: DocumentStore) {
  return store.collection<AccessTokenDoc>(Collections.accessTokens);
}

function sha256(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/** The API view of a record (no hash, no secret). */
export function toAccessToken(doc: AccessTokenDoc): AccessToken {
  const out: AccessToken = { id: doc._id, name: doc.name, scopes: doc.scopes, prefix: doc.prefix, created_at: doc.created_at, revoked: doc.revoked };
  if (doc.board_ids !== undefined) out.board_ids = doc.board_ids;
  if (doc.expires_at !== undefined) out.expires_at = doc.expires_at;
  if (doc.last_used_at !== undefined) out.last_used_at = doc.last_used_at;
  return out;
}

/** Who asks for a new token: the user, and the grant of the token it authenticated with (none for a JWT). */
export interface TokenCreator {
  userId: string;
  username: string;
  grant?: TokenGrant | undefined;
}

/**
 * Creates a token for `creator.userId` (docs/auth.md "Access tokens"). 400 `VALIDATION_FAILED`
 * naming the field for an `expires_at` not in the future or a board the user cannot read
 * (`board_ids/<i>`); 403 `INSUFFICIENT_SCOPE` when a token asks for more than it has itself
 * (a scope it lacks, or a board outside its list, or no board list when it has one). Returns the
 * record's API view with the secret (`bts_` + 43 base64url characters), which is not stored.
 * Records `token.create` (name, scopes, boards; never the secret) in the audit log in the same
 * transaction, stamped with `stamp`.
 */
export async function createAccessToken(store: DocumentStore, clock: Clock, creator: TokenCreator, body: TokenCreateBody, stamp: AuditStamp): Promise<CreatedAccessToken> {
  const now = clock.now();
  if (body.expires_at !== undefined && !(Date.parse(body.expires_at) > now.getTime())) {
    throw invalidField('/expires_at', 'must be in the future');
  }
  const parent = creator.grant;
  if (parent !== undefined) {
    const wider = body.scopes.find((s) => !scopesAllow(parent.scopes, s));
    if (wider !== undefined) throw new AppError('INSUFFICIENT_SCOPE', { message: `A token cannot create a token with the ${wider} scope it lacks`, details: { required: wider } });
    if (parent.boardIds !== undefined && (body.board_ids === undefined || body.board_ids.some((b) => !parent.boardIds!.includes(b)))) {
      throw new AppError('INSUFFICIENT_SCOPE', { message: 'A token narrowed to boards can only create tokens narrowed to some of them', details: { board_ids: parent.boardIds } });
    }
  }
  if (body.board_ids !== undefined) {
    const principal = await loadPrincipal(store, creator.userId, undefined, parent);
    const boards = await store.collection<Shared & Doc>(Collections.boards).find({ _id: { $in: body.board_ids } }, { projection: { _id: 1, owner_id: 1, groupId: 1 } });
    const readable = new Set(boards.filter((b) => canReadBoard(principal, b)).map((b) => b._id));
    const missing = body.board_ids.findIndex((id) => !readable.has(id));
    if (missing >= 0) throw invalidField(`/board_ids/${missing}`, 'is not a board you can read');
  }
  const secret = TOKEN_PREFIX + randomBytes(32).toString('base64url');
  const doc: AccessTokenDoc = {
    _id: randomUUID(),
    user_id: creator.userId,
    username: creator.username,
    name: body.name,
    tokenHash: sha256(secret),
    prefix: secret.slice(0, 8),
    scopes: [...body.scopes],
    created_at: now.toISOString(),
    revoked: false,
  };
  if (body.board_ids !== undefined) doc.board_ids = [...body.board_ids];
  if (body.expires_at !== undefined) doc.expires_at = new Date(body.expires_at).toISOString();
  await store.withTransaction(async (session) => {
    await tokensOf(store).insertOne(doc, { session });
    const details = { name: doc.name, scopes: doc.scopes, ...(doc.board_ids ? { board_ids: doc.board_ids } : {}), ...(doc.expires_at ? { expires_at: doc.expires_at } : {}) };
    await appendAudit(store, session, [{ action: 'token.create', target: `token:${doc._id}`, details }], stamp);
  });
  return { ...toAccessToken(doc), token: secret };
}

/** The user's tokens, oldest first, revoked ones included (marked). */
export async function listAccessTokens(store: DocumentStore, userId: string): Promise<AccessToken[]> {
  return (await tokensOf(store).find({ user_id: userId }, { sort: { created_at: 1, _id: 1 } })).map(toAccessToken);
}

/**
 * Revokes the user's token `tokenId` (revoking a revoked token again is a no-op), recording
 * `token.revoke` in the audit log in the same transaction when it did revoke. 404
 * `TOKEN_NOT_FOUND` for a token of another user or none.
 */
export async function revokeAccessToken(store: DocumentStore, clock: Clock, userId: string, tokenId: string, stamp: AuditStamp): Promise<void> {
  const doc = await tokensOf(store).findOne({ _id: tokenId, user_id: userId });
  if (!doc) throw new AppError('TOKEN_NOT_FOUND', { details: { tokenId } });
  if (doc.revoked) return;
  await store.withTransaction(async (session) => {
    const done = await tokensOf(store).updateOne({ _id: tokenId, revoked: false }, { $set: { revoked: true, revoked_at: clock.now().toISOString() } }, { session });
    if (done.modifiedCount === 1) await appendAudit(store, session, [{ action: 'token.revoke', target: `token:${tokenId}`, details: { name: doc.name } }], stamp);
  });
}

/** A token resolved to its user and grant. */
export interface ResolvedToken {
  userId: string;
  username: string;
  grant: TokenGrant;
}

/**
 * Resolves `bts_…` secrets to their user and grant for the gateway's auth hook. A live token
 * (known, not revoked, not expired by `clock`) is remembered for {@link TOKEN_CACHE_TTL_MS} by
 * its hash; {@link evict} drops a revoked token at once, so a revocation through this gateway
 * holds for the very next request. Unknown, revoked and expired tokens are never remembered.
 */
export class AccessTokenResolver {
  private readonly cache = new LRUCache<string, { token: ResolvedToken; expiresAtMs: number | undefined; tokenId: string }>({ max: 10_000, ttl: TOKEN_CACHE_TTL_MS });
  /** Token id → when this gateway last wrote its `last_used_at` (epoch ms). */
  private readonly usedWritten = new LRUCache<string, number>({ max: 10_000 });

  constructor(
    private readonly store: DocumentStore,
    private readonly clock: Clock,
  ) {}

  /** The token's user and grant, or undefined when the secret is no live token. */
  async resolve(secret: string): Promise<ResolvedToken | undefined> {
    const hash = sha256(secret);
    const nowMs = this.clock.now().getTime();
    const hit = this.cache.get(hash);
    if (hit && (hit.expiresAtMs === undefined || hit.expiresAtMs > nowMs)) {
      this.noteUse(hit.tokenId, nowMs);
      return hit.token;
    }
    const doc = await tokensOf(this.store).findOne({ tokenHash: hash });
    if (!doc || doc.revoked) return undefined;
    const expiresAtMs = doc.expires_at === undefined ? undefined : Date.parse(doc.expires_at);
    if (expiresAtMs !== undefined && expiresAtMs <= nowMs) return undefined;
    const grant: TokenGrant = { tokenId: doc._id, tokenName: doc.name, userId: doc.user_id, scopes: doc.scopes, ...(doc.board_ids ? { boardIds: doc.board_ids } : {}) };
    const token = { userId: doc.user_id, username: doc.username, grant };
    this.cache.set(hash, { token, expiresAtMs, tokenId: doc._id });
    this.noteUse(doc._id, nowMs);
    return token;
  }

  /**
   * Records a use of token `tokenId` at `nowMs` as its `last_used_at`, at most once per
   * {@link LAST_USED_RESOLUTION_MS} per token. The write does not hold up the request; a failed
   * one is forgotten (the next use tries again).
   */
  private noteUse(tokenId: string, nowMs: number): void {
    const last = this.usedWritten.get(tokenId);
    if (last !== undefined && nowMs - last < LAST_USED_RESOLUTION_MS) return;
    this.usedWritten.set(tokenId, nowMs);
    tokensOf(this.store)
      .updateOne({ _id: tokenId }, { $set: { last_used_at: new Date(nowMs).toISOString() } })
      .catch(() => this.usedWritten.delete(tokenId));
  }

  /** Forgets token `tokenId` (after its revocation). */
  evict(tokenId: string): void {
    for (const [hash, entry] of this.cache.entries()) if (entry.tokenId === tokenId) this.cache.delete(hash);
  }
}
