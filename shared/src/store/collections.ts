/** Collection names of the one shared database (DESIGN §1). */
export const Collections = {
  tasks: 'tasks',
  notes: 'notes',
  boards: 'boards',
  groups: 'groups',
  users: 'users',
  refreshTokens: 'refresh_tokens',
  /** Frozen sprint start and close snapshots (issue 12; services/sprints/src/domain/snapshots.ts). */
  sprintSnapshots: 'sprint_snapshots',
  /** The events outbox (issue 10): one document per event, written in the write's transaction. */
  events: 'events',
  /** Counter documents `{_id, seq}`; `{_id: 'events'}` numbers the events. */
  counters: 'counters',
  /** Idempotency-Key records (issue 11), expired by a TTL index. */
  idempotency: 'idempotency',
  /** Webhook subscriptions (issue 10). */
  webhooks: 'webhooks',
  /** One document per (webhook, event) delivery with its attempt log (issue 10). */
  webhookDeliveries: 'webhook_deliveries',
  /** Pending sharing updates of a board's cards, one per board (docs/boards.md "Sharing a board with many cards"). */
  boardShareSync: 'board_share_sync',
} as const;
