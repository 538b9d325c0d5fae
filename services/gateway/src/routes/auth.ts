import { sameSecret } from '@app/shared/util';
import { Type, type Static } from '@sinclair/typebox';
import { AppError } from '@app/shared/errors';
import { verifyAgainstDummy, verifyPassword } from '../auth/passwords.js';
import { appendAudit } from '@app/shared/domain';
import { gatewayAuditStamp } from '../auth/audit.js';
import { issueRefreshToken, revokeRefreshFamily, rotateRefreshToken } from '../auth/refresh-tokens.js';
import { createUser, findUserById, findUserByUsername, type UserDoc } from '../auth/users.js';
import type { GatewayConfig } from '../config.js';
import { authAt, localRoute, type LocalDeps, type LocalRoute } from './local.js';

const Username = Type.String({ minLength: 3, maxLength: 64, pattern: '^[A-Za-z0-9._@-]+$' });
const Password = Type.String({ minLength: 8, maxLength: 1024 });

/** Body of `POST /auth/v2/register` (docs/architecture.md §9); `inviteCode` is checked when `INVITE_CODE` is set. */
export const RegisterBody = Type.Object(
  {
    username: Username,
    password: Password,
    email: Type.Optional(Type.String({ format: 'email', maxLength: 254 })),
    inviteCode: Type.Optional(Type.String({ maxLength: 256 })),
  },
  { additionalProperties: false },
);

/**
 * Body of `POST /auth/register` (ud's `RegisterRequest`): `inviteCode` is required by the schema
 * (any string when `INVITE_CODE` is unset) and checked when it is set; `language` is accepted
 * and not stored (the service has no per-user language yet).
 */
export const UdRegisterBody = Type.Object(
  {
    username: Username,
    password: Password,
    inviteCode: Type.String({ maxLength: 256, description: 'checked against `INVITE_CODE` when that is set; otherwise any value' }),
    language: Type.Optional(Type.String({ maxLength: 16, description: 'e.g. `en`, `zh`; accepted, not stored' })),
  },
  { additionalProperties: false },
);

/** Answer of `POST /auth/register` (ud's `RegisterResponse`); `timezone` is `UTC` (no per-user time zone yet). */
export const UdRegistered = Type.Object({ username: Type.String(), timezone: Type.String({ description: 'always `UTC`' }) });

/** Body of `POST /auth/v2/login` (docs/architecture.md §5). */
export const LoginBody = Type.Object(
  { username: Type.String({ minLength: 1, maxLength: 64 }), password: Type.String({ minLength: 1, maxLength: 1024 }) },
  { additionalProperties: false },
);

/** Body of `POST /auth/refresh-token` (docs/architecture.md §5). */
export const RefreshBody = Type.Object({ refreshToken: Type.String({ minLength: 1, maxLength: 256 }) }, { additionalProperties: false });

/**
 * Answer of login and refresh: ud's `LoginV2Response` (its published Swagger wins for Live
 * operations, docs/auth.md) plus `tokenType` and `expiresIn` (docs/architecture.md §5).
 * Every field is a string but `expiresIn` (seconds); where the service keeps no such data the
 * documented default is sent: `userRole` `admin` for the admin bootstrapped from
 * `ADMIN_USERNAME`, else `user` (a label only: no permission depends on it); `userTimezone`
 * `UTC`; `userEmail` and `userAvatarUrl` the empty string (docs/auth.md).
 */
export const TokenPair = Type.Object({
  accessToken: Type.String(),
  refreshToken: Type.String({ description: 'Opaque; single use; valid 30 days' }),
  tokenType: Type.Literal('Bearer'),
  expiresIn: Type.Integer({ description: 'Access token lifetime in seconds' }),
  userId: Type.String(),
  userName: Type.String(),
  userRole: Type.String({ description: '`admin` or `user`' }),
  userEmail: Type.String({ description: 'empty when the user gave none' }),
  userTimezone: Type.String({ description: 'IANA zone; `UTC` unless the user set one' }),
  userAvatarUrl: Type.String({ description: 'empty: avatars are not kept' }),
});
type TokenPair = Static<typeof TokenPair>;

/** Answer of register, status 201 (docs/architecture.md §9). */
export const Registered = Type.Object({ userId: Type.String(), username: Type.String() });

/**
 * Whether registration is open (docs/auth.md "Configuration"): as `REGISTRATION_ENABLED` says when
 * it is set; unset, open outside production, and in production only with an `INVITE_CODE`, so a
 * deployment never has open registration without asking for it.
 */
export function registrationOpen(config: Pick<GatewayConfig, 'REGISTRATION_ENABLED' | 'INVITE_CODE' | 'NODE_ENV'>): boolean {
  if (config.REGISTRATION_ENABLED !== undefined) return config.REGISTRATION_ENABLED;
  return config.NODE_ENV !== 'production' || config.INVITE_CODE !== undefined;
}

