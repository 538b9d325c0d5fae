import { useDroppable } from '@dnd-kit/core';
import { useEffect, useLayoutEffect, useRef, useState, type KeyboardEvent, type ReactNode } from 'react';
import { createPortal } from 'react-dom';
import type { BoardColumn, Card, Summary } from '../api/types.js';
import { useCardDrag } from './drag.js';
import { Badge, fieldBadges, useBoardFields } from './customFields.js';
import { cardBadges, initials, leaseHolder, liveLease, menuPosition, timeLeft, wipState, type ColumnState, type MovePreview } from './state.js';
import { useNow } from './useNow.js';

interface LaneProps {
  column: BoardColumn;
  state: ColumnState;
  summary: Summary['columns'][number] | undefined;
  writable: boolean;
  order: readonly BoardColumn[];
  preview: MovePreview | null;
  dragging: string | null;
  /** A filter or search narrows the cards shown. */
  filtered?: boolean;
  /** User id → user name of the board's people (the members read), for the assignee badge. */
  people?: ReadonlyMap<string, string>;
  onOpen: (cardId: string) => void;
  onCreate: (columnId: string, title: string) => Promise<boolean>;
  onLoadMore: (columnId: string) => void;
  onMove: (cardId: string, from: string, to: string) => void;
  onPreview: (cardId: string, from: string, to: string | undefined) => void;
  onReadOnlyMove: () => void;
}

/** One column as a lane: header (name, count, WIP state), cards, "load more", card create; a drop target. */
export function Lane(p: LaneProps) {
  const { column, state } = p;
  const { setNodeRef, isOver } = useDroppable({ id: column.id, disabled: !p.writable });
  const limit = p.summary?.wip_limit ?? column.wip_limit;
  // Unfiltered, the lane's own total is the column's cards (sprint tasks left out); with a filter
  // the summary's count of the whole column is the one the WIP limit is about.
  const whole = p.filtered ? (p.summary?.total ?? state.total) : state.total;
  const wip = wipState(whole, limit);
  const headingId = `lane-${column.id}`;
  /** Before the column's first read: a skeleton, not an empty lane with a count of 0. */
  const firstRead = state.loading && state.pages === 0;
  const blocks = column.wip_policy === 'block';
  const wipText = wip === 'over' ? `over WIP limit ${limit}` : wip === 'at' ? (blocks ? 'full: takes no more cards' : `at WIP limit ${limit}`) : '';

  return (
    <section
      ref={setNodeRef}
      role="listitem"
      className={`lane${isOver ? ' over' : ''}${wip === 'over' ? ' lane-over-limit' : ''}`}
      aria-labelledby={headingId}
      data-column-id={column.id}
    >
      <header className="lane-head">
        <h2 id={headingId}>{column.name}</h2>
        {firstRead ? (
          <span className="count" aria-label="cards loading" data-testid="lane-count-loading">
            …
          </span>
        ) : (
          <span className="count" aria-label={countLabel(state.total, limit, p.filtered ? whole : undefined)}>
            {/* under a filter the WIP figure is the whole column's count, and the shown cards are said apart ("2 / 2, 0 shown") */}
            <span data-testid="lane-count">{p.filtered && limit !== undefined ? whole : state.total}</span>
            {limit !== undefined && (
              <span className="limit" data-testid="lane-limit" title={blocks ? 'WIP limit: a full lane refuses more cards' : 'WIP limit: a lane over it is marked'}>
                {' / '}
                {limit}
              </span>
            )}
            {p.filtered && limit !== undefined && <span data-testid="lane-shown">, {state.total} shown</span>}
          </span>
        )}
        {wipText && (
          <span className={`wip wip-${wip}`} data-testid="lane-wip">
            {wipText}
          </span>
        )}
      </header>
      {p.dragging && p.preview && p.preview.to === column.id && (
        <p className={`drop-preview${p.preview.ok ? '' : ' bad'}`} role="status">
          {p.preview.text}
        </p>
      )}
      {state.error && <p className="error">{state.error}</p>}
      <ul className="cards" aria-label={`Cards in ${column.name}`} aria-busy={state.loading}>
        {state.cards.map((card) => (
          <CardItem key={card.id} card={card} columnId={column.id} {...p} />
        ))}
      </ul>
      {firstRead && <CardSkeletons />}
      {!state.loading && state.total === 0 && p.filtered && <p className="muted lane-empty">No card here matches the filter.</p>}
      {state.cards.length < state.total && (
        <button type="button" className="load-more" onClick={() => p.onLoadMore(column.id)}>
          Load more ({state.cards.length} of {state.total})
        </button>
      )}
      {p.writable && <CreateCard columnName={column.name} onCreate={(t) => p.onCreate(column.id, t)} />}
    </section>
  );
}

