/** Collection names of the one shared database (DESIGN §1). */
export const Collections = {
  tasks: 'tasks',
  notes: 'notes',
  boards: 'boards',
  groups: 'groups',
  users: 'users',
  refreshTokens: 'refresh_tokens',
  /** The events outbox (issue 10): one document per event, by `seq`. */
  events: 'events',
  /** Counter documents (`{_id: 'events', seq}` numbers the outbox). */
  counters: 'counters',
  /** Webhook subscriptions (issue 10). */
  webhooks: 'webhooks',
  /** One document per (webhook, event) delivery with its attempt log (issue 10). */
  webhookDeliveries: 'webhook_deliveries',
} as const;