/** 403 `LOCAL_LOGIN_DISABLED` with `LOCAL_LOGIN=false`; 403 `REGISTRATION_DISABLED` unless registration is open ({@link registrationOpen}) and the invite code (when configured) matches. */
function assertMayRegister(config: GatewayConfig, inviteCode: string | undefined): void {
  if (!config.LOCAL_LOGIN) throw new AppError('LOCAL_LOGIN_DISABLED');
  if (!registrationOpen(config)) throw new AppError('REGISTRATION_DISABLED');
  if (config.INVITE_CODE !== undefined && (inviteCode === undefined || !sameSecret(inviteCode, config.INVITE_CODE))) {
    throw new AppError('REGISTRATION_DISABLED', { message: 'A valid invite code is required to register' });
  }
}

/** The answer of a sign-in (password, refresh, OpenID Connect): a new access token, `refreshToken`, and the user's profile fields. */
export function tokenPair(deps: LocalDeps, user: UserDoc, refreshToken: string): TokenPair {
  return {
    accessToken: deps.signAccessToken({ sub: user._id, name: user.username }),
    refreshToken,
    tokenType: 'Bearer',
    expiresIn: deps.config.JWT_EXPIRATION_MINUTES * 60,
    userId: user._id,
    userName: user.username,
    userRole: user.role ?? 'user',
    userEmail: user.email ?? '',
    userTimezone: user.timezone ?? 'UTC',
    userAvatarUrl: '',
  };
}

/**
 * Auth routes (docs/architecture.md §5), answered by the gateway itself at the root and under `/api/v1` (the one
 * base URL of a ud client); bodies of SPEC's "not shown" fixed in docs/auth.md.
 */
export const authRoutes: LocalRoute[] = [
  localRoute({
    method: 'POST',
    ...authAt('/auth/v2/register'),
    summary: 'Register a user',
    tag: 'auth',
    body: RegisterBody,
    response: Registered,
    status: 201,
    rateLimited: true,
    async handle(req, deps) {
      const body = req.body;
      assertMayRegister(deps.config, body.inviteCode);
      const user = await createUser(deps.store, deps.clock, body);
      return { userId: user._id, username: user.username };
    },
  }),
  localRoute({
    method: 'POST',
    ...authAt('/auth/register'),
    summary: "Register a user (ud's form: 200 {username, timezone}); same rules as /auth/v2/register",
    tag: 'auth',
    body: UdRegisterBody,
    response: UdRegistered,
    rateLimited: true,
    async handle(req, deps) {
      const body = req.body;
      assertMayRegister(deps.config, body.inviteCode);
      const user = await createUser(deps.store, deps.clock, { username: body.username, password: body.password });
      return { username: user.username, timezone: 'UTC' };
    },
  }),
  localRoute({
    method: 'POST',
    ...authAt('/auth/v2/login'),
    summary: 'Log in; returns an access token and a refresh token (success and failure are recorded in the audit log)',
    tag: 'auth',
    body: LoginBody,
    response: TokenPair,
    rateLimited: true,
    async handle(req, deps) {
      const { username, password } = req.body;
      const { store, clock } = deps;
      if (!deps.config.LOCAL_LOGIN) throw new AppError('LOCAL_LOGIN_DISABLED');
      const user = await findUserByUsername(store, username);
      const ok = user?.passwordHash !== undefined ? await verifyPassword(user.passwordHash, password) : await verifyAgainstDummy(password);
      const stamp = gatewayAuditStamp(req, deps, user?._id ?? null);
      if (!user || !ok) {
        await appendAudit(store, undefined, [{ action: 'auth.login', outcome: 'failure', details: { method: 'password', username } }], stamp);
        throw new AppError('INVALID_CREDENTIALS');
      }
      const refresh = await store.withTransaction(async (session) => {
        const token = await issueRefreshToken(store, clock, user._id, session);
        await appendAudit(store, session, [{ action: 'auth.login', target: `user:${user._id}`, details: { method: 'password' } }], stamp);
        return token;
      });
      return tokenPair(deps, user, refresh);
    },
  }),
  localRoute({
    method: 'POST',
    ...authAt('/auth/refresh-token'),
    summary: 'Exchange a refresh token for a new token pair (the old refresh token stops working)',
    tag: 'auth',
    body: RefreshBody,
    response: TokenPair,
    async handle(req, deps) {
      const { refreshToken } = req.body;
      const next = await rotateRefreshToken(deps.store, deps.clock, refreshToken, gatewayAuditStamp(req, deps, null));
      const user = await findUserById(deps.store, next.userId);
      if (!user) throw new AppError('REFRESH_TOKEN_INVALID');
      return tokenPair(deps, user, next.token);
    },
  }),
  localRoute({
    method: 'POST',
    ...authAt('/auth/logout'),
    summary: 'Log out: the refresh token and every token rotated from it stop working (access tokens run out at their expiry)',
    tag: 'auth',
    body: RefreshBody,
    status: 204,
    async handle(req, deps) {
      await revokeRefreshFamily(deps.store, deps.clock, req.body.refreshToken, gatewayAuditStamp(req, deps, null));
      return undefined;
    },
  }),
];
