export { EVENT_TYPES, isEventType, toEnvelope, type EventType, type EventDoc } from './envelope.js';
export {
  DEFAULT_RETENTION_DAYS, SWEPT_COUNTER, eventIndexes, parseTypes, matchesFilter,
  readOutbox, lastSeq, sweptSeq, assertNotExpired, readFeed, sweepEvents, type EventFilter, type FeedPage,
} from './feed.js';
export { AccessSnapshot, readableEvents } from './access.js';
export { OutboxPoller, Listeners, makeBatch, type EventHub, type EventBatch, type BatchListener, type OutboxPollerOptions } from './hub.js';
export { eventsStreamNames, ensureEventsStream, OutboxRelay, JetStreamHub, followDurable, type EventsStreamNames } from './jetstream.js';
export {
  relayOutbox, catchUpOutbox, causalOrder, passOf, EventRelay, PROCESS_HOLDER, RELAY_LEASE_MS, RELAY_INTERVAL_MS, RELAY_BATCH, RELAY_MAX_EVENTS, RELAY_MAX_BYTES, CATCH_UP_WAIT_MS,
  type RelayOptions, type RelayPass, type EventRelayOptions,
} from './relay.js';
export { parseCursor } from './cursor.js';
