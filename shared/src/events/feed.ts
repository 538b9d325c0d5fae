import { FEED_DEFAULT_LIMIT, FEED_PAGE_MAX_BYTES } from '../contracts/events.js';
import { EVENT_INDEXES } from '../domain/events.js';
import { AppError, invalidField } from '../errors/index.js';
import { Collections } from '../store/collections.js';
import type { DocumentStore, Filter, IndexSpec } from '../store/port.js';
import { isEventType, toEnvelope, type EventDoc, type EventEnvelope } from './envelope.js';
import { readableEvents } from './access.js';

/** Default retention of the outbox in days (`EVENT_RETENTION_DAYS`). */
export const DEFAULT_RETENTION_DAYS = 7;
/** `_id` of the counter document holding the highest `seq` the retention sweep removed. */
export const SWEPT_COUNTER = 'events_swept';
/** At most this many stored events are scanned per feed page (the access rules may hide many). */
const SCAN_BUDGET = 5_000;

/**
 * Indexes the readers need: the `seq` index of `events` (unique: the relay numbers each `seq`
 * once; the feed and every cursor walk it), `occurred_at` for the retention sweep, and
 * `board_id` then `seq` for the feed and streams filtered by board.
 */
export const eventIndexes: IndexSpec[] = [
  ...EVENT_INDEXES,
  { collection: Collections.events, keys: { occurred_at: 1 } },
  { collection: Collections.events, keys: { board_id: 1, seq: 1 } },
];

/** Filters shared by the feed, the stream and webhooks: event types (none = all) and a board id. */
export interface EventFilter {
  types?: readonly string[];
  boardId?: string;
  /** Only events numbered up to this `seq` (a reader that moves its cursor past what it skipped). */
  through?: number;
}

/**
 * Parses the `types` parameter (`a,b`): known type names, comma-separated, blanks ignored.
 * Returns undefined for none. Throws 400 `VALIDATION_FAILED` naming `field` for an unknown type.
 */
export function parseTypes(text: string | undefined, field = '/types'): string[] | undefined {
  if (text === undefined) return undefined;
  const types = text.split(',').map((t) => t.trim()).filter((t) => t !== '');
  const unknown = types.find((t) => !isEventType(t));
  if (unknown !== undefined) throw invalidField(field, `unknown event type "${unknown}" (see docs/events.md)`, 'unknown-type');
  return types.length ? [...new Set(types)] : undefined;
}

/** True when `e` passes `f` (type list and board id). */
export function matchesFilter(e: Pick<EventEnvelope, 'type' | 'board_id'>, f: EventFilter): boolean {
  if (f.types && !f.types.includes(e.type)) return false;
  if (f.boardId !== undefined && e.board_id !== f.boardId) return false;
  return true;
}

/** The store filter of `f` on events after `after`. */
function storeFilter(after: number, f: EventFilter): Filter {
  const filter: Filter = { seq: f.through === undefined ? { $gt: after } : { $gt: after, $lte: f.through } };
  if (f.types) filter.type = { $in: [...f.types] };
  if (f.boardId !== undefined) filter.board_id = f.boardId;
  return filter;
}

/**
 * Up to `limit` numbered events (`events`) after `after` matching `f`, oldest first, as envelopes,
 * read with `majority` (only events a failover cannot roll back).
 * With `traces` (the relays and the webhook fan-out, when tracing is on), the write's
 * `traceparent` of each event that has one is put there under the event id: it is not part of the
 * envelope, and the same read brings it.
 */
export async function readOutbox(store: DocumentStore, after: number, limit: number, f: EventFilter = {}, traces?: Map<string, string>): Promise<EventEnvelope[]> {
  // what a failover could roll back is never handed out (docs/events.md "What is published is durable")
  const docs = await store.collection<EventDoc>(Collections.events).find(storeFilter(after, f), { sort: { seq: 1 }, limit, readConcern: 'majority' });
  if (traces) for (const d of docs) if (d.traceparent !== undefined) traces.set(d._id, d.traceparent);
  return docs.map(toEnvelope);
}

/** The highest `seq` in the outbox (0 when empty), read with `majority`. */
export async function lastSeq(store: DocumentStore): Promise<number> {
  const [last] = await store.collection<EventDoc>(Collections.events).find({}, { sort: { seq: -1 }, limit: 1, projection: { seq: 1 }, readConcern: 'majority' });
  return last?.seq ?? 0;
}

/** The highest `seq` the retention sweep removed (0 when nothing was removed yet). */
export async function sweptSeq(store: DocumentStore): Promise<number> {
  const doc = await store.collection<{ _id: string; seq: number }>(Collections.counters).findOne({ _id: SWEPT_COUNTER });
  return doc?.seq ?? 0;
}

