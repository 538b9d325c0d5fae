import { Collections } from '../store/collections.js';
import type { Board } from '../contracts/boards.js';
import { EVENT_MAX_BYTES } from '../contracts/events.js';
import { TASK_MAX_BYTES, type Task } from '../contracts/tasks.js';
import { AppError } from '../errors/index.js';
import type { Doc, DocumentStore, IndexSpec, Session } from '../store/port.js';
import { bsonSize, sizeBound } from '../store/rules.js';
import { jsonBound, jsonBytes, jsonBytesOver as bytesOver } from '../util/json-size.js';
import { COLLECTION_INDEXES } from '../store/schema.js';
import { timeOrderedId, toTask, type TaskDoc } from './task.js';

export { jsonBound } from '../util/json-size.js';

/**
 * The events outbox (written here; numbered by the relay, shared/src/events/relay.ts;
 * read by the feed, stream, webhooks and burndown). Every committed write inserts its events into
 * the `outbox` collection in the SAME store transaction as the write, so a rolled-back write emits
 * nothing and a committed one never loses its events: one outbox document, or several when they
 * pass {@link OUTBOX_PART_BYTES} (a document is at most 16 MiB). The
 * write does not number them: no document is common to all writes (a counter would make any two
 * concurrent writes conflict on MongoDB). The relay gives them their `seq` after the commit and
 * moves them to `events` (docs/concurrency.md "The events outbox").
 */

/** Every event type (contracts/events.ts). */
export type { EventType } from '../contracts/events.js';
import type { EventType } from '../contracts/events.js';

/** One field change of a `task.updated` event: `field` is the API field name or `metadata.<key>`; `to` absent when removed or cleared. */
export interface FieldChange {
  field: string;
  from?: unknown;
  to?: unknown;
}

/** An event as a write hands it to {@link appendEvents}: the store assigns `_id`, `seq` and the stamp. */
export interface NewEvent {
  type: EventType;
  task_id?: string;
  board_id?: string;
  /** The type's payload (brief "Events outbox"): `{task}`, `{task, changes}`, `{board}`, … */
  data: Record<string, unknown>;
  /**
   * An upper bound of the UTF-8 bytes of `data`'s JSON ({@link jsonBound}), when the event's
   * builder has one (it bounded the task it carries): the size check of {@link appendEvents} then
   * does not walk `data` again. Not stored.
   */
  dataBound?: number;
}

/** An event as the write stores it in its outbox document: everything but `seq`. */
export interface PendingEvent extends Doc {
  _id: string;
  type: EventType;
  occurred_at: string;
  actor: string;
  /** The access token the actor used for the write, when it used one (docs/auth.md "Access tokens"). */
  actor_token?: string;
  request_id: string;
  task_id?: string;
  board_id?: string;
  data: Record<string, unknown>;
}

/**
 * An event as stored in `events` (numbered by the relay); the API envelope is the same with `_id`
 * renamed `id` and without `traceparent`. `seq` is strictly increasing and gapless per store;
 * `occurred_at` is ISO 8601 UTC.
 */
export interface EventDoc extends PendingEvent {
  seq: number;
  /**
   * The W3C trace context of the write that emitted it (its outbox document's), present only when
   * that write was traced. Internal: the envelope (feed, stream, JetStream, webhook bodies) leaves
   * it out; the relay, the JetStream publisher and webhook deliveries link their spans to it.
   */
  traceparent?: string;
}

/**
 * One outbox document: the events of one committed write, in the order the write emitted them.
 * `_id` is a time-ordered UUID ({@link timeOrderedId}) made inside the transaction, after the
 * write's reads; the relay takes entries in `_id` order (and keeps per-task and per-board order by
 * version, shared/src/events/relay.ts).
 */
export interface OutboxDoc extends Doc {
  _id: string;
  events: PendingEvent[];
  /**
   * How many events it holds, and an upper bound of their BSON bytes: the relay reads these first
   * (a projection) to bound a pass by events and bytes (docs/events.md "The relay's passes").
   * Absent on documents written before they were recorded (read as 1 event of 0 bytes).
   */
  event_count?: number;
  bytes?: number;
  /** The write's W3C `traceparent` when it ran in a sampled span (docs/observability.md "Links to the write"); absent otherwise. */
  traceparent?: string;
}

/** Who and when of the events of one write. */
export interface EventStamp {
  /** The caller's user id. */
  actor: string;
  /** The id of the access token the caller used, when it used one. */
  actor_token?: string;
  request_id: string;
  /** The write's time (the service clock). */
  occurred_at: string;
  /** The write's W3C `traceparent`, when it is traced: stored on the outbox document, never in the envelope. */
  traceparent?: string;
}

/** Id of the relay's state document in `counters`: `{_id: 'events', seq, holder, lease_until}` (seq = the last number given). */
export const EVENTS_COUNTER = 'events';

