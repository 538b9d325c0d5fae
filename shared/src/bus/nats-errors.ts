import {
  ClosedConnectionError,
  ConnectionError,
  DrainingConnectionError,
  InvalidArgumentError,
  RequestError,
  TimeoutError,
} from '@nats-io/transport-node';
import { AppError } from '../errors/index.js';
import { noResponders, type NoResponders } from './no-responders.js';

/**
 * The one adapter from NATS client errors to catalogue errors (docs/architecture.md §3, §4). nats.js v3 errors
 * carry no `code`, so this matches classes (spike §7):
 * - `TimeoutError` → 504 `UPSTREAM_TIMEOUT`;
 * - `RequestError` (no responders: cause {@link NoResponders} when the request is known; or a
 *   request cancelled by a closing connection),
 *   `ClosedConnectionError`, `DrainingConnectionError`, `ConnectionError` → 503 `SERVICE_UNAVAILABLE`;
 * - `InvalidArgumentError` "max_payload size exceeded" (a request over the server's message size
 *   limit, 1 MiB by default) → 413 `PAYLOAD_TOO_LARGE`;
 * - an `AppError` passes through; anything else → 500 `INTERNAL`.
 * With a `request` (the op's subject and timeout), the 504 carries `details: {subject, timeoutMs}`
 * and the 503 `details: {subject}`, as `MemoryBus` does. The NATS error is kept as `cause` for the
 * log and never reaches the wire.
 */
export function natsErrorToAppError(e: unknown, request?: { subject: string; timeoutMs: number }): AppError {
  if (AppError.is(e)) return e;
  if (e instanceof TimeoutError) return new AppError('UPSTREAM_TIMEOUT', request ? { details: { ...request }, cause: e } : { cause: e });
  if (request && e instanceof RequestError && e.isNoResponders()) return noResponders(request.subject, e);
  if (
    e instanceof RequestError ||
    e instanceof ClosedConnectionError ||
    e instanceof DrainingConnectionError ||
    e instanceof ConnectionError
  ) {
    return new AppError('SERVICE_UNAVAILABLE', request ? { details: { subject: request.subject }, cause: e } : { cause: e });
  }
  if (e instanceof InvalidArgumentError && e.message.includes('max_payload')) {
    return new AppError('PAYLOAD_TOO_LARGE', { message: 'The request is too large for the bus', cause: e });
  }
  return new AppError('INTERNAL', { cause: e });
}
