import { createHash, randomBytes } from 'node:crypto';
import type { Delivery, EventEnvelope, Webhook } from '@app/shared/contracts';
import { Collections, type Collection, type DocumentStore, type IndexSpec } from '@app/shared/store';

/** A webhook subscription as stored in `webhooks`. */
export interface WebhookDoc {
  _id: string;
  owner_id: string;
  url: string;
  /** Event types, or `['*']`. */
  events: string[];
  board_id?: string;
  query?: string;
  /** A saved view whose current query filters the deliveries (instead of `query`). */
  view_id?: string;
  /** `whsec_<base64>` (Standard Webhooks); never returned after create. */
  secret: string;
  active: boolean;
  disabled_reason?: string;
  /** First failed attempt since the last success (ISO); 24 h of failing disables the webhook. */
  failing_since?: string;
  /** Outbox `seq` when created: only later events are delivered. */
  after_seq: number;
  created_at: string;
  updated_at: string;
  [key: string]: unknown;
}

/** One attempt as logged. */
export interface AttemptLog {
  attempt: number;
  at: string;
  status_code?: number;
  duration_ms: number;
  error?: string;
}

/** One delivery (an event to a webhook) as stored in `webhook_deliveries`. */
export interface DeliveryDoc {
  _id: string;
  webhook_id: string;
  event_id: string;
  event_type: string;
  seq: number;
  /** The envelope as POSTed (the same body on every attempt). */
  event: EventEnvelope;
  status: 'pending' | 'delivered' | 'failed';
  attempt: number;
  next_attempt_at: string;
  /** A dispatcher replica holds the delivery until then (ISO); the epoch when free. */
  lease_until: string;
  /** The next attempt was asked for through the retry route after the delivery had ended: it is the last one if it fails. */
  manual?: boolean;
  /**
   * The next attempt was asked for through the retry route while the delivery was still pending:
   * it is made now, on top of the schedule, which goes on after it (`resume_at`).
   */
  bonus?: boolean;
  /** When the scheduled attempt was due before a {@link bonus} attempt was asked for (ISO). */
  resume_at?: string;
  /** Attempts made through the retry route while pending; they do not count against the attempt limit. */
  extra_attempts?: number;
  attempts: AttemptLog[];
  /**
   * The W3C trace context of the write that emitted the event, when it was traced and this
   * dispatcher traces: each attempt's span links to it (docs/observability.md). Never sent or listed.
   */
  traceparent?: string;
  created_at: string;
  updated_at: string;
  [key: string]: unknown;
}

/** ISO instant meaning "no lease". */
export const NO_LEASE = new Date(0).toISOString();
/** Attempts kept in a delivery's log (the newest). */
export const ATTEMPT_LOG_MAX = 30;

/**
 * Indexes of the webhook collections: webhooks by owner and by `active`; deliveries by webhook in
 * `seq` order (a webhook's delivery log), by webhook and status in `seq` order (the dispatcher's
 * oldest pending delivery of a webhook: the index's first entry for `{webhook_id, status:
 * 'pending'}`, whatever number of delivered rows the webhook has behind it), and by status and
 * due time (the deliveries due now).
 */
export const webhookIndexes: IndexSpec[] = [
  { collection: Collections.webhooks, keys: { owner_id: 1 } },
  { collection: Collections.webhooks, keys: { active: 1 } },
  { collection: Collections.webhookDeliveries, keys: { webhook_id: 1, seq: 1 } },
  { collection: Collections.webhookDeliveries, keys: { webhook_id: 1, status: 1, seq: 1 }, name: 'deliveries_pending_head' },
  { collection: Collections.webhookDeliveries, keys: { status: 1, next_attempt_at: 1 } },
];

export const webhooksOf = (store: DocumentStore): Collection<WebhookDoc> => store.collection<WebhookDoc>(Collections.webhooks);
export const deliveriesOf = (store: DocumentStore): Collection<DeliveryDoc> => store.collection<DeliveryDoc>(Collections.webhookDeliveries);

/** A new signing secret in the Standard Webhooks format: `whsec_` + base64 of 32 random bytes. */
export function newSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** The id of the delivery of `eventId` to `webhookId`: fixed, so a repeated fan-out inserts nothing twice. */
export function deliveryId(webhookId: string, eventId: string): string {
  const h = createHash('sha256').update(`${webhookId}/${eventId}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

/** The API webhook (no secret). */
export function toWebhook(d: WebhookDoc): Webhook {
  const w: Webhook = { id: d._id, url: d.url, events: d.events, active: d.active, created_at: d.created_at, updated_at: d.updated_at };
  if (d.board_id !== undefined) w.board_id = d.board_id;
  if (d.query !== undefined) w.query = d.query;
  if (d.view_id !== undefined) w.view_id = d.view_id;
  if (d.disabled_reason !== undefined) w.disabled_reason = d.disabled_reason;
  if (d.failing_since !== undefined) w.failing_since = d.failing_since;
  return w;
}

/** The API delivery: state, the last attempt's figures and the attempt log. */
export function toDelivery(d: DeliveryDoc): Delivery {
  const last = d.attempts[d.attempts.length - 1];
  const out: Delivery = {
    id: d._id, webhook_id: d.webhook_id, event_id: d.event_id, event_type: d.event_type, seq: d.seq, status: d.status,
    attempt: d.attempt, attempts: d.attempts, created_at: d.created_at, updated_at: d.updated_at,
  };
  if (last?.status_code !== undefined) out.status_code = last.status_code;
  if (last) out.duration_ms = last.duration_ms;
  if (last?.error !== undefined) out.error = last.error;
  if (d.status === 'pending') out.next_attempt_at = d.next_attempt_at;
  return out;
}
