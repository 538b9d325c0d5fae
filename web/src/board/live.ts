import { createParser, type EventSourceMessage } from 'eventsource-parser';
import type { Api } from '../api/client.js';
import { EVENTS_STREAM_PATH } from '../api/endpoints.js';

/** How often the board summary is re-read while no event stream is open (milliseconds). */
export const POLL_MS = 5_000;

/**
 * The refresh period in force: {@link POLL_MS}, unless `localStorage['board.pollMs']` holds
 * another number of milliseconds (≥ 1000; a developer and test setting, docs/web.md).
 */
export function pollInterval(): number {
  const v = Number((globalThis as { localStorage?: { getItem(k: string): string | null } }).localStorage?.getItem('board.pollMs'));
  return Number.isFinite(v) && v >= 1000 ? v : POLL_MS;
}

/** One event envelope of the stream (`{id, seq, type, occurred_at, actor, task_id?, board_id?, data}`). */
export interface BoardEvent {
  id?: string;
  seq?: number;
  type: string;
  board_id?: string;
  task_id?: string;
}

/**
 * Opens the live event stream (`GET /api/v1/events/stream`) with the bearer token in a
 * header, which EventSource cannot send, so it is read with fetch streaming and framed by
 * `eventsource-parser`. Resolves `'absent'` when the gateway has no stream (404, or not
 * `text/event-stream`), `'failed'` when it could not be opened, and `'ended'` when an open stream
 * closed; `onOpen` runs once it is open, `onEvent` per event. `lastEventId` resumes (Last-Event-ID).
 */
export async function openEventStream(
  api: Api,
  opts: { boardId: string; lastEventId?: string; signal: AbortSignal; onOpen: () => void; onEvent: (e: BoardEvent, id?: string) => void },
): Promise<'absent' | 'failed' | 'ended'> {
  let res: Response;
  try {
    const auth = await api.authorization();
    if (!auth) return 'failed';
    const headers: Record<string, string> = { authorization: auth, accept: 'text/event-stream' };
    if (opts.lastEventId) headers['last-event-id'] = opts.lastEventId;
    res = await fetch(api.url(`${EVENTS_STREAM_PATH}?board_id=${encodeURIComponent(opts.boardId)}`), { headers, signal: opts.signal });
  } catch {
    return 'failed';
  }
  if (res.status === 404 || res.status === 405) return 'absent';
  if (!res.ok || !res.body || !(res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    await res.body?.cancel().catch(() => {});
    return res.ok ? 'absent' : 'failed';
  }
  opts.onOpen();
  const parser = createParser({
    onEvent(msg: EventSourceMessage) {
      try {
        const env = JSON.parse(msg.data) as BoardEvent;
        opts.onEvent({ ...env, type: msg.event ?? env.type }, msg.id);
      } catch {
        /* a frame that is not an envelope is ignored */
      }
    },
  });
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      parser.feed(value);
    }
  } catch {
    /* aborted or dropped: the caller falls back to polling and retries */
  }
  return 'ended';
}

/** Waits `ms`, or less when `signal` aborts. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(t);
      resolve();
    });
  });
}
