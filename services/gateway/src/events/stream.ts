import type { FastifyReply, FastifyRequest } from 'fastify';
import type { EventEnvelope, StreamQuerystring } from '@app/shared/contracts';
import { loadPrincipal, type Principal } from '@app/shared/domain';
import { AppError } from '@app/shared/errors';
import {
  assertNotExpired, catchUpOutbox, lastSeq, parseCursor, matchesFilter, parseTypes, readOutbox, readableEvents, type EventBatch, type EventFilter,
  type EventHub,
} from '@app/shared/events';
import type { DocumentStore } from '@app/shared/store';

/** Limits and timing of the event stream; `main.ts` fills them from the config. */
export interface StreamOptions {
  /** Open streams per user at most (`EVENT_STREAMS_PER_USER`, default 5); one more is 429. */
  perUser: number;
  /** Interval of the `: heartbeat` comment in ms (default 15 000). */
  heartbeatMs: number;
  /**
   * Unread bytes above which the stream waits for the client to read before it writes the next
   * event (default 1 MiB). Not a size limit: an event of any size is written whole, and the
   * events that arrive meanwhile are read from the store once the client has caught up.
   */
  maxBufferedBytes: number;
  /** How long a client may stay above `maxBufferedBytes` without reading before it is dropped, in ms (default 60 000). */
  stallMs: number;
  /** How long a principal's group list is reused in ms (docs/architecture.md §5: a short cache at most; default 5 000). */
  principalTtlMs: number;
}

/** Defaults of {@link StreamOptions}. */
export const DEFAULT_STREAM_OPTIONS: StreamOptions = { perUser: 5, heartbeatMs: 15_000, maxBufferedBytes: 1024 * 1024, stallMs: 60_000, principalTtlMs: 5_000 };

/** Events read from the store per backlog step (each at most `EVENT_MAX_BYTES`). */
const BACKLOG_PAGE = 100;
/** Live batches a stream holds while its client catches up; past that it reads them from the store afterwards. */
const MAX_QUEUED_BATCHES = 64;

/** One SSE frame: `id:` = seq, `event:` = type, `data:` = the envelope (JSON has no raw newlines). */
export function sseFrame(e: EventEnvelope): string {
  return `id: ${e.seq}\nevent: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`;
}

/**
 * Serves `GET /api/v1/events/stream` for every connection of one gateway: per-user
 * connection bound, resume point, backlog from the store, then live batches from the
 * {@link EventHub}, each event filtered by the request's filters and by what the user can read now.
 */
export class EventStreams {
  private readonly open = new Map<string, number>();
  private readonly sockets = new Set<{ destroy(): void }>();

  constructor(
    private readonly store: DocumentStore,
    private readonly hub: EventHub,
    private readonly opts: StreamOptions = DEFAULT_STREAM_OPTIONS,
  ) {}

  /** Ends every open stream (the gateway's `preClose`): clients reconnect elsewhere with `Last-Event-ID`. */
  closeAll(): void {
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
  }

  /** Open streams of every user at this gateway (`events_sse_streams_open`). */
  get total(): number {
    return this.sockets.size;
  }

  /** Open streams of `userId` (tests, metrics). */
  openCount(userId: string): number {
    return this.open.get(userId) ?? 0;
  }

