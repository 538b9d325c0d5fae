import { EventsOps, ExportOps, FlowOps, QueryOps, ViewsOps, WebhooksOps } from '@app/shared/contracts';
import { eventIndexes } from '@app/shared/events';
import { bindOps, type ServiceDefinition } from '@app/shared/domain';
import { Collections, metadataPath, type IndexSpec } from '@app/shared/store';
import { eventWork } from './events/background.js';
import { boardSummary } from './handlers/board-summary.js';
import { boardTasks } from './handlers/board-tasks.js';
import { validateQueryText } from './handlers/validate.js';
import { eventsFeed } from './handlers/events-feed.js';
import { exportPage } from './handlers/export-page.js';
import { webhookHandlers } from './handlers/webhooks.js';
import { viewHandlers, viewIndexes } from './handlers/views.js';
import { webhookIndexes } from './webhooks/model.js';
import { cumulativeFlow, cycleTime, flowSnapshot } from './flow/handlers.js';
import { queryBoard } from './handlers/query-board.js';
import { queryColumn } from './handlers/query-column.js';
import { queryTasks } from './handlers/query-tasks.js';

const taskIndex = (keys: IndexSpec['keys']): IndexSpec => ({ collection: Collections.tasks, keys });

/**
 * The query service (docs/architecture.md §1): every read of task lists, and the events (the change
 * feed, webhook subscriptions; in the background the outbox relay, the webhook dispatcher and the
 * retention sweep, docs/events.md). Queue group `query`; run N replicas and NATS spreads requests
 * across them. Reads only; the indexes serve the scope filters
 * (live + owner / group), the common sorts and metadata lookups (wildcard + `app.sprint`).
 */
export const queryService: ServiceDefinition = {
  name: 'query',
  bindings: (deps) => [
    ...bindOps(deps, QueryOps, { tasks: queryTasks, board: queryBoard, column: queryColumn, summary: boardSummary, validate: validateQueryText, boardTasks }),
    ...bindOps(deps, EventsOps, { feed: eventsFeed }),
    ...bindOps(deps, WebhooksOps, webhookHandlers),
    ...bindOps(deps, ViewsOps, viewHandlers),
    ...bindOps(deps, FlowOps, { cumulative: cumulativeFlow, cycleTime, snapshot: flowSnapshot }),
    ...bindOps(deps, ExportOps, { page: exportPage }),
  ],
  background: eventWork(),
  indexes: [
    taskIndex({ deleted: 1, created_by: 1 }),
    taskIndex({ deleted: 1, groupId: 1 }),
    taskIndex({ status: 1 }),
    taskIndex({ tags: 1 }),
    taskIndex({ created_at: 1 }),
    taskIndex({ updated_at: 1 }),
    taskIndex({ 'metadata.$**': 1 }),
    taskIndex({ [metadataPath('app.sprint')]: 1 }),
    // the sprints among a board's cards, counted apart (countCards: docs/boards.md "Sprints are not cards")
    taskIndex({ [metadataPath('app.type')]: 1 }),
    // the default order of every column (docs/architecture.md §7)
    taskIndex({ [metadataPath('order')]: 1 }),
    ...eventIndexes,
    ...webhookIndexes,
    ...viewIndexes,
    // flow history (docs/flow.md): a board's snapshots by day; its moves by the column they went
    // into and by card, and a card's moves on every board (marked when it is deleted)
    { collection: Collections.flowSnapshots, keys: { board_id: 1, day: 1 } },
    { collection: Collections.cardMoves, keys: { board_id: 1, to: 1 } },
    { collection: Collections.cardMoves, keys: { board_id: 1, task_id: 1 } },
    { collection: Collections.cardMoves, keys: { task_id: 1 } },
    // the notes of an export page's cards
    { collection: Collections.notes, keys: { task_id: 1 } },
  ],
};
