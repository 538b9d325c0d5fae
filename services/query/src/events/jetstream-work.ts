import type { BackgroundDeps } from '@app/shared/domain';
import type { WebhookDispatcher } from '../webhooks/dispatcher.js';

/** Handle of the JetStream side of the background work. */
export interface JetStreamWork {
  close(): Promise<void>;
}

/**
 * On NATS: starts the outbox relay and the durable webhook consumer; undefined on the in-process bus.
 */
export async function startJetStreamWork(_deps: BackgroundDeps, _dispatcher: WebhookDispatcher): Promise<JetStreamWork | undefined> {
  return undefined;
}
