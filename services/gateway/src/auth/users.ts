import { randomUUID } from 'node:crypto';
import { AppError } from '@app/shared/errors';
import { Collections, SCHEMA_INDEXES, type Doc, type DocumentStore, type IndexSpec, type Session } from '@app/shared/store';
import { systemClock, type Clock } from '@app/shared/domain';
import type { GatewayConfig } from '../config.js';
import { hashPassword } from './passwords.js';

/** A stored user (docs/architecture.md §5); only the gateway reads and writes the `users` collection. */
export interface UserDoc extends Doc {
  username: string;
  /** argon2id PHC string; absent for a user made by OpenID Connect sign-in (no password to sign in with). */
  passwordHash?: string;
  /** The identity provider account this user was made for (docs/auth.md "Sign in with OpenID Connect"): found by it at each sign-in. */
  oidc?: { iss: string; sub: string };
  email?: string;
  /** `admin` for the bootstrapped admin (`ensureAdmin`); absent means `user`. */
  role?: 'admin' | 'user';
  /** IANA time zone the user chose; absent means `UTC`. */
  timezone?: string;
  /** ISO 8601 UTC. */
  created_at: string;
}

/**
 * Indexes the gateway ensures: every collection's unique and TTL indexes (`SCHEMA_INDEXES`: unique
 * usernames and refresh-token hashes among them, docs/store.md "One definition per collection"),
 * refresh tokens by family (users by identity provider account: `oidc_subject`, unique and sparse,
 * is one of the schema's).
 */
export const authIndexes: IndexSpec[] = [
  ...SCHEMA_INDEXES,
  { collection: Collections.refreshTokens, keys: { familyId: 1 }, name: 'family' },
];

function usersOf(store: DocumentStore) {
  return store.collection<UserDoc>(Collections.users);
}

/** Looks a user up by id. */
export function findUserById(store: DocumentStore, id: string): Promise<UserDoc | null> {
  return usersOf(store).findOne({ _id: id });
}

/** Looks a user up by exact (case-sensitive) username. */
export function findUserByUsername(store: DocumentStore, username: string): Promise<UserDoc | null> {
  return usersOf(store).findOne({ username });
}

/**
 * Creates a user with an argon2id hash of `password`. Throws 409 `USERNAME_TAKEN` when the
 * username exists (checked first, and again by the unique index for a concurrent twin).
 */
export async function createUser(
  store: DocumentStore,
  clock: Clock,
  input: { username: string; password: string; email?: string | undefined; role?: 'admin' | undefined },
): Promise<UserDoc> {
  if (await findUserByUsername(store, input.username)) throw new AppError('USERNAME_TAKEN');
  const user: UserDoc = {
    _id: randomUUID(),
    username: input.username,
    passwordHash: await hashPassword(input.password),
    created_at: clock.now().toISOString(),
  };
  if (input.email !== undefined) user.email = input.email;
  if (input.role !== undefined) user.role = input.role;
  try {
    await usersOf(store).insertOne(user);
  } catch (e) {
    if (AppError.is(e) && e.code === 'CONFLICT') throw new AppError('USERNAME_TAKEN');
    throw e;
  }
  return user;
}

/**
 * Bootstraps the admin user from `ADMIN_USERNAME`/`ADMIN_PASSWORD` when both are set and no user
 * of that name exists (docs/auth.md; the way in for a deployment with `REGISTRATION_ENABLED=false`).
 * Never changes an existing user's password. Safe to run from several replicas at once: it
 * ensures {@link authIndexes} first, so the unique username index exists before the insert and a
 * second replica's insert of the same name is refused (two gateways starting on a fresh database
 * never both create the admin, which would leave the index unbuildable).
 * Returns true when it created the user. Errors: the store's (503).
 */
export async function ensureAdmin(
  store: DocumentStore,
  config: Pick<GatewayConfig, 'ADMIN_USERNAME' | 'ADMIN_PASSWORD'>,
  clock: Clock = systemClock,
): Promise<boolean> {
  const { ADMIN_USERNAME: username, ADMIN_PASSWORD: password } = config;
  if (username === undefined || password === undefined) return false;
  await store.ensureIndexes(authIndexes);
  try {
    await createUser(store, clock, { username, password, role: 'admin' });
    return true;
  } catch (e) {
    if (AppError.is(e) && e.code === 'USERNAME_TAKEN') return false;
    throw e;
  }
}

/**
 * The user made for identity provider account `sub` of issuer `iss`, if any; read in `session`
 * when given (the sign-in's transaction: the snapshot its insert of a new user commits against).
 */
export function findUserByOidc(store: DocumentStore, iss: string, sub: string, session?: Session): Promise<UserDoc | null> {
  return usersOf(store).findOne({ 'oidc.iss': iss, 'oidc.sub': sub }, session ? { session } : {});
}

/**
 * The new user of a first OpenID Connect sign-in (no password), inserted in `session`. Throws 409
 * `OIDC_USERNAME_TAKEN` when a user of that name exists (checked first, and again by the unique
 * index): a local account is never joined to a provider account silently.
 */
export async function createOidcUser(
  store: DocumentStore, session: Session, clock: Clock, input: { username: string; email?: string | undefined; iss: string; sub: string },
): Promise<UserDoc> {
  const taken = () => new AppError('OIDC_USERNAME_TAKEN', { details: { username: input.username } });
  if (await usersOf(store).findOne({ username: input.username }, { session })) throw taken();
  const user: UserDoc = { _id: randomUUID(), username: input.username, oidc: { iss: input.iss, sub: input.sub }, created_at: clock.now().toISOString() };
  if (input.email !== undefined) user.email = input.email;
  try {
    await usersOf(store).insertOne(user, { session });
  } catch (e) {
    if (AppError.is(e) && e.code === 'CONFLICT') throw taken();
    throw e;
  }
  return user;
}
