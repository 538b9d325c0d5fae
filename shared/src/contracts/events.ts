import { Type, type Static } from '@sinclair/typebox';
import { op } from './op.js';
import { busRequest, PathId, StringEnum, Timestamp } from './schemas.js';

/*
 * Contracts of the events family: the change feed and the webhook subscriptions.
 * Served by the query service (docs/architecture.md §1: it owns reads; the webhook dispatcher runs beside it,
 * see docs/events.md). Subjects live under `query.` and `webhooks.`, never under `events.`, which
 * is the JetStream subject space of the events themselves.
 */

/** Default and bounds of the feed's `limit` (1..500, default 100). */
export const FEED_DEFAULT_LIMIT = 100;
export const FEED_MAX_LIMIT = 500;

/**
 * Largest event, as the UTF-8 bytes of its JSON envelope (docs/events.md "Sizes"): 960 KiB, so
 * every event fits one message of a NATS server with its default 1 MiB `max_payload` and one feed
 * page. Input limits keep writes below it (a task is at most `TASK_MAX_BYTES`, and a
 * `task.updated` carries it with the changed fields' old and new values); a write whose event would
 * still be larger is a 413 `PAYLOAD_TOO_LARGE` with nothing written.
 */
export const EVENT_MAX_BYTES = 960 * 1024;
/**
 * A feed page stops adding events once its envelopes pass this many bytes of JSON (it always holds
 * at least one event), so a page of large events still fits one bus reply; `next_after` then
 * points at the last event returned.
 */
export const FEED_PAGE_MAX_BYTES = 512 * 1024;

/**
 * The event cursor as text (docs/events.md "Cursors"): an event `seq`, written in decimal digits
 * only, at most `Number.MAX_SAFE_INTEGER`. The feed's `?after`, the stream's `?after` and its
 * `Last-Event-ID` header all take this form, read by `parseCursor` (events/cursor.ts).
 */
export const CURSOR_PATTERN = '^[0-9]+$';

/** The HTTP schema of a cursor parameter (a string, so nothing coerces `0x10` or `1e3` into a number first). */
export const CursorText = (description: string) => Type.String({ pattern: CURSOR_PATTERN, maxLength: 16, description });

/**
 * Every event type the outbox records (docs/events.md "Types"). Webhooks and the feed's
 * `types` filter accept these names (and `*` on webhooks for all of them).
 */
export const EVENT_TYPES = [
  'task.created', 'task.updated', 'task.deleted', 'task.restored', 'card.moved', 'card.claimed', 'card.released',
  'board.created', 'board.updated', 'board.deleted', 'board.shared', 'board.unshared',
  'sprint.closed', 'note.created',
  'view.created', 'view.updated', 'view.deleted',
  'sprint.started',
] as const;
/** One event type name. */
export type EventType = (typeof EVENT_TYPES)[number];

/** The API envelope of one event: the stored document with `_id` renamed `id` (`toEnvelope`, events/envelope.ts). */
export const EventEnvelope = Type.Object(
  {
    id: Type.String({ description: 'event id (UUID); the `webhook-id` of its deliveries' }),
    seq: Type.Integer({ description: 'strictly increasing per store; the feed cursor and the SSE `id:`' }),
    type: Type.String({ description: 'event type, e.g. `card.moved`' }),
    occurred_at: Type.String({ format: 'date-time' }),
    actor: Type.String({ description: 'user id of the caller whose write emitted the event' }),
    actor_token: Type.Optional(Type.String({ description: 'id of the access token the caller used for the write, when it used one (docs/auth.md)' })),
    request_id: Type.String(),
    task_id: Type.Optional(Type.String()),
    board_id: Type.Optional(Type.String()),
    data: Type.Object({}, { additionalProperties: true, description: 'type-specific payload (docs/events.md)' }),
  },
  { additionalProperties: true },
);
/** The API envelope of one event. */
export type EventEnvelope = Static<typeof EventEnvelope>;

/** Query string of `GET /api/v1/events` and of the stream. */
export const FeedQuerystring = Type.Object(
  {
    after: Type.Optional(CursorText('read events with `seq` greater than this (the previous `next_after`); decimal digits, at most 9007199254740991')),
    limit: Type.Optional(Type.Integer({ minimum: 1, maximum: FEED_MAX_LIMIT, default: FEED_DEFAULT_LIMIT, description: `events per page, 1..${FEED_MAX_LIMIT}` })),
    types: Type.Optional(Type.String({ description: 'comma-separated event types, e.g. `card.moved,task.updated`' })),
    board_id: Type.Optional(Type.String({ minLength: 1, description: 'only events of this board' })),
  },
  { additionalProperties: false },
);
export type FeedQuerystring = Static<typeof FeedQuerystring>;

/** Query string of `GET /api/v1/events/stream`: the feed's filters and resume point, no limit. */
export const StreamQuerystring = Type.Object(
  {
    after: Type.Optional(CursorText('resume after this `seq` (`Last-Event-ID` wins when both are sent); decimal digits, at most 9007199254740991')),
    types: FeedQuerystring.properties.types,
    board_id: FeedQuerystring.properties.board_id,
  },
  { additionalProperties: false },
);
export type StreamQuerystring = Static<typeof StreamQuerystring>;

/** A page of the change feed: visible events oldest first and the cursor to read on from. */
export const FeedPage = Type.Object({
  data: Type.Array(EventEnvelope),
  next_after: Type.Integer({ description: 'pass as `after` for the next page; unchanged when nothing new' }),
});