/**
 * The lane count's accessible name: "3 cards", "2 cards of a WIP limit of 2", or under a filter
 * "2 cards of a WIP limit of 2, 0 shown" (`whole` is the column's count without the filter).
 */
function countLabel(shown: number, limit: number | undefined, whole: number | undefined): string {
  if (limit === undefined) return `${shown} cards`;
  if (whole === undefined) return `${shown} cards of a WIP limit of ${limit}`;
  return `${whole} cards of a WIP limit of ${limit}, ${shown} shown`;
}

/** Grey placeholders of cards while a lane is read the first time (hidden from screen readers; the list is `aria-busy`). */
export function CardSkeletons({ count = 3 }: { count?: number }) {
  return (
    <div className="skeletons" aria-hidden="true" data-testid="card-skeleton">
      {Array.from({ length: count }, (_, i) => (
        <div key={i} className="card skeleton">
          <span className="bar" />
          <span className="bar short" />
        </div>
      ))}
    </div>
  );
}

function CreateCard({ columnName, onCreate }: { columnName: string; onCreate: (title: string) => Promise<boolean> }) {
  const [open, setOpen] = useState(false);
  const [title, setTitle] = useState('');
  if (!open) {
    return (
      <button type="button" className="add-card" onClick={() => setOpen(true)}>
        + Add a card
      </button>
    );
  }
  return (
    <form
      className="create-card"
      onSubmit={async (e) => {
        e.preventDefault();
        if (title.trim() && (await onCreate(title.trim()))) setTitle('');
      }}
    >
      <label>
        <span className="sr-only">Title of a new card in {columnName}</span>
        <input
          name="card-title"
          autoFocus
          placeholder="Card title"
          value={title}
          maxLength={500}
          onChange={(e) => setTitle(e.target.value)}
          onKeyDown={(e) => e.key === 'Escape' && setOpen(false)}
        />
      </label>
      <button type="submit">Add</button>
      <button type="button" className="secondary" onClick={() => setOpen(false)}>
        Cancel
      </button>
    </form>
  );
}

/** A card: drag handle (pointer and keyboard drag), title (opens the detail), move menu (also key M). */
function CardItem(p: LaneProps & { card: Card; columnId: string }) {
  const { card, columnId } = p;
  // No transform on the card itself: while it is dragged a copy follows the pointer in the
  // DragOverlay (outside the lane, whose overflow would clip it) and this one stays as a placeholder.
  const drag = useCardDrag(card, columnId, p.writable);
  const [menu, setMenu] = useState(false);
  const moveBtn = useRef<HTMLButtonElement>(null);

  const onKeyDown = (e: KeyboardEvent) => {
    if ((e.key === 'm' || e.key === 'M') && !e.ctrlKey && !e.metaKey && !e.altKey) {
      e.preventDefault();
      if (p.writable) setMenu(true);
      else p.onReadOnlyMove();
    }
  };

  return (
    <li
      ref={drag.ref}
      className={`card${drag.isDragging ? ' dragging' : ''}`}
      data-card-id={card.id}
      aria-label={card.title}
      onKeyDown={onKeyDown}
      onPointerDown={drag.onPointerDown}
    >
      <CardFace card={card} {...(p.people ? { people: p.people } : {})} handle={drag.handle} onOpen={() => p.onOpen(card.id)} />
      {p.writable && (
        <button
          type="button"
          className="move-btn"
          ref={moveBtn}
          aria-haspopup="menu"
          aria-expanded={menu}
          aria-label={`Move “${card.title}” (M)`}
          onClick={() => setMenu((m) => !m)}
        >
          Move…
        </button>
      )}
      {menu && (
        <MoveMenu
          anchor={moveBtn.current ?? undefined}
          card={card}
          from={columnId}
          order={p.order}
          preview={p.preview}
          onPreview={(to) => p.onPreview(card.id, columnId, to)}
          onPick={(to) => {
            setMenu(false);
            p.onMove(card.id, columnId, to);
          }}
          onClose={() => {
            setMenu(false);
            p.onPreview(card.id, columnId, undefined);
          }}
        />
      )}
    </li>
  );
}