  /**
   * Handles one stream request. Before the 200 head: 400 for a bad `types` or `Last-Event-ID`,
   * 410 `EVENTS_EXPIRED` for a resume point past retention, 429 `TOO_MANY_STREAMS` over the bound.
   * Resume point: `Last-Event-ID`, else `?after=`, else the current end (live only); the writes
   * committed before the request are numbered first (`catchUpOutbox`). Events are
   * written in `seq` order without gaps or repeats: the hub is subscribed first (live events
   * buffered), the store backlog up to its end is written, then buffered and live events past it;
   * a live batch that starts beyond the last seen `seq` has the gap read from the store first.
   * No event is too large to stream (docs/events.md "Sizes"): with more than `maxBufferedBytes`
   * unread, the stream waits for the client before writing on, and reads what arrived meanwhile
   * from the store; a client that reads nothing for `stallMs` is disconnected. Every stream ends
   * when its access token expires (the client reconnects with a fresh token and `Last-Event-ID`).
   */
  async serve(req: FastifyRequest, reply: FastifyReply): Promise<void> {
    const userId = req.user.sub;
    const grant = req.user.grant;
    const query = req.query as StreamQuerystring;
    const filter: EventFilter = { ...(query.board_id !== undefined ? { boardId: query.board_id } : {}) };
    const types = parseTypes(query.types);
    if (types) filter.types = types;
    const resume = resumePoint(req.headers['last-event-id'], query.after);
    if (resume !== undefined) await assertNotExpired(this.store, resume);
    const count = this.openCount(userId);
    if (count >= this.opts.perUser) {
      throw new AppError('TOO_MANY_STREAMS', { details: { limit: this.opts.perUser } });
    }
    this.open.set(userId, count + 1);

    const store = this.store;
    const raw = reply.raw;
    const pending: EventBatch[] = [];
    let live = false;
    let closed = false;
    let lastSeen = 0;
    let chain: Promise<void> = Promise.resolve();
    let principal: { p: Principal; at: number } | undefined;
    const principalNow = async (): Promise<Principal> => {
      if (!principal || Date.now() - principal.at > this.opts.principalTtlMs) principal = { p: await loadPrincipal(store, userId, undefined, grant), at: Date.now() };
      return principal.p;
    };
    const write = (text: string): void => {
      if (!closed) raw.write(text);
    };
    /**
     * Resolves once the client has read down to `maxBufferedBytes` (at once when it is there),
     * or the stream closed; a client that reads nothing for `stallMs` meanwhile is dropped.
     */
    const drained = (): Promise<void> => {
      if (closed || raw.writableLength <= this.opts.maxBufferedBytes) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const done = (): void => {
          clearTimeout(stall);
          raw.off('drain', done);
          raw.off('close', done);
          resolve();
        };
        const stall = setTimeout(() => {
          req.log.warn({ userId, buffered: raw.writableLength }, 'event stream client stopped reading; dropped');
          raw.destroy();
          done();
        }, this.opts.stallMs);
        raw.on('drain', done);
        raw.on('close', done);
      });
    };
    /** Writes the events whole, in order, each once the client has read what came before (backpressure, not a size limit). */
    const writeEvents = async (events: readonly EventEnvelope[]): Promise<void> => {
      for (const e of events) {
        await drained();
        if (closed) return;
        write(sseFrame(e));
      }
    };
    /** Fills `(lastSeen, upTo]` from the store, filtered and visible. */
    const fill = async (upTo: number): Promise<void> => {
      while (!closed && lastSeen < upTo) {
        const page = (await readOutbox(store, lastSeen, BACKLOG_PAGE, filter)).filter((e) => e.seq <= upTo);
        if (page.length === 0) break;
        await writeEvents(await readableEvents(store, userId, page, grant));
        lastSeen = page[page.length - 1]!.seq;
        if (page.length < BACKLOG_PAGE) break;
      }
      if (!closed) lastSeen = Math.max(lastSeen, upTo);
    };
    const onBatch = async (batch: EventBatch): Promise<void> => {
      const fresh = batch.events.filter((e) => e.seq > lastSeen);
      if (fresh.length === 0 || closed) return;
      if (fresh[0]!.seq > lastSeen + 1) await fill(fresh[0]!.seq - 1);
      const wanted = fresh.filter((e) => matchesFilter(e, filter));
      if (wanted.length > 0) {
        const [p, access] = await Promise.all([principalNow(), batch.access()]);
        await writeEvents(wanted.filter((e) => access.canRead(p, e)));
      }
      if (!closed) lastSeen = fresh[fresh.length - 1]!.seq;
    };
    // While the client catches up, live batches wait in order; past MAX_QUEUED_BATCHES only the
    // highest seq they reached is kept (`behind`) and one catch-up step reads them from the store.
    let queued = 0;
    let behind = 0;
    let catchUpQueued = false;
    const step = (work: () => Promise<void>): void => {
      chain = chain.then(work).catch((err: unknown) => {
        req.log.warn({ err }, 'event stream batch failed; closing the stream');
        raw.destroy();
      });
    };
    const catchUp = (): void => {
      if (catchUpQueued || behind <= lastSeen) return;
      catchUpQueued = true;
      step(() => {
        catchUpQueued = false;
        return fill(behind);
      });
    };
    const enqueue = (batch: EventBatch): void => {
      if ((live ? queued : pending.length) >= MAX_QUEUED_BATCHES) {
        behind = Math.max(behind, batch.events[batch.events.length - 1]?.seq ?? 0);
        if (live) catchUp();
        return;
      }
      if (!live) {
        pending.push(batch);
        return;
      }
      queued++;
      step(() => onBatch(batch).finally(() => queued--));
    };

    const unsubscribe = this.hub.subscribe(enqueue);
    const heartbeat = setInterval(() => {
      if (raw.writableLength <= this.opts.maxBufferedBytes) write(': heartbeat\n\n');
    }, this.opts.heartbeatMs);
    // The stream ends when the access token expires: the client reconnects with a fresh one.
    const exp = (req.user as { exp?: unknown }).exp;
    const expiry = typeof exp === 'number' ? setTimeout(() => raw.destroy(), Math.max(0, exp * 1000 - Date.now())) : undefined;
    const cleanup = (): void => {
      if (closed) return;
      closed = true;
      this.sockets.delete(raw);
      clearInterval(heartbeat);
      if (expiry) clearTimeout(expiry);
      unsubscribe();
      const n = this.openCount(userId) - 1;
      if (n > 0) this.open.set(userId, n);
      else this.open.delete(userId);
    };
    this.sockets.add(raw);
    raw.on('close', cleanup);
    raw.on('error', cleanup);

    try {
      reply.hijack();
      raw.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache, no-transform',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
        'x-request-id': req.id,
      });
      write(': connected\n\n');
      // the writes committed before the request are numbered first (read-your-writes)
      await catchUpOutbox(store);
      const end = await lastSeq(store);
      this.hub.rewind(end);
      lastSeen = resume ?? end;
      await fill(end);
      live = true;
      for (const b of pending.splice(0)) enqueue(b);
      catchUp();
    } catch (err) {
      req.log.warn({ err }, 'event stream failed to start');
      cleanup();
      raw.destroy();
    }
  }
}

/**
 * The resume point of a stream: `Last-Event-ID` (a browser's EventSource sends it on reconnect)
 * wins over `?after=`; neither → undefined (start at the current end). Both are read by the one
 * cursor parser (`parseCursor`: decimal digits, at most `Number.MAX_SAFE_INTEGER`), so they accept
 * the same values; a bad one is 400 naming `/headers/last-event-id` or `/after`.
 */
export function resumePoint(header: string | string[] | undefined, after: string | undefined): number | undefined {
  const h = Array.isArray(header) ? header[0] : header;
  if (h !== undefined && h.trim() !== '') return parseCursor(h.trim(), '/headers/last-event-id');
  return parseCursor(after, '/after');
}
