import {
  ClosedConnectionError,
  ConnectionError,
  DrainingConnectionError,
  RequestError,
  TimeoutError,
} from '@nats-io/transport-node';
import { AppError } from '../errors/index.js';

/**
 * The one adapter from NATS client errors to catalogue errors (DESIGN §3, §4). nats.js v3 errors
 * carry no `code`, so this matches classes (spike §7):
 * - `TimeoutError` → 504 `UPSTREAM_TIMEOUT`;
 * - `RequestError` (no responders, or a request cancelled by a closing connection),
 *   `ClosedConnectionError`, `DrainingConnectionError`, `ConnectionError` → 503 `SERVICE_UNAVAILABLE`;
 * - an `AppError` passes through; anything else → 500 `INTERNAL`.
 * `details` (e.g. `{subject, timeoutMs}`) goes on the 503/504; the NATS error is kept as `cause`
 * for the log and never reaches the wire.
 */
export function natsErrorToAppError(e: unknown, details?: Record<string, unknown>): AppError {
  if (AppError.is(e)) return e;
  if (e instanceof TimeoutError) return new AppError('UPSTREAM_TIMEOUT', withDetails(details, e));
  if (
    e instanceof RequestError ||
    e instanceof ClosedConnectionError ||
    e instanceof DrainingConnectionError ||
    e instanceof ConnectionError
  ) {
    return new AppError('SERVICE_UNAVAILABLE', withDetails(details, e));
  }
  return new AppError('INTERNAL', { cause: e });
}

function withDetails(details: Record<string, unknown> | undefined, cause: unknown) {
  return details ? { details, cause } : { cause };
}