/** The keyboard move menu: other columns as menu items; focusing one previews the move (dry run). */
function MoveMenu(p: {
  anchor: HTMLElement | undefined;
  card: Card;
  from: string;
  order: readonly BoardColumn[];
  preview: MovePreview | null;
  onPreview: (to: string) => void;
  onPick: (to: string) => void;
  onClose: () => void;
}) {
  const ref = useRef<HTMLDivElement>(null);
  const targets = p.order.filter((c) => c.id !== p.from);
  const [pos, setPos] = useState<{ top: number; left: number } | null>(null);
  // Fixed to the viewport (rendered in document.body, so no lane clips it), below the Move button,
  // or above it when it would pass the bottom edge, and always inside the viewport.
  useLayoutEffect(() => {
    const place = () => {
      const m = ref.current;
      if (!m) return;
      const a = (p.anchor?.isConnected ? p.anchor : m).getBoundingClientRect();
      setPos(menuPosition(a, { width: m.offsetWidth, height: m.offsetHeight }, { width: window.innerWidth, height: window.innerHeight }));
    };
    place();
    window.addEventListener('resize', place);
    window.addEventListener('scroll', place, true);
    return () => {
      window.removeEventListener('resize', place);
      window.removeEventListener('scroll', place, true);
    };
  }, [p.anchor, p.preview]);
  useEffect(() => {
    ref.current?.querySelector<HTMLButtonElement>('[role="menuitem"]')?.focus();
  }, []);
  const onKeyDown = (e: KeyboardEvent) => {
    const items = Array.from(ref.current?.querySelectorAll<HTMLButtonElement>('[role="menuitem"]') ?? []);
    const i = items.indexOf(document.activeElement as HTMLButtonElement);
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      e.preventDefault();
      items[(i + (e.key === 'ArrowDown' ? 1 : items.length - 1)) % items.length]?.focus();
    } else if (e.key === 'Escape') {
      e.preventDefault();
      e.stopPropagation();
      p.onClose();
    }
    e.stopPropagation();
  };
  return createPortal(
    <div
      ref={ref}
      className="move-menu"
      role="menu"
      aria-label={`Move “${p.card.title}” to`}
      onKeyDown={onKeyDown}
      style={pos ? { top: pos.top, left: pos.left } : { top: 0, left: 0, opacity: 0 }}
    >
      {targets.map((c) => (
        <button
          key={c.id}
          type="button"
          role="menuitem"
          onFocus={() => p.onPreview(c.id)}
          onMouseEnter={() => p.onPreview(c.id)}
          onClick={() => p.onPick(c.id)}
        >
          {c.name}
        </button>
      ))}
      {p.preview && p.preview.cardId === p.card.id && (
        <p className={`menu-preview${p.preview.ok ? '' : ' bad'}`} role="status">
          {p.preview.text}
        </p>
      )}
      <button type="button" className="secondary" onClick={p.onClose}>
        Cancel
      </button>
    </div>,
    document.body,
  );
}

/**
 * What a card shows (on the board and in the drag overlay): drag handle, title (opens the
 * detail), tags, priority, points, the assignee's initials (full name in the tooltip), a `claimed`
 * badge while a lease is live (holder and expiry in the tooltip) and status. The board's custom
 * fields show as badges by name (a select's option label in its color); a defined `cf.priority`
 * replaces the plain priority badge.
 */
export function CardFace(p: { card: Card; people?: ReadonlyMap<string, string>; handle?: ReactNode; onOpen?: () => void }) {
  const { card } = p;
  const badges = cardBadges(card);
  const { fields } = useBoardFields();
  const custom = fieldBadges(card.metadata as Record<string, unknown>, fields, p.people);
  const priorityDefined = fields.some((f) => f.key === 'cf.priority');
  // an assignee who is not on the board's people list is named so, never by the raw user id
  const whoName = card.assignee ? p.people?.get(card.assignee) : undefined;
  const who = card.assignee ? (whoName ?? 'someone not on this board') : undefined;
  const now = useNow(card.lease ? 15_000 : null);
  const lease = liveLease(card, now);
  const leaseText = lease && `Claimed by ${leaseHolder(lease, p.people)}, ${timeLeft(lease.expires_at, now)}`;
  return (
    <>
      <div className="card-top">
        {p.handle}
        {p.onOpen ? (
          <button type="button" className="card-title" onClick={p.onOpen}>
            {card.title}
          </button>
        ) : (
          <span className="card-title">{card.title}</span>
        )}
      </div>
      <div className="card-meta">
        {card.tags.map((t) => (
          <span key={t} className="tag">
            {t}
          </span>
        ))}
        {!priorityDefined && badges.priority !== undefined && <span className="badge prio" title="cf.priority">P{badges.priority}</span>}
        {custom.map((b, i) => (
          <Badge key={`${b.key}-${i}`} badge={b} />
        ))}
        {badges.points !== undefined && <span className="badge pts" title="app.points">{badges.points} pts</span>}
        {who !== undefined && (
          <span className="assignee" title={`Assigned to ${who}`} aria-label={`Assigned to ${who}`} data-testid="assignee">
            {whoName !== undefined ? initials(whoName) : '?'}
          </span>
        )}
        {lease !== undefined && (
          <span className="badge lease" title={`${leaseText} (until ${new Date(lease.expires_at).toLocaleTimeString()})`} aria-label={leaseText} data-testid="lease">
            {lease.holder_token_name !== undefined ? `claimed by ${lease.holder_token_name}` : 'claimed'}
          </span>
        )}
        <span className="status" title="status">
          {card.status}
        </span>
      </div>
    </>
  );
}
