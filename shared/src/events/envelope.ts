import { EVENT_TYPES, type EventType } from '../contracts/events.js';

/** Every event type the outbox records, and its name type (contracts/events.ts, docs/events.md). */
export { EVENT_TYPES, type EventType };

/** True when `t` is a known event type. */
export function isEventType(t: string): t is EventType {
  return (EVENT_TYPES as readonly string[]).includes(t);
}

/** An outbox document as stored in `events` (written by `appendEvents`, shared/src/domain/events.ts; read here by `seq` only). */
export type { EventDoc } from '../domain/events.js';
import type { EventDoc } from '../domain/events.js';

/** The API envelope of one event (contracts/events.ts), as the readers of this folder hand it out. */
export type { EventEnvelope } from '../contracts/events.js';
import type { EventEnvelope } from '../contracts/events.js';

/** The API envelope of a stored event (`_id` → `id`; absent optionals stay absent). */
export function toEnvelope(doc: EventDoc): EventEnvelope {
  const e: EventEnvelope = {
    id: doc._id,
    seq: doc.seq,
    type: doc.type,
    occurred_at: doc.occurred_at,
    actor: doc.actor,
    request_id: doc.request_id,
    data: doc.data,
  };
  if (doc.actor_token !== undefined) e.actor_token = doc.actor_token;
  if (doc.task_id !== undefined) e.task_id = doc.task_id;
  if (doc.board_id !== undefined) e.board_id = doc.board_id;
  return e;
}
