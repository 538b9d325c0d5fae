/** Collection names of the one shared database (docs/architecture.md §1). */
export const Collections = {
  tasks: 'tasks',
  notes: 'notes',
  boards: 'boards',
  groups: 'groups',
  users: 'users',
  refreshTokens: 'refresh_tokens',
  /** Personal access tokens (hash, scopes, boards, expiry, revoked), owned by the gateway (docs/auth.md). */
  accessTokens: 'access_tokens',
  /** Frozen sprint start and close snapshots (services/sprints/src/domain/snapshots.ts). */
  sprintSnapshots: 'sprint_snapshots',
  /**
   * The numbered events (the feed): one document per event with its `seq`, written by the relay
   * (shared/src/events/relay.ts) after the write committed; every reader reads only these.
   */
  events: 'events',
  /**
   * The outbox: one document per committed write holding that write's events, not numbered yet,
   * inserted in the write's own transaction (`appendEvents`); the relay numbers and removes them.
   */
  outbox: 'outbox',
  /**
   * Counter documents `{_id, seq}`. `{_id: 'events'}` is the relay's state (the last `seq` given
   * and its lease); no write transaction touches a counter.
   */
  counters: 'counters',
  /** Idempotency-Key records, expired by a TTL index. */
  idempotency: 'idempotency',
  /** Webhook subscriptions. */
  webhooks: 'webhooks',
  /** One document per (webhook, event) delivery with its attempt log. */
  webhookDeliveries: 'webhook_deliveries',
  /** Pending sharing updates of a board's cards, one per board (docs/boards.md "Sharing a board with many cards"). */
  boardShareSync: 'board_share_sync',
  /** Saved views: named queries, optionally shared through a board (docs/views.md). */
  views: 'views',
  /**
   * The audit log (docs/audit.md): one append-only entry per security-relevant action, written in
   * the transaction of the action; removed past its `expires_at` by a TTL index.
   */
  audit: 'audit_log',
  /** One-time OpenID Connect sign-in codes (their SHA-256), exchanged once within 60 s for a token pair (docs/auth.md); expired by a TTL index. */
  oidcCodes: 'oidc_codes',
  /** One document per board per UTC day: each column's card count and points (docs/flow.md). */
  flowSnapshots: 'flow_snapshots',
  /** One document per move of a card between a board's columns, from its `card.moved` event (docs/flow.md). */
  cardMoves: 'card_moves',
  /** The earlier layout of the card history, one document per (board, card) with all its moves: moved into `card_moves` at start-up (docs/flow.md). */
  cardFlow: 'card_flow',
  /** Where each card is on each board as the flow history last recorded it, one document per (board, card) (docs/flow.md). */
  cardPlaces: 'card_places',
  /** Import jobs (docs/import-export.md): one document per `POST /api/v1/imports`, its state, counts and problems. */
  imports: 'import_jobs',
  /** Custom field definitions: typed `cf.*` keys owned by a user or a group (docs/custom-fields.md). */
  customFields: 'custom_fields',
  /**
   * One document per (board, column with a blocking WIP limit), `_id` `<board id>:<column id>`:
   * every entry into such a column writes it in the entry's transaction, so two concurrent entries
   * conflict and the retried one counts again (docs/boards.md "WIP limits").
   */
  wipGuards: 'wip_guards',
} as const;
