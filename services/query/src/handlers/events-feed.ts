import { callerId, type Handler } from '@app/shared/bus';
import type { EventsOps } from '@app/shared/contracts';
import type { ServiceDeps } from '@app/shared/domain';
import { catchUpOutbox, parseTypes, readFeed, type EventFilter } from '@app/shared/events';

/**
 * `GET /api/v1/events`: one page of the change feed for the caller — events after
 * `after`, filtered by `types` and `board_id`, only about tasks and boards the caller can read
 * now (docs/architecture.md §5), oldest first, with `next_after`. Errors: 400 `VALIDATION_FAILED` naming
 * `types` for an unknown type; 410 `EVENTS_EXPIRED` for an `after` past the retention window.
 * Read-your-writes: the writes committed before the request are numbered first
 * ({@link catchUpOutbox}), so a client that wrote and then reads sees its events.
 */
export const eventsFeed =
  ({ store }: ServiceDeps): Handler<typeof EventsOps.feed> =>
  async (input, ctx) => {
    const filter: EventFilter = {};
    const types = parseTypes(input.types);
    if (types) filter.types = types;
    if (input.board_id !== undefined) filter.boardId = input.board_id;
    await catchUpOutbox(store);
    return readFeed(store, callerId(ctx), {
      filter,
      ...(input.after !== undefined ? { after: input.after } : {}),
      ...(input.limit !== undefined ? { limit: input.limit } : {}),
    });
  };