/** The index readers rely on: events by `seq`, unique (a second relay pass numbering the same `seq` fails); defined once in the store's schema. */
export const EVENT_INDEXES: readonly IndexSpec[] = COLLECTION_INDEXES[Collections.events]!;

/**
 * Most bytes (an upper bound of their BSON size) of events one outbox document holds: a write whose
 * events pass it (a batch update of tasks with long descriptions, a sprint close's rollover) stores
 * them in several outbox documents, in order, in the same transaction, each far below MongoDB's
 * 16 MiB document limit. An event larger than this on its own gets a document of its own.
 */
export const OUTBOX_PART_BYTES = 4 * 1024 * 1024;

/**
 * Splits `events` into the outbox documents' parts, in order, each at most {@link OUTBOX_PART_BYTES}
 * (except an event bigger than that, alone in its part), with each part's size bound. Counting
 * costs one pass with no allocation ({@link sizeBound}); exact sizes only when the bound passes the limit.
 */
function outboxParts(events: PendingEvent[]): Array<{ events: PendingEvent[]; bytes: number }> {
  const bound = sizeBound(events);
  if (bound <= OUTBOX_PART_BYTES) return [{ events, bytes: bound }];
  const parts: Array<{ events: PendingEvent[]; bytes: number }> = [];
  let current: { events: PendingEvent[]; bytes: number } = { events: [], bytes: 5 };
  for (const e of events) {
    const size = bsonSize(e) + 12;
    if (current.events.length > 0 && current.bytes + size > OUTBOX_PART_BYTES) {
      parts.push(current);
      current = { events: [], bytes: 5 };
    }
    current.events.push(e);
    current.bytes += size;
  }
  parts.push(current);
  return parts;
}

/**
 * Appends `events` in the transaction `session`: one insert of an outbox document holding them
 * (no counter, no document shared with another write), or, when they pass
 * {@link OUTBOX_PART_BYTES}, several in order (time-ordered ids, so the relay numbers them in
 * order), each with the stamp's `traceparent` when given, its `event_count` and `bytes`.
 * Event ids are new time-ordered UUIDs ({@link timeOrderedId}), fixed here so the relay, JetStream and webhooks see the same id. Nothing
 * happens for an empty list. Errors are the store's (503, 409); the caller's transaction then
 * aborts with nothing written; an event over `EVENT_MAX_BYTES` is a 413 ({@link checkEventSize}).
 * Returns the pending events (their `seq` is given by the relay).
 */
export async function appendEvents(store: DocumentStore, session: Session, events: readonly NewEvent[], stamp: EventStamp): Promise<PendingEvent[]> {
  if (events.length === 0) return [];
  for (const e of events) checkEventSize(e);
  const docs = events.map((e): PendingEvent => {
    const doc: PendingEvent = { _id: timeOrderedId(), type: e.type, occurred_at: stamp.occurred_at, actor: stamp.actor, request_id: stamp.request_id, data: e.data };
    if (stamp.actor_token !== undefined) doc.actor_token = stamp.actor_token;
    if (e.task_id !== undefined) doc.task_id = e.task_id;
    if (e.board_id !== undefined) doc.board_id = e.board_id;
    return doc;
  });
  const outbox = store.collection<OutboxDoc>(Collections.outbox);
  // one insert per part, in turn (one operation at a time in a transaction)
  for (const part of outboxParts(docs)) {
    const entry: OutboxDoc = { _id: timeOrderedId(), events: part.events, event_count: part.events.length, bytes: part.bytes };
    if (stamp.traceparent !== undefined) entry.traceparent = stamp.traceparent;
    await outbox.insertOne(entry, { session });
  }
  return docs;
}

/**
 * Throws 413 `PAYLOAD_TOO_LARGE` (`details: {event_type, bytes, max_bytes}`) when the event's
 * payload is over `EVENT_MAX_BYTES` (docs/events.md "Sizes"): every event a write commits can
 * then be streamed, paged and published on the bus. The input limits (docs/tasks.md "Limits")
 * keep task writes far below it; this is the last guard, for any event type.
 */
export function checkEventSize(e: NewEvent): void {
  const bytes = bytesOver(e.data, EVENT_MAX_BYTES, e.dataBound);
  if (bytes === undefined) return;
  throw new AppError('PAYLOAD_TOO_LARGE', {
    message: `The ${e.type} event of this write would be ${bytes} bytes, over the ${EVENT_MAX_BYTES}-byte limit of an event; nothing was written`,
    details: { event_type: e.type, bytes, max_bytes: EVENT_MAX_BYTES },
  });
}

/**
 * Throws 413 `PAYLOAD_TOO_LARGE` when the API task object `task` is over `TASK_MAX_BYTES` of JSON
 * (docs/tasks.md "Limits"), naming its largest field: `details: {field, bytes, max_bytes}` with
 * `field` a JSON pointer such as `/description` or `/metadata`. Called by the builders of the
 * events that carry a task, so no write can store a task its events could not carry. Returns the
 * task's {@link jsonBound}.
 */
