import { randomUUID } from 'node:crypto';
import type { EventDoc } from '../events/envelope.js';
import { EVENTS_COUNTER } from '../events/feed.js';
import { Collections } from '../store/collections.js';
import type { DocumentStore } from '../store/port.js';

/** An event as a test describes it: type and data, the other envelope fields optional. */
export type TestEvent = Partial<Omit<EventDoc, 'seq'>> & { type: string };

/**
 * Test-only: appends `events` to the outbox exactly as the "Events outbox" agreement says (one
 * transaction: `$inc` of `{_id: 'events'}` in `counters` for each `seq`, then the inserts), so
 * delivery can be tested without going through a write route. Returns the stored documents.
 */
export async function appendTestEvents(store: DocumentStore, events: readonly TestEvent[], at = new Date()): Promise<EventDoc[]> {
  return store.withTransaction(async (session) => {
    const counter = await store
      .collection<{ _id: string; seq: number }>(Collections.counters)
      .findOneAndUpdate({ _id: EVENTS_COUNTER }, { $inc: { seq: events.length } }, { upsert: true, returnDocument: 'after', session });
    const first = counter!.seq - events.length + 1;
    const docs: EventDoc[] = events.map((e, i) => ({
      _id: randomUUID(),
      occurred_at: at.toISOString(),
      actor: 'user-test',
      request_id: randomUUID(),
      data: {},
      ...e,
      seq: first + i,
    }));
    await store.collection<EventDoc>(Collections.events).insertMany(docs, { session });
    return docs;
  });
}