/**
 * Throws 410 `EVENTS_EXPIRED` when a cursor `after` points before the retention window: events
 * after it were removed by the sweep, so reading on would silently skip them.
 */
export async function assertNotExpired(store: DocumentStore, after: number): Promise<void> {
  const swept = await sweptSeq(store);
  if (after < swept) {
    throw new AppError('EVENTS_EXPIRED', { details: { after, oldest_available_after: swept } });
  }
}

/** A feed page: visible events oldest first and the cursor of the next page. */
export interface FeedPage {
  data: EventEnvelope[];
  /** Pass as `after` to read on; equals the last event scanned (also when the access rules hid it). */
  next_after: number;
}

/**
 * One page of the change feed for user `userId` (`GET /api/v1/events`): events after
 * `after` (default: the start of the retained outbox) matching `filter`, only those the user can
 * read now (docs/architecture.md §5, `readableEvents`), oldest first, at most `limit`, and at most
 * `FEED_PAGE_MAX_BYTES` of JSON unless the page is one event (so a page fits one bus reply, while
 * every event can be read). Hidden events are skipped, and `next_after` moves past them, so paging
 * never stalls or repeats. Throws 410 `EVENTS_EXPIRED`
 * for an `after` older than the retention window.
 */
export async function readFeed(
  store: DocumentStore,
  userId: string,
  opts: { after?: number; limit?: number; filter?: EventFilter },
): Promise<FeedPage> {
  const limit = opts.limit ?? FEED_DEFAULT_LIMIT;
  const filter = opts.filter ?? {};
  let cursor = opts.after ?? (await sweptSeq(store));
  if (opts.after !== undefined) await assertNotExpired(store, opts.after);
  const data: EventEnvelope[] = [];
  let scanned = 0;
  let bytes = 0;
  while (data.length < limit && scanned < SCAN_BUDGET) {
    const want = limit - data.length;
    const batch = await readOutbox(store, cursor, want, filter);
    if (batch.length === 0) break;
    scanned += batch.length;
    const visible = new Set(await readableEvents(store, userId, batch));
    for (const e of batch) {
      if (visible.has(e)) {
        const size = Buffer.byteLength(JSON.stringify(e), 'utf8');
        // a full page ends before the event that would pass the byte budget (never empty)
        if (data.length > 0 && bytes + size > FEED_PAGE_MAX_BYTES) return { data, next_after: cursor };
        bytes += size;
        data.push(e);
      }
      cursor = e.seq;
    }
    if (batch.length < want) break;
  }
  return { data, next_after: cursor };
}

/** Events removed per delete of the sweep (keeps each MongoDB delete small). */
const SWEEP_CHUNK = 5_000;

/**
 * Retention sweep (`EVENT_RETENTION_DAYS`): removes events that occurred more than
 * `days` days before `now`. The highest removed `seq` is recorded first (`counters`,
 * `{_id: 'events_swept'}`), so a cursor before it answers 410 before its events disappear; the
 * events then go in chunks of 5,000 by `seq` (no large transaction). Idempotent and safe to run
 * from several replicas; an interrupted sweep is finished by the next. Returns how many it removed.
 */
export async function sweepEvents(store: DocumentStore, now: Date, days: number): Promise<number> {
  const cutoff = new Date(now.getTime() - days * 86_400_000).toISOString();
  const events = store.collection<EventDoc>(Collections.events);
  const [newest] = await events.find({ occurred_at: { $lt: cutoff } }, { sort: { seq: -1 }, limit: 1, projection: { seq: 1 } });
  if (!newest) return 0;
  const counters = store.collection<{ _id: string; seq: number }>(Collections.counters);
  await counters.updateOne({ _id: SWEPT_COUNTER, seq: { $lt: newest.seq } }, { $set: { seq: newest.seq } }).then(async (r) => {
    if (r.matchedCount === 0 && !(await counters.findOne({ _id: SWEPT_COUNTER }))) {
      await counters.updateOne({ _id: SWEPT_COUNTER }, { $set: { seq: newest.seq } }, { upsert: true });
    }
  });
  let removed = 0;
  for (;;) {
    const chunk = await events.find({ seq: { $lte: newest.seq } }, { sort: { seq: 1 }, limit: SWEEP_CHUNK, projection: { seq: 1 } });
    if (chunk.length === 0) return removed;
    const { deletedCount } = await events.deleteMany({ seq: { $lte: chunk[chunk.length - 1]!.seq } });
    removed += deletedCount;
  }
}
