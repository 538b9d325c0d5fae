import {
  Delivery, DeliveryList, DeliveryParams, EventsOps, FeedPage, FeedQuerystring, StreamQuerystring, Webhook, WebhookCreateBody,
  WebhookList, WebhookParams, WebhooksOps, WebhookUpdateBody,
} from '@app/shared/contracts';
import { parseCursor } from '@app/shared/events';
import { Type } from '@sinclair/typebox';
import type { LocalRoute } from './local.js';
import { route, type RouteSpec } from './route.js';

/**
 * Bus routes of the events family: the change feed and webhook subscriptions, served
 * by the query service. The stream is the gateway-local {@link eventStreamRoutes}.
 */
export const eventRoutes: RouteSpec[] = [
  route({
    method: 'GET', url: '/api/v1/events', op: EventsOps.feed,
    input: (req) => {
      const { after, ...rest } = req.query;
      const cursor = parseCursor(after, '/after');
      return cursor === undefined ? rest : { ...rest, after: cursor };
    },
    summary: 'Change feed: events after a cursor, oldest first, only about tasks and boards the caller can read',
    tag: 'events', maturity: 'live', querystring: FeedQuerystring, response: FeedPage,
  }),
  route({
    method: 'POST', url: '/api/v1/webhooks', op: WebhooksOps.create,
    input: (req) => req.body,
    summary: 'Subscribe a URL to events (Standard Webhooks signing); the secret is shown once',
    tag: 'webhooks', maturity: 'live', body: WebhookCreateBody, response: Webhook, status: 201,
  }),
  route({
    method: 'GET', url: '/api/v1/webhooks', op: WebhooksOps.list, input: () => ({}),
    summary: "The caller's webhooks", tag: 'webhooks', maturity: 'live', response: WebhookList,
  }),
  route({
    method: 'GET', url: '/api/v1/webhooks/:webhookId', op: WebhooksOps.get,
    input: (req) => ({ webhookId: req.params.webhookId! }),
    summary: 'One webhook', tag: 'webhooks', maturity: 'live', params: WebhookParams, response: Webhook,
  }),
  route({
    method: 'PATCH', url: '/api/v1/webhooks/:webhookId', op: WebhooksOps.update,
    input: (req) => ({ ...req.body, webhookId: req.params.webhookId! }),
    summary: 'Change a webhook (url, events, board, query, active)', tag: 'webhooks', maturity: 'live',
    params: WebhookParams, body: WebhookUpdateBody, response: Webhook,
  }),
  route({
    method: 'DELETE', url: '/api/v1/webhooks/:webhookId', op: WebhooksOps.remove,
    input: (req) => ({ webhookId: req.params.webhookId! }),
    summary: 'Delete a webhook and its delivery log', tag: 'webhooks', maturity: 'live', params: WebhookParams, status: 204,
  }),
  route({
    method: 'GET', url: '/api/v1/webhooks/:webhookId/deliveries', op: WebhooksOps.deliveries,
    input: (req) => ({ webhookId: req.params.webhookId! }),
    summary: 'The last 100 deliveries of a webhook, newest first, with their attempts', tag: 'webhooks', maturity: 'live',
    params: WebhookParams, response: DeliveryList,
  }),
  route({
    method: 'POST', url: '/api/v1/webhooks/:webhookId/deliveries/:deliveryId/retry', op: WebhooksOps.retry,
    input: (req) => ({ webhookId: req.params.webhookId!, deliveryId: req.params.deliveryId! }),
    summary: 'Attempt a delivery again now (same webhook-id)', tag: 'webhooks', maturity: 'live',
    params: DeliveryParams, response: Delivery, status: 202,
  }),
];

/** The event stream: answered by the gateway itself from its live event source. */
export const eventStreamRoutes: LocalRoute[] = [
  {
    method: 'GET',
    url: '/api/v1/events/stream',
    summary:
      'Server-Sent Events: `id:` = seq, `event:` = type, `data:` = the envelope; resumes from Last-Event-ID or ?after=; `: heartbeat` every 15 s',
    tag: 'events',
    authenticated: true,
    querystring: StreamQuerystring,
    headers: Type.Object({
      'last-event-id': Type.Optional(Type.String({ description: 'resume after this event seq (sent by EventSource on reconnect); wins over ?after=' })),
    }),
    produces: ['text/event-stream'],
    stream: (req, reply, deps) => deps.streams.serve(req, reply),
  },
];