/** Event types a webhook subscribes to: type names, or `["*"]` for every type. */
const WebhookEvents = Type.Array(Type.String({ minLength: 1 }), { minItems: 1, description: 'event types, or `["*"]` for all; repeats are dropped, and a list with `*` is stored as `["*"]`' });
const WebhookUrl = Type.String({ minLength: 1, maxLength: 2048, description: 'http(s) URL that receives POSTs; no whitespace or control characters; stored in its WHATWG-normalized form' });
const WebhookQuery = Type.String({ description: 'task query (docs/architecture.md §6): a task event is delivered only when the task after the change matches' });

/** Body of `POST /api/v1/webhooks`. */
export const WebhookCreateBody = Type.Object(
  {
    url: WebhookUrl,
    events: WebhookEvents,
    board_id: Type.Optional(Type.String({ minLength: 1, description: 'only events of this board' })),
    query: Type.Optional(WebhookQuery),
    view_id: Type.Optional(Type.String({ minLength: 1, description: 'a saved view the caller can read, instead of `query`: deliveries follow its current query' })),
    active: Type.Optional(Type.Boolean({ default: true, description: 'false creates it paused: it receives nothing until PATCHed `active: true`' })),
  },
  { additionalProperties: false },
);
export type WebhookCreateBody = Static<typeof WebhookCreateBody>;

/** Body of `PATCH /api/v1/webhooks/{id}`: the fields it carries change; `""` clears `board_id`/`query`. */
export const WebhookUpdateBody = Type.Object(
  {
    url: Type.Optional(WebhookUrl),
    events: Type.Optional(WebhookEvents),
    board_id: Type.Optional(Type.String({ description: 'a board id, or "" to clear' })),
    query: Type.Optional(Type.String({ description: 'a task query, or "" to clear' })),
    view_id: Type.Optional(Type.String({ description: 'a saved view instead of `query`, or "" to clear' })),
    active: Type.Optional(Type.Boolean({ description: 'false pauses it (it receives nothing; events meanwhile are not delivered later); true resumes it and re-enables a disabled webhook' })),
  },
  { additionalProperties: false },
);
export type WebhookUpdateBody = Static<typeof WebhookUpdateBody>;

/** A webhook as the API returns it. `secret` is present only in the create response. */
export const Webhook = Type.Object({
  id: Type.String(),
  url: Type.String(),
  events: Type.Array(Type.String()),
  board_id: Type.Optional(Type.String()),
  query: Type.Optional(Type.String()),
  view_id: Type.Optional(Type.String({ description: 'the saved view whose current query filters the deliveries' })),
  active: Type.Boolean(),
  disabled_reason: Type.Optional(Type.String({ description: 'why the service disabled it (failing for 24 h)' })),
  failing_since: Type.Optional(Timestamp),
  secret: Type.Optional(Type.String({ description: 'signing secret (`whsec_…`), shown once on create' })),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export type Webhook = Static<typeof Webhook>;

/** The caller's webhooks. */
export const WebhookList = Type.Object({ data: Type.Array(Webhook) });

/** One attempt of a delivery. */
export const DeliveryAttempt = Type.Object({
  attempt: Type.Integer({ minimum: 1 }),
  at: Timestamp,
  status_code: Type.Optional(Type.Integer({ description: 'HTTP status of the answer; absent when none came' })),
  duration_ms: Type.Integer(),
  error: Type.Optional(Type.String()),
});

/** One delivery: an event to a webhook, its state and attempt log. */
export const Delivery = Type.Object({
  id: Type.String(),
  webhook_id: Type.String(),
  event_id: Type.String(),
  event_type: Type.String(),
  seq: Type.Integer(),
  status: StringEnum(['pending', 'delivered', 'failed']),
  attempt: Type.Integer({ description: 'attempts made so far' }),
  status_code: Type.Optional(Type.Integer({ description: 'of the last attempt' })),
  duration_ms: Type.Optional(Type.Integer({ description: 'of the last attempt' })),
  error: Type.Optional(Type.String({ description: 'of the last attempt' })),
  next_attempt_at: Type.Optional(Timestamp),
  attempts: Type.Array(DeliveryAttempt),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export type Delivery = Static<typeof Delivery>;

/** The last 100 deliveries of a webhook, newest first. */
export const DeliveryList = Type.Object({ data: Type.Array(Delivery) });

/** Path parameters of one webhook. */
export const WebhookParams = Type.Object({ webhookId: PathId });
/** Path parameters of one delivery. */
export const DeliveryParams = Type.Object({ webhookId: PathId, deliveryId: PathId });

/** The change feed. Queue group `query`. */
export const EventsOps = {
  /** `GET /api/v1/events`: one page of visible events after a cursor. */
  feed: op({
    subject: 'query.events',
    // the gateway parses `after` (parseCursor); the bus carries the number
    request: busRequest({}, { ...FeedQuerystring.properties, after: Type.Optional(Type.Integer({ minimum: 0 })) }),
    response: FeedPage, timeoutMs: 10_000,
  }),
} as const;

/** Webhook subscriptions. Served by the query service beside its dispatcher. */
export const WebhooksOps = {
  create: op({ subject: 'webhooks.create', request: busRequest({}, WebhookCreateBody.properties), response: Webhook }),
  list: op({ subject: 'webhooks.list', request: Type.Object({}), response: WebhookList }),
  get: op({ subject: 'webhooks.get', request: busRequest(WebhookParams.properties), response: Webhook }),
  update: op({ subject: 'webhooks.update', request: busRequest(WebhookParams.properties, WebhookUpdateBody.properties), response: Webhook }),
  remove: op({ subject: 'webhooks.remove', request: busRequest(WebhookParams.properties), response: Type.Null() }),
  deliveries: op({ subject: 'webhooks.deliveries', request: busRequest(WebhookParams.properties), response: DeliveryList }),
  retry: op({ subject: 'webhooks.retry', request: busRequest(DeliveryParams.properties), response: Delivery }),
} as const;
