import type { TObject, TSchema } from '@sinclair/typebox';
import type { Bus } from '@app/shared/bus';
import type { Clock } from '@app/shared/domain';
import type { DocumentStore } from '@app/shared/store';
import type { GatewayConfig } from '../config.js';
import type { AccessClaims } from '../plugins/auth.js';
import type { Method, RouteRequest } from './route.js';

/** What a gateway-local route's handler may use. */
export interface LocalDeps {
  bus: Bus;
  store: DocumentStore;
  clock: Clock;
  config: GatewayConfig;
  /** Signs an access token (HS256, `JWT_EXPIRATION_MINUTES`). */
  signAccessToken(claims: AccessClaims): string;
}

/**
 * One row of the gateway's local table: routes answered by the gateway itself, without the bus
 * (auth, health, version). All are public (DESIGN §5). Listed in Swagger like the bus routes.
 */
export interface LocalRoute {
  method: Method;
  url: string;
  summary: string;
  tag: string;
  body?: TObject;
  /** Success response schema (Swagger only). */
  response?: TSchema;
  /** Success status; default 200. */
  status?: number;
  /** Rate limited per client IP (`RATE_LIMIT_AUTH_MAX` per minute): login and register. */
  rateLimited?: boolean;
  /** Returns the success body; errors are thrown as AppError. */
  handle(req: RouteRequest, deps: LocalDeps): Promise<unknown>;
}
