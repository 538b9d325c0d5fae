import { useEffect, useRef, useState, type MutableRefObject } from 'react';
import type { Api } from '../api/client.js';
import { openEventStream, pollInterval, sleep, type BoardEvent } from './live.js';
import { summarySignature } from './state.js';

/** What the live loop needs from the page. */
export interface LiveOptions {
  api: Api;
  /** The board followed; `null` while it is not read yet (nothing runs). */
  boardId: string | null;
  /** The sprint choice the summary is read with (`active`, `none` or a sprint id). */
  sprint: string;
  /** The fingerprint of the summary last read; a different one reloads the columns. */
  signatureRef: MutableRefObject<string | null>;
  /** Moves in flight: no refresh runs while one is (it would undo the optimistic move on screen). */
  moveInFlight: MutableRefObject<number>;
  /** Whether an event concerns what the page shows (besides the board's own and sprint events). */
  shows: (e: BoardEvent) => boolean;
  /** Reloads the columns (debounced 250 ms after the last relevant event). */
  refresh: () => void;
}

/**
 * The board's live updates (docs/web.md "Live"): the event stream when the gateway has one
 * (resumed with Last-Event-ID, retried after 30 s, or 2 s after a clean end), and the summary
 * re-read every {@link pollInterval} while no stream is open (every third tick while one is),
 * never while a move is in flight or the tab is hidden. Returns the mode in force.
 */
export function useLiveUpdates(o: LiveOptions): 'polling' | 'stream' {
  const [live, setLive] = useState<'polling' | 'stream'>('polling');
  // The callbacks change with every render; the loop reads the latest through a ref.
  const latest = useRef(o);
  latest.current = o;
  const { api, boardId, sprint } = o;

  useEffect(() => {
    if (!boardId) return;
    const ctl = new AbortController();
    let streaming = false;
    let pending: ReturnType<typeof setTimeout> | undefined;
    const soon = () => {
      clearTimeout(pending);
      pending = setTimeout(() => {
        if (latest.current.moveInFlight.current === 0) latest.current.refresh();
      }, 250);
    };
    let ticks = 0;
    const poll = setInterval(async () => {
      ticks++;
      // While the stream is open the summary is still checked every 3rd tick: a safety net for
      // anything the stream did not say (it never costs more than one small read per 15 s).
      if ((streaming && ticks % 3 !== 0) || latest.current.moveInFlight.current > 0 || document.hidden) return;
      try {
        const sum = await api.summary(boardId, sprint, ctl.signal);
        const sig = summarySignature(sum);
        const { signatureRef } = latest.current;
        if (sig !== signatureRef.current) {
          signatureRef.current = sig;
          latest.current.refresh();
        }
      } catch {
        /* the next tick tries again */
      }
    }, pollInterval());
    (async () => {
      let lastId: string | undefined;
      while (!ctl.signal.aborted) {
        const outcome = await openEventStream(api, {
          boardId,
          ...(lastId ? { lastEventId: lastId } : {}),
          signal: ctl.signal,
          onOpen: () => {
            streaming = true;
            setLive('stream');
          },
          onEvent: (e: BoardEvent, id?: string) => {
            if (id) lastId = id;
            if (e.board_id === boardId || e.type.startsWith('sprint.') || latest.current.shows(e)) soon();
          },
        });
        streaming = false;
        setLive('polling');
        if (outcome === 'absent') return; // this gateway has no stream: polling only
        if (outcome === 'ended') soon(); // catch up on what the gap may have missed
        await sleep(outcome === 'ended' ? 2_000 : 30_000, ctl.signal);
      }
    })();
    return () => {
      ctl.abort();
      clearInterval(poll);
      clearTimeout(pending);
    };
  }, [api, boardId, sprint]);

  return live;
}
