import { readFileSync } from 'node:fs';
import { Type, type Static } from '@sinclair/typebox';
import { CommonConfig } from '@app/shared/config';

/** The gateway package's own version, the default of `APP_VERSION` (same path from `src/` and `dist/`). */
const packageVersion = (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;

/**
 * The gateway's environment (docs/architecture.md §2, §5): the common variables plus
 * - `JWT_SECRET` (required here; `main.ts` resolves the embedded default before loading),
 * - `RATE_LIMIT_AUTH_MAX`: login and register requests per client IP per minute (default 10),
 * - `APP_VERSION`: reported by `GET /version` and in Swagger (default: the package version),
 * - `EVENT_STREAMS_PER_USER`: open event streams per user at once (default 5),
 * - `RATE_LIMIT_TOKEN_MAX`: requests per personal access token per minute (default 600),
 * - `OIDC_*`: OpenID Connect sign-in (docs/auth.md "Sign in with OpenID Connect"): issuer, client
 *   id and secret, redirect URL (all four or none), allowed e-mail domains (comma list, empty:
 *   any), the claim that names a new user (default `preferred_username`), the button's provider
 *   name, scopes, and `OIDC_ALLOW_HTTP` for a plain-http provider (refused in production),
 * - `LOCAL_LOGIN`: `false` turns username/password login and registration off (default true).
 * Load with `loadConfig(GatewayConfig, env)` from `@app/shared/config`.
 */
export const GatewayConfig = Type.Object({
  ...CommonConfig.properties,
  JWT_SECRET: Type.String({ minLength: 16 }),
  RATE_LIMIT_AUTH_MAX: Type.Integer({ minimum: 1, default: 10 }),
  APP_VERSION: Type.String({ minLength: 1, default: packageVersion }),
  EVENT_STREAMS_PER_USER: Type.Integer({ minimum: 1, maximum: 1000, default: 5 }),
  RATE_LIMIT_TOKEN_MAX: Type.Integer({ minimum: 1, default: 600 }),
  OIDC_ISSUER: Type.Optional(Type.String({ pattern: '^https?://' })),
  OIDC_CLIENT_ID: Type.Optional(Type.String({ minLength: 1 })),
  OIDC_CLIENT_SECRET: Type.Optional(Type.String({ minLength: 1 })),
  OIDC_REDIRECT_URL: Type.Optional(Type.String({ pattern: '^https?://' })),
  OIDC_ALLOWED_DOMAINS: Type.String({ default: '' }),
  OIDC_USERNAME_CLAIM: Type.String({ minLength: 1, default: 'preferred_username' }),
  OIDC_PROVIDER_NAME: Type.String({ minLength: 1, maxLength: 64, default: 'your organisation' }),
  OIDC_SCOPES: Type.String({ minLength: 1, default: 'openid profile email' }),
  OIDC_ALLOW_HTTP: Type.Boolean({ default: false }),
  LOCAL_LOGIN: Type.Boolean({ default: true }),
});
export type GatewayConfig = Static<typeof GatewayConfig>;

/** Product name reported by `GET /version`. */
export const APP_NAME = 'board-task-service';
