import { randomUUID } from 'node:crypto';
import { appendEvents, type EventDoc, type EventType } from '../domain/events.js';
import { catchUpOutbox } from '../events/relay.js';
import { Collections } from '../store/collections.js';
import type { DocumentStore } from '../store/port.js';

/** An event as a test describes it: type, ids and data (default `{}`), and optionally who and which request. */
export interface TestEvent {
  type: string;
  task_id?: string;
  board_id?: string;
  data?: Record<string, unknown>;
  actor?: string;
  request_id?: string;
}

/**
 * Test-only: commits `events` to the outbox through the writers' own `appendEvents` in one
 * transaction, as a write would (one outbox document per actor/request run), then numbers them
 * as the relay does (`catchUpOutbox`), so delivery can be tested with exact envelopes without
 * going through a write route. Returns the stored (numbered) documents in order.
 */
export async function appendTestEvents(store: DocumentStore, events: readonly TestEvent[], at = new Date()): Promise<EventDoc[]> {
  const ids = await store.withTransaction(async (session) => {
    const out: string[] = [];
    for (const e of events) {
      const stamp = { actor: e.actor ?? 'user-test', request_id: e.request_id ?? randomUUID(), occurred_at: at.toISOString() };
      const event = { type: e.type as EventType, data: e.data ?? {}, ...(e.task_id ? { task_id: e.task_id } : {}), ...(e.board_id ? { board_id: e.board_id } : {}) };
      out.push(...(await appendEvents(store, session, [event], stamp)).map((d) => d._id));
    }
    return out;
  });
  await catchUpOutbox(store);
  const docs = await store.collection<EventDoc>(Collections.events).find({ _id: { $in: ids } }, { sort: { seq: 1 } });
  return docs;
}
