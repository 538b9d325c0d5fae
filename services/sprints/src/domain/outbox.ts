import { EVENTS_COUNTER, type EventDoc, type EventType } from '@app/shared/domain';
import { Collections, type DocumentStore, type Session } from '@app/shared/store';

/*
 * Reading the events outbox (issue 10; written by `appendEvents` in shared/src/domain/events.ts):
 * collection `events`, one document per committed change, `seq` strictly increasing in commit
 * order, taken from the counter document `{_id: 'events', seq}` in `counters`. The burndown only
 * reads it.
 */

/** An outbox event (the writers' {@link EventDoc}) with the `data` fields the burndown reads; `data.task` is the API task after the write. */
export interface OutboxEvent extends EventDoc {
  data: {
    task?: { id?: string; status?: string; metadata?: Record<string, unknown> };
    task_id?: string;
    changes?: Array<{ field: string; from?: unknown; to?: unknown }>;
  };
}

/** The event types that change a task's membership, status or points. */
const TASK_EVENT_TYPES: EventType[] = ['task.created', 'task.updated', 'task.deleted', 'task.restored', 'card.moved'];

/**
 * The outbox counter now (the `seq` of the last event), read in `session` so that, on both
 * backends, every event with a higher `seq` was committed after what this transaction reads.
 * 0 when no event was ever written.
 */
export async function currentEventsSeq(store: DocumentStore, session: Session): Promise<number> {
  const counter = await store.collection<{ _id: string; seq?: unknown }>(Collections.counters).findOne({ _id: EVENTS_COUNTER }, { session });
  return typeof counter?.seq === 'number' ? counter.seq : 0;
}

/** Task events of the outbox after `afterSeq` that occurred at or before `until` (ISO), in `seq` order. */
export function taskEventsSince(store: DocumentStore, afterSeq: number, until: string): Promise<OutboxEvent[]> {
  return store.collection<OutboxEvent>(Collections.events).find(
    { seq: { $gt: afterSeq }, occurred_at: { $lte: until }, type: { $in: TASK_EVENT_TYPES } },
    { sort: { seq: 1 }, projection: { _id: 1, seq: 1, type: 1, occurred_at: 1, task_id: 1, data: 1 } },
  );
}
