import { AppError } from '../errors/index.js';

/**
 * The cause of a 503 `SERVICE_UNAVAILABLE` whose request found nothing serving its subject, as
 * opposed to a closed, draining or disconnected bus (docs/bus.md "Errors"). Never on the wire: it
 * tells the metrics' `no_responders` outcome apart (docs/observability.md "Metrics").
 */
export class NoResponders extends Error {
  /**
   * @param subject the unprefixed subject nothing serves
   * @param cause the transport's own error (NATS' no-responders `RequestError`), for the log
   */
  constructor(readonly subject: string, cause?: unknown) {
    super(`No service serves ${subject}`, cause === undefined ? undefined : { cause });
    this.name = 'NoResponders';
  }
}

/** The 503 of a request nothing serves: `details: {subject}`, cause {@link NoResponders}. */
export function noResponders(subject: string, cause?: unknown): AppError {
  return new AppError('SERVICE_UNAVAILABLE', { details: { subject }, cause: new NoResponders(subject, cause) });
}

/** True when `e` is the 503 of a request that found no responder (on either bus). */
export function isNoResponders(e: AppError): boolean {
  return e.code === 'SERVICE_UNAVAILABLE' && e.cause instanceof NoResponders;
}