export function checkTaskSize(task: Task): number {
  const bound = jsonBound(task);
  const bytes = bytesOver(task, TASK_MAX_BYTES, bound);
  if (bytes === undefined) return bound;
  let field = '';
  let largest = -1;
  for (const [k, v] of Object.entries(task)) {
    const n = jsonBytes(v);
    if (n > largest) [field, largest] = [k, n];
  }
  throw new AppError('PAYLOAD_TOO_LARGE', {
    message: `${field}: the task would be ${bytes} bytes of JSON, over the ${TASK_MAX_BYTES}-byte limit of a task (its largest field is ${field}, ${largest} bytes); nothing was written`,
    details: { field: `/${field}`, bytes, max_bytes: TASK_MAX_BYTES },
  });
}

/** The API task object of `doc`, checked against the task size limit ({@link checkTaskSize}), with its {@link jsonBound}. */
function sizedTask(doc: TaskDoc): { task: Task; bound: number } {
  const task = toTask(doc);
  return { task, bound: checkTaskSize(task) };
}

/** {@link jsonBound} of `{task}` for a task of bound `taskBound`: the braces, and the key with its quotes and colon. */
const taskOnlyBound = (taskBound: number): number => 2 + 4 + 6 * 'task'.length + taskBound;

const same = (a: unknown, b: unknown) => a === b || JSON.stringify(a) === JSON.stringify(b);

/**
 * The field changes between two API task objects (before → after), for `task.updated`: every
 * top-level field except the stamps (`updated_at`, `updated_by`, `version`) and `metadata`, whose
 * keys are compared one by one as `metadata.<key>`. A removed field has no `to`, an added one no
 * `from`. Order: top-level fields in the after object's order, then removed ones, then metadata.
 */
export function taskChanges(before: Record<string, unknown>, after: Record<string, unknown>): FieldChange[] {
  const skip = new Set(['updated_at', 'updated_by', 'version', 'metadata', 'notes', 'linkedTo', 'derivedFrom']);
  const out: FieldChange[] = [];
  const diff = (field: string, from: unknown, to: unknown) => {
    if (same(from, to)) return;
    const c: FieldChange = { field };
    if (from !== undefined) c.from = from;
    if (to !== undefined) c.to = to;
    out.push(c);
  };
  for (const k of Object.keys(after)) if (!skip.has(k)) diff(k, before[k], after[k]);
  for (const k of Object.keys(before)) if (!skip.has(k) && !(k in after)) diff(k, before[k], undefined);
  const mb = (before.metadata ?? {}) as Record<string, unknown>;
  const ma = (after.metadata ?? {}) as Record<string, unknown>;
  for (const k of Object.keys(ma)) diff(`metadata.${k}`, mb[k], ma[k]);
  for (const k of Object.keys(mb)) if (!(k in ma)) diff(`metadata.${k}`, mb[k], undefined);
  return out;
}

/** The envelope ids of an event about a task: `task_id`, and `board_id` when it was created on a board. */
function aboutTask(doc: TaskDoc): Pick<NewEvent, 'task_id' | 'board_id'> {
  return doc.boardId === undefined ? { task_id: doc._id } : { task_id: doc._id, board_id: doc.boardId };
}

/** `task.created` `{task}` (the API task object). Throws 413 for a task over the size limit ({@link checkTaskSize}). */
export function taskCreatedEvent(doc: TaskDoc): NewEvent {
  const { task, bound } = sizedTask(doc);
  return { type: 'task.created', ...aboutTask(doc), data: { task }, dataBound: taskOnlyBound(bound) };
}

/**
 * `task.updated` `{task, changes}` from the stored task before and after one write; `null` when
 * no API field changed (nothing to tell). Throws 413 when `after` is over the task size limit
 * ({@link checkTaskSize}).
 */
export function taskUpdatedEvent(before: TaskDoc, after: TaskDoc): NewEvent | null {
  const { task } = sizedTask(after);
  const changes = taskChanges(toTask(before), task);
  if (changes.length === 0) return null;
  return { type: 'task.updated', ...aboutTask(after), data: { task, changes } };
}

/** `task.restored` `{task}`: a soft-deleted task made live again (the API task after the restore). */
export function taskRestoredEvent(doc: TaskDoc): NewEvent {
  return { type: 'task.restored', ...aboutTask(doc), data: { task: toTask(doc) } };
}

/** `task.deleted` `{task_id, task}` (the task as it was deleted). */
export function taskDeletedEvent(doc: TaskDoc): NewEvent {
  return { type: 'task.deleted', ...aboutTask(doc), data: { task_id: doc._id, task: toTask(doc) } };
}

/** A board event `{board}` (the API board object as the actor sees it). */
export function boardEvent(type: 'board.created' | 'board.updated' | 'board.deleted' | 'board.shared' | 'board.unshared', board: Board): NewEvent {
  return { type, board_id: board.id, data: { board } };
}
