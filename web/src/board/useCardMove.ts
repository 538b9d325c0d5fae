import type { Announcements, DragEndEvent, DragOverEvent, DragStartEvent } from '@dnd-kit/core';
import { useCallback, useRef, useState, type MutableRefObject } from 'react';
import { ApiError, errorText, type Api } from '../api/client.js';
import type { Board } from '../api/types.js';
import { useLaneDrag, type LaneDrag } from './drag.js';
import type { BoardColumns } from './useBoardColumns.js';
import { applyOptimisticMove, columnOf, describeActions, restoreColumns, staleMoveText, wipRefusalOf, wipRefusalText, type MovePreview } from './state.js';

/** What the move hook reports to the page: a message for the message bar and the live region. */
export interface MoveReport {
  text: string;
  kind: 'error' | 'info';
}

/** What {@link useCardMove} gives the board page. */
export interface CardMove {
  /** The dry-run preview shown in the lane a card is over (or focused in the move menu). */
  preview: MovePreview | null;
  /** The card being dragged, if any. */
  dragging: string | null;
  /** Moves in flight (the live loop holds its refreshes meanwhile). */
  moveInFlight: MutableRefObject<number>;
  /** Previews a move with `dry_run: true` (cached per card, source and target until a move lands). */
  showPreview: (cardId: string, from: string, to: string | undefined) => void;
  /** The optimistic move, confirmed by the API or rolled back (a 409 reloads the columns). */
  performMove: (cardId: string, from: string, to: string) => Promise<void>;
  /** Forgets the cached previews (the columns changed). */
  forgetPreviews: () => void;
  /** Everything the page's `DndContext` takes: sensors, collision, handlers and announcements. */
  dnd: Pick<LaneDrag, 'sensors'> & {
    collisionDetection: LaneDrag['collision'];
    onDragStart: (e: DragStartEvent) => void;
    onDragOver: (e: DragOverEvent) => void;
    onDragEnd: (e: DragEndEvent) => void;
    onDragCancel: () => void;
    accessibility: { announcements: Announcements; screenReaderInstructions: { draggable: string } };
  };
}

/**
 * Moving cards between lanes (docs/web.md "Move a card"): dry-run previews, the optimistic move
 * shown at once and then confirmed, the exact rollback on any error (a full column of policy
 * `block` is named with its count and limit; another 409 also says the card's current status and
 * reloads the columns; a 403 says the board is read-only), and dnd-kit's
 * pointer and keyboard drag with its screen-reader announcements.
 */
