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
 * - `RATE_LIMIT_TOKEN_MAX`: requests per personal access token per minute (default 600).
 * Load with `loadConfig(GatewayConfig, env)` from `@app/shared/config`.
 */
export const GatewayConfig = Type.Object({
  ...CommonConfig.properties,
  JWT_SECRET: Type.String({ minLength: 16 }),
  RATE_LIMIT_AUTH_MAX: Type.Integer({ minimum: 1, default: 10 }),
  APP_VERSION: Type.String({ minLength: 1, default: packageVersion }),
  EVENT_STREAMS_PER_USER: Type.Integer({ minimum: 1, maximum: 1000, default: 5 }),
  RATE_LIMIT_TOKEN_MAX: Type.Integer({ minimum: 1, default: 600 }),
});
export type GatewayConfig = Static<typeof GatewayConfig>;

/** Product name reported by `GET /version`. */
export const APP_NAME = 'board-task-service';
