import { callerId, type Handler } from '@app/shared/bus';
import type { ColumnCard, QueryOps } from '@app/shared/contracts';
import { boardScopeFilter, columnOf, leaseView, loadBoard, type ServiceDeps, type TaskDoc } from '@app/shared/domain';
import { decodeMetadata } from '@app/shared/store';
import { compileColumn, DEFAULT_PAGE_SIZE, findPageOrdered, sprintFor, tasksOf } from '../reads.js';

/** The card shape of the column read: id, title, status, tags, assignee (when set), metadata (API keys), lease (when claimed). */
function toCard(doc: TaskDoc): ColumnCard {
  const card: ColumnCard = { id: doc._id, title: doc.title, status: doc.status, tags: doc.tags, metadata: decodeMetadata(doc.metadata) };
  if (doc.assignee !== undefined) card.assignee = doc.assignee;
  if (doc.lease !== undefined) card.lease = leaseView(doc.lease);
  return card;
}

/** Only the fields a card shows are fetched. */
const CARD_FIELDS = { title: 1, status: 1, tags: 1, assignee: 1, metadata: 1, lease: 1 } as const;

/**
 * Column read (Draft; docs/query-service.md, docs/architecture.md §7): the
 * column's effective query within the board scope, paginated per column, echoing
 * `effective_query`. Errors: 404 `BOARD_NOT_FOUND` / `COLUMN_NOT_FOUND`; 400 for a bad `filter`
 * (position relative to the filter text).
 */
export const queryColumn =
  ({ store, clock }: ServiceDeps): Handler<typeof QueryOps.column> =>
  async (input, ctx) => {
    const { board, principal } = await loadBoard(store, callerId(ctx), input.boardId, 'read');
    const column = columnOf(board, input.columnId);
    const compiled = await compileColumn(store, principal, board, column, sprintFor(board, input.sprint), clock.now(), input.filter);
    const page = input.page ?? 1;
    const pageSize = input.page_size ?? DEFAULT_PAGE_SIZE;
    const { docs, total } = await findPageOrdered(
      tasksOf(store),
      { $and: [boardScopeFilter(board, principal), compiled.filter] },
      compiled,
      page,
      pageSize,
      CARD_FIELDS,
    );
    return { data: docs.map(toCard), total, page, page_size: pageSize, effective_query: compiled.text };
  };