export function useCardMove(o: {
  api: Api;
  board: Board | null;
  writable: boolean;
  cols: BoardColumns;
  nameOf: (columnId: string) => string;
  report: (r: MoveReport) => void;
}): CardMove {
  const { api, board, writable, cols, nameOf, report } = o;
  const [preview, setPreview] = useState<MovePreview | null>(null);
  const [dragging, setDragging] = useState<string | null>(null);
  const moveInFlight = useRef(0);
  const previewCache = useRef(new Map<string, MovePreview>());
  /**
   * Cards a dry run found no longer in the column the page shows them in (`<cardId>|<from>` →
   * the status the server gave): further previews and the drop ask the server nothing more, so
   * one drag of a stale card costs one 409, and the drop says it once and reloads.
   */
  const stale = useRef(new Map<string, string | undefined>());
  const { columnsRef, setColumns, reload } = cols;
  const boardId = board?.id;

  const dryRun = useCallback(
    async (cardId: string, from: string, to: string): Promise<MovePreview> => {
      const key = `${cardId}|${from}|${to}`;
      const cached = previewCache.current.get(key);
      if (cached) return cached;
      const staleKey = `${cardId}|${from}`;
      if (stale.current.has(staleKey)) return { cardId, to, ok: false, text: staleText(stale.current.get(staleKey)) };
      let p: MovePreview;
      try {
        const r = await api.moveCard(boardId!, cardId, from, to, true);
        p = { cardId, to, ok: true, text: `Moving to ${nameOf(to)} ${describeActions(r.applied_actions)}.` };
      } catch (e) {
        const full = e instanceof ApiError ? wipRefusalOf(e.code, e.body.details) : undefined;
        if (!full && e instanceof ApiError && e.status === 409) {
          stale.current.set(staleKey, e.body.task?.status);
          return { cardId, to, ok: false, text: staleText(e.body.task?.status) };
        }
        p = {
          cardId,
          to,
          ok: false,
          text: full
            ? `Cannot move to ${nameOf(to)}: it is full (${full.count === 1 ? '1 card' : `${full.count} cards`}, WIP limit ${full.wip_limit}).`
            : `Cannot move to ${nameOf(to)}: ${errorText(e)}`,
        };
        // an outage is not an answer about this move: ask again next time
        if (e instanceof ApiError && e.code === 'NETWORK') return p;
      }
      previewCache.current.set(key, p);
      return p;
    },
    [api, boardId, nameOf],
  );

  const showPreview = useCallback(
    (cardId: string, from: string, to: string | undefined) => {
      if (!to || to === from) return setPreview(null);
      setPreview({ cardId, to, ok: true, text: `Checking a move to ${nameOf(to)}…` });
      void dryRun(cardId, from, to).then((p) => setPreview((cur) => (cur && cur.cardId === cardId && cur.to === to ? p : cur)));
    },
    [dryRun, nameOf],
  );

  const performMove = useCallback(
    async (cardId: string, from: string, to: string) => {
      if (!board || from === to) return;
      setPreview(null);
      if (!writable) {
        report({ text: 'This board is read-only for you: cards cannot be moved.', kind: 'error' });
        return;
      }
      const before = columnsRef.current;
      const card = before[from]?.cards.find((c) => c.id === cardId);
      if (!card) return;
      const staleKey = `${cardId}|${from}`;
      if (stale.current.has(staleKey)) {
        // a dry run already heard that the card left this column: say it once, show where it is
        const status = stale.current.get(staleKey);
        stale.current.delete(staleKey);
        report({ text: staleMoveText(card.title, nameOf(from), status), kind: 'error' });
        await reload(board).catch(() => {});
        return;
      }
      setColumns((c) => applyOptimisticMove(c, cardId, from, to));
      moveInFlight.current++;
      try {
        const r = await api.moveCard(board.id, cardId, from, to);
        setColumns((c) => {
          const dst = c[to];
          if (!dst) return c;
          const cards = dst.cards.map((x) => (x.id === cardId ? { ...x, status: r.task.status, tags: r.task.tags, title: r.task.title } : x));
          return { ...c, [to]: { ...dst, cards } };
        });
        const over = r.wip?.over_limit ? ` ${nameOf(to)} is now over its WIP limit (${r.wip.count} / ${r.wip.wip_limit}).` : '';
        report({ text: `Moved “${card.title}” from ${nameOf(from)} to ${nameOf(to)}: ${describeActions(r.applied_actions)}.${over}`, kind: 'info' });
        previewCache.current.clear();
        moveInFlight.current--;
        void reload(board).catch(() => {});
      } catch (e) {
        moveInFlight.current--;
        setColumns((c) => restoreColumns(c, before, [from, to]));
        previewCache.current.clear();
        let text: string;
        const full = e instanceof ApiError ? wipRefusalOf(e.code, e.body.details) : undefined;
        if (full) {
          // A full `block` column: nothing changed elsewhere, so the rollback alone is the truth.
          text = wipRefusalText(card.title, nameOf(full.column_id), full);
        } else if (e instanceof ApiError && e.status === 409) {
          text = staleMoveText(card.title, nameOf(from), e.body.task?.status);
          stale.current.delete(`${cardId}|${from}`);
          await reload(board).catch(() => {});
        } else if (e instanceof ApiError && e.status === 403) {
          text = `“${card.title}” was not moved: you may not move cards on this board.`;
        } else if (e instanceof ApiError && e.code === 'NETWORK') {
          // not queued: the card is back where it was, and the user moves it again once the server is back
          text = `“${card.title}” was not moved: the server cannot be reached, so it stays in ${nameOf(from)}. Move it again once the server is back.`;
        } else {
          text = `“${card.title}” was not moved: ${errorText(e)}`;
        }
        report({ text, kind: 'error' });
      }
    },
    [api, board, writable, nameOf, reload, report, columnsRef, setColumns],
  );

  // ---- drag and drop (pointer and keyboard) ---------------------------------------------------------
  const { sensors, collision, keyboardTarget } = useLaneDrag(board?.columns.map((c) => c.id) ?? [], 48);
  const cardTitle = (id: string | number) => {
    const col = columnOf(columnsRef.current, String(id));
    return col ? (columnsRef.current[col]!.cards.find((c) => c.id === String(id))?.title ?? 'card') : 'card';
  };
  const dnd: CardMove['dnd'] = {
    sensors,
    collisionDetection: collision,
    onDragStart: (e) => {
      keyboardTarget.current = null;
      setDragging(String(e.active.id));
      setPreview(null);
    },
    onDragOver: (e) => {
      const from = e.active.data.current?.from as string;
      showPreview(String(e.active.id), from, e.over ? String(e.over.id) : undefined);
    },
    onDragEnd: (e) => {
      keyboardTarget.current = null;
      setDragging(null);
      const from = e.active.data.current?.from as string;
      if (e.over && String(e.over.id) !== from) void performMove(String(e.active.id), from, String(e.over.id));
      else setPreview(null);
    },
    onDragCancel: () => {
      setDragging(null);
      setPreview(null);
    },
    accessibility: {
      announcements: {
        onDragStart: ({ active }) => `Picked up “${cardTitle(active.id)}”. Use the arrow keys to choose a column, space to drop, escape to cancel.`,
        onDragOver: ({ active, over }) => (over ? `“${cardTitle(active.id)}” is over ${nameOf(String(over.id))}.` : `“${cardTitle(active.id)}” is over no column.`),
        onDragEnd: ({ active, over }) => {
          if (!over) return 'Dropped outside any column.';
          // a drop the dry run already refused is not announced as a drop (the message bar says why)
          const from = active.data.current?.from as string;
          const refused = previewCache.current.get(`${String(active.id)}|${from}|${String(over.id)}`);
          if (stale.current.has(`${String(active.id)}|${from}`)) return `“${cardTitle(active.id)}” was not moved: it changed elsewhere.`;
          if (refused && !refused.ok) return `“${cardTitle(active.id)}” was not moved to ${nameOf(String(over.id))}. ${refused.text}`;
          return `“${cardTitle(active.id)}” dropped on ${nameOf(String(over.id))}.`;
        },
        onDragCancel: ({ active }) => `Move of “${cardTitle(active.id)}” cancelled.`,
      },
      screenReaderInstructions: {
        draggable: 'To move this card, press space, then the arrow keys to choose a column, and space again to drop it. Press M for the move menu.',
      },
    },
  };

  const forgetPreviews = useCallback(() => {
    previewCache.current.clear();
    stale.current.clear();
  }, []);
  return { preview, dragging, moveInFlight, showPreview, performMove, forgetPreviews, dnd };
}

/** The preview of a card a dry run found changed elsewhere (no longer in the column shown). */
function staleText(status: string | undefined): string {
  return `This card changed elsewhere${status ? ` (its status is now “${status}”)` : ''}; drop it to see where it is now.`;
}

