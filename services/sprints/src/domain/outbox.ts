import { EVENTS_COUNTER, type EventDoc, type EventType } from '@app/shared/domain';
import { Collections, type DocumentStore, type Session } from '@app/shared/store';

/*
 * Reading the numbered events (written to the outbox by `appendEvents` in
 * shared/src/domain/events.ts and numbered after commit by the relay, shared/src/events/relay.ts):
 * collection `events`, one document per committed change, `seq` strictly increasing, per task in
 * commit order; the relay's last `seq` is in the state document `{_id: 'events', seq}` of
 * `counters`. The burndown only reads them.
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
 * The relay's last `seq` now (0 when no event was numbered yet), read in `session`. Every event
 * numbered up to it was committed before this transaction's reads, so the state this transaction
 * reads already holds it. An event numbered later may still be one committed before (the relay
 * numbers after the commit): replaying it on top of that state changes nothing, since each event
 * carries its task's state after the write and a task's events are numbered in commit order.
 */
export async function currentEventsSeq(store: DocumentStore, session: Session): Promise<number> {
  const counter = await store.collection<{ _id: string; seq?: unknown }>(Collections.counters).findOne({ _id: EVENTS_COUNTER }, { session });
  return typeof counter?.seq === 'number' ? counter.seq : 0;
}

/** Events read per page by {@link taskEventsSince}. */
export const EVENT_PAGE = 5_000;

/**
 * Task events of the outbox after `afterSeq` that occurred at or before `until` (ISO), in `seq`
 * order, those `keep` keeps: read in pages of {@link EVENT_PAGE} by `seq`, each page filtered as
 * it is read, so what is held is bounded by what is kept, not by every write since `afterSeq`.
 */
export async function taskEventsSince(store: DocumentStore, afterSeq: number, until: string, keep: (e: OutboxEvent) => boolean = () => true): Promise<OutboxEvent[]> {
  const events = store.collection<OutboxEvent>(Collections.events);
  const out: OutboxEvent[] = [];
  for (let cursor = afterSeq; ;) {
    const page = await events.find(
      { seq: { $gt: cursor }, occurred_at: { $lte: until }, type: { $in: TASK_EVENT_TYPES } },
      { sort: { seq: 1 }, limit: EVENT_PAGE, projection: { _id: 1, seq: 1, type: 1, occurred_at: 1, task_id: 1, data: 1 } },
    );
    for (const e of page) if (keep(e)) out.push(e);
    if (page.length < EVENT_PAGE) return out;
    cursor = page[page.length - 1]!.seq;
  }
}
