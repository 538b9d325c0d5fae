import {
  DndContext, DragOverlay, useDroppable,
  type Announcements, type DragEndEvent,
} from '@dnd-kit/core';
import { useCallback, useEffect, useMemo, useRef, useState, type FormEvent, type ReactNode } from 'react';
import { createPortal } from 'react-dom';
import { ApiError, errorText, type Api } from '../api/client.js';
import type { Board, SprintSummary, Task, Velocity } from '../api/types.js';
import { useCardDrag, useLaneDrag } from './drag.js';
import { CloseSprintDialog } from './CloseSprintDialog.js';
import { Notice, type NoticeMessage, PageError } from './Notice.js';
import { StartSprintDialog } from './StartSprintDialog.js';
import { BACKLOG, planCards, planningQuery, pointsOf, sumPoints } from './state.js';

/**
 * The backlog and planning view of a board (`/boards/<id>/plan`): the board's cards in no open
 * sprint (the backlog), each open sprint with its cards and committed points, and the mean velocity
 * of the last 3 closed sprints as a capacity hint. Cards move between the backlog and a sprint by
 * drag and drop (mouse or keyboard) as ONE conditional metadata write (`If-Match`: a 412 refreshes
 * the card and says so); points are edited inline; sprints are created and started here.
 */
export function PlanningPage({ api, boardId, navigate }: { api: Api; boardId: string; navigate: (path: string) => void }) {
  const [board, setBoard] = useState<Board | null>(null);
  const [sprints, setSprints] = useState<SprintSummary[]>([]);
  const [cards, setCards] = useState<Task[]>([]);
  const [velocity, setVelocity] = useState<Velocity | null>(null);
  const [notice, setNotice] = useState<NoticeMessage | null>(null);
  const [loadError, setLoadError] = useState<string | null>(null);
  const [dragging, setDragging] = useState<string | null>(null);
  const [busy, setBusy] = useState(0);
  /** A start asked while another sprint runs: confirming, or closing the running one first. */
  const [starting, setStarting] = useState<{ sprint: SprintSummary; running: SprintSummary; closeFirst: boolean } | null>(null);
  const cardsRef = useRef(cards);
  cardsRef.current = cards;

  const writable = board !== null && (board.is_owner || board.permission === 'rw');
  const open = useMemo(() => sprints.filter((s) => s.state === 'open'), [sprints]);
  const groups = useMemo(() => [BACKLOG, ...open.map((s) => s.id)], [open]);
  const byGroup = useMemo(() => planCards(cards, open.map((s) => s.id)), [cards, open]);
  const fail = (e: unknown) => setNotice({ text: errorText(e), kind: 'error' });

  const load = useCallback(async () => {
    setBusy((n) => n + 1);
    try {
      const [b, list, v] = await Promise.all([api.getBoard(boardId), api.listSprints(boardId, 'all'), api.velocity(boardId, 3)]);
      const page = await api.boardQuery(b.id, planningQuery(list.filter((s) => s.state === 'open').map((s) => s.id)));
      setBoard(b);
      setSprints(list);
      setVelocity(v);
      setCards(page.data);
    } finally {
      setBusy((n) => n - 1);
    }
  }, [api, boardId]);

  useEffect(() => {
    load().catch((e: unknown) => setLoadError(errorText(e)));
  }, [load]);

  const groupName = (g: string) => (g === BACKLOG ? 'the backlog' : `sprint “${open.find((s) => s.id === g)?.title ?? g}”`);
  const titleOf = (id: string | number) => cardsRef.current.find((c) => c.id === String(id))?.title ?? 'card';
  const groupOf = (c: Task) => {
    const s = (c.metadata as Record<string, unknown>)['app.sprint'];
    return typeof s === 'string' && groups.includes(s) ? s : BACKLOG;
  };

  /** Replaces one card in the list (after a write, or the 412's re-read). */
  const putCard = (t: Task) => setCards((cs) => cs.map((c) => (c.id === t.id ? { ...c, ...t } : c)));

  /** A 412: the card changed since it was read; re-read it, show it as it is now, and say so. */
  async function conflict(card: Task, what: string) {
    try {
      putCard(await api.getTask(card.id));
    } catch {
      /* the next load shows it */
    }
    setNotice({ text: `“${card.title}” changed elsewhere, so ${what} was not saved. The card was refreshed; try again.`, kind: 'error' });
  }

  async function plan(cardId: string, to: string) {
    const card = cardsRef.current.find((c) => c.id === cardId);
    if (!card || groupOf(card) === to) return;
    if (!writable) return setNotice({ text: 'This board is read-only for you: cards cannot be planned.', kind: 'error' });
    try {
      const t = to === BACKLOG ? await api.deleteMetadata(card.id, 'app.sprint', card.version) : await api.setMetadata(card.id, 'app.sprint', to, card.version);
      putCard(t);
      setNotice({ text: `Moved “${card.title}” to ${groupName(to)}.`, kind: 'info' });
    } catch (e) {
      if (e instanceof ApiError && e.status === 412) await conflict(card, 'its move');
      else fail(e);
    }
  }

  async function setPoints(card: Task, text: string) {
    const value = text.trim() === '' ? undefined : Number(text);
    if (value !== undefined && (!Number.isFinite(value) || value < 0)) {
      return setNotice({ text: `Points of “${card.title}” must be a number ≥ 0.`, kind: 'error' });
    }
    if (value === pointsOf(card)) return;
    try {
      const t = value === undefined ? await api.deleteMetadata(card.id, 'app.points', card.version) : await api.setMetadata(card.id, 'app.points', value, card.version);
      putCard(t);
      setNotice({ text: `“${card.title}”: ${value === undefined ? 'no points' : `${value} points`}.`, kind: 'info' });
    } catch (e) {
      if (e instanceof ApiError && e.status === 412) await conflict(card, 'the points');
      else fail(e);
    }
  }

  /** Starts `s`, asking first when another sprint of the board runs. */
  function askStart(s: SprintSummary) {
    const running = sprints.find((x) => x.active && x.id !== s.id);
    if (running) setStarting({ sprint: s, running, closeFirst: false });
    else void start(s);
  }

  async function start(s: SprintSummary) {
    try {
      await api.startSprint(s.id);
      setNotice({ text: `Sprint “${s.title}” started.`, kind: 'info' });
      await load();
    } catch (e) {
      fail(e);
    }
  }

  // ---- drag and drop: mouse, and keyboard (arrows jump group by group) --------------------------------
  const { sensors, collision, keyboardTarget } = useLaneDrag(groups, 8);
  const announcements: Announcements = {
    onDragStart: ({ active }) => `Picked up “${titleOf(active.id)}”. Use the arrow keys to choose the backlog or a sprint, space to drop.`,
    onDragOver: ({ active, over }) => (over ? `“${titleOf(active.id)}” is over ${groupName(String(over.id))}.` : `“${titleOf(active.id)}” is over nothing.`),
    onDragEnd: ({ active, over }) => (over ? `“${titleOf(active.id)}” dropped on ${groupName(String(over.id))}.` : 'Dropped outside.'),
    onDragCancel: ({ active }) => `Planning of “${titleOf(active.id)}” cancelled.`,
  };
  const onDragEnd = (e: DragEndEvent) => {
    keyboardTarget.current = null;
    setDragging(null);
    if (e.over) void plan(String(e.active.id), String(e.over.id));
  };

  if (loadError) return <PageError className="plan-page" text={loadError} />;
  if (!board) return <p aria-busy="true">Loading planning…</p>;

  const dragged = dragging ? cards.find((c) => c.id === dragging) : undefined;
  const capacity = velocity && velocity.sprints.length > 0 ? velocity.mean : undefined;

  return (
    <section className="plan-page" aria-labelledby="plan-title" aria-busy={busy > 0}>
      <div className="board-head">
        <h1 id="plan-title">Planning: {board.name}</h1>
        <div className="board-actions">
          <a
            href={`/boards/${encodeURIComponent(board.id)}`}
            onClick={(e) => {
              e.preventDefault();
              navigate(`/boards/${encodeURIComponent(board.id)}`);
            }}
          >
            Back to the board
          </a>
        </div>
      </div>
      <p className="capacity" data-testid="capacity">
        {capacity === undefined
          ? 'Capacity hint: no closed sprint yet.'
          : `Capacity hint: mean velocity of the last ${velocity!.sprints.length} closed sprint${velocity!.sprints.length === 1 ? '' : 's'}: ${capacity} points.`}
      </p>
      <Notice notice={notice} onDismiss={() => setNotice(null)} />
      {writable && <CreateSprint api={api} boardId={board.id} onCreated={load} onError={fail} />}

      <DndContext
        sensors={sensors}
        collisionDetection={collision}
        onDragStart={(e) => {
          keyboardTarget.current = null;
          setDragging(String(e.active.id));
        }}
        onDragEnd={onDragEnd}
        onDragCancel={() => {
          keyboardTarget.current = null;
          setDragging(null);
        }}
        accessibility={{
          announcements,
          screenReaderInstructions: {
            draggable: 'To plan this card, press space, then the arrow keys to choose the backlog or a sprint, and space again to drop it.',
          },
        }}
      >
        <div className="plan-groups">
          <PlanGroup id={BACKLOG} title="Backlog" cards={byGroup.get(BACKLOG) ?? []} writable={writable} onPoints={setPoints}>
            <p className="muted">
              Cards of this board in no open sprint (done cards left out).{' '}
              <span data-testid="backlog-points">
                {sumPoints(byGroup.get(BACKLOG) ?? [])} points in {(byGroup.get(BACKLOG) ?? []).length} card{(byGroup.get(BACKLOG) ?? []).length === 1 ? '' : 's'}
              </span>
            </p>
          </PlanGroup>
          {open.map((s) => {
            const list = byGroup.get(s.id) ?? [];
            const committed = sumPoints(list);
            return (
              <PlanGroup key={s.id} id={s.id} title={`Sprint “${s.title}”`} cards={list} writable={writable} onPoints={setPoints}>
                <p className="sprint-facts">
                  <span>{s.started_at ? (s.active ? 'active' : 'started') : 'planned'}</span>
                  {s.kickoff && <span>kickoff {s.kickoff.slice(0, 10)}</span>}
                  {s.deadline && <span>deadline {s.deadline.slice(0, 10)}</span>}
                  <span data-testid="committed">
                    {committed} points in {list.length} card{list.length === 1 ? '' : 's'}
                  </span>
                  {capacity !== undefined && committed > capacity && <span className="warn">over the capacity hint</span>}
                </p>
                <div className="row">
                  {writable && !s.started_at && (
                    <button type="button" onClick={() => askStart(s)}>
                      Start “{s.title}”
                    </button>
                  )}
                  <a
                    href={`/boards/${encodeURIComponent(board.id)}/sprints/${encodeURIComponent(s.id)}`}
                    onClick={(e) => {
                      e.preventDefault();
                      navigate(`/boards/${encodeURIComponent(board.id)}/sprints/${encodeURIComponent(s.id)}`);
                    }}
                  >
                    Sprint view of “{s.title}”
                  </a>
                </div>
              </PlanGroup>
            );
          })}
        </div>
        {createPortal(
          <DragOverlay dropAnimation={null}>
            {dragged ? (
              <div className="plan-card drag-overlay" data-testid="drag-overlay">
                {dragged.title}
              </div>
            ) : null}
          </DragOverlay>,
          document.body,
        )}
      </DndContext>
      {starting && !starting.closeFirst && (
        <StartSprintDialog
          sprint={starting.sprint}
          running={starting.running}
          openCards={(byGroup.get(starting.running.id) ?? []).filter((c) => c.status !== 'done').map((c) => c.title)}
          onCloseFirst={() => setStarting({ ...starting, closeFirst: true })}
          onStartAnyway={() => {
            setStarting(null);
            void start(starting.sprint);
          }}
          onCancel={() => setStarting(null)}
        />
      )}
      {starting?.closeFirst && (
        <CloseSprintDialog
          api={api}
          sprintId={starting.running.id}
          sprintTitle={starting.running.title}
          openSprints={open.filter((x) => x.id !== starting.running.id)}
          onClose={() => setStarting(null)}
          onClosed={() => start(starting.sprint)}
        />
      )}
    </section>
  );
}

/** The backlog or one sprint: a drop target and a list of its cards. */
function PlanGroup(p: {
  id: string;
  title: string;
  cards: Task[];
  writable: boolean;
  onPoints: (card: Task, text: string) => Promise<void>;
  children?: ReactNode;
}) {
  const { setNodeRef, isOver } = useDroppable({ id: p.id, disabled: !p.writable });
  const headingId = `plan-${p.id}`;
  return (
    <section ref={setNodeRef} className={`plan-group${isOver ? ' over' : ''}`} aria-labelledby={headingId} data-group-id={p.id}>
      <h2 id={headingId}>{p.title}</h2>
      {p.children}
      <ul className="plan-cards" aria-label={`Cards in ${p.title}`}>
        {p.cards.map((c) => (
          <PlanCard key={c.id} card={c} group={p.id} writable={p.writable} onPoints={p.onPoints} />
        ))}
      </ul>
      {p.cards.length === 0 && <p className="muted">No cards.</p>}
    </section>
  );
}

/** A card of the planning view: drag handle, title, status and points (an inline input when the board is writable). */
function PlanCard(p: { card: Task; group: string; writable: boolean; onPoints: (card: Task, text: string) => Promise<void> }) {
  const { card } = p;
  const drag = useCardDrag(card, p.group, p.writable);
  const pts = pointsOf(card);
  const [points, setPoints] = useState(pts === undefined ? '' : String(pts));
  useEffect(() => setPoints(pts === undefined ? '' : String(pts)), [pts, card.version]);
  const save = (e?: FormEvent) => {
    e?.preventDefault();
    void p.onPoints(card, points);
  };
  return (
    <li ref={drag.ref} className={`plan-card${drag.isDragging ? ' dragging' : ''}`} aria-label={card.title} data-card-id={card.id}>
      {drag.handle}
      <span className="plan-title">{card.title}</span>
      <span className="status">{card.status}</span>
      {p.writable ? (
        <form className="points" onSubmit={save}>
          <label>
            <span className="sr-only">Points of “{card.title}”</span>
            <input
              name="points"
              type="number"
              min={0}
              step="any"
              inputMode="decimal"
              value={points}
              onChange={(e) => setPoints(e.target.value)}
              onBlur={() => save()}
            />
          </label>
          <span aria-hidden="true">pts</span>
        </form>
      ) : (
        pts !== undefined && <span className="badge pts">{pts} pts</span>
      )}
    </li>
  );
}

/** Create a sprint on the board: title, goal, kickoff and deadline dates (`POST /boards/{id}/sprints`). */
function CreateSprint(p: { api: Api; boardId: string; onCreated: () => Promise<void>; onError: (e: unknown) => void }) {
  const [title, setTitle] = useState('');
  const [goal, setGoal] = useState('');
  const [kickoff, setKickoff] = useState('');
  const [deadline, setDeadline] = useState('');
  async function submit(e: FormEvent) {
    e.preventDefault();
    if (!title.trim()) return;
    try {
      await p.api.createBoardSprint(p.boardId, {
        title: title.trim(),
        ...(goal.trim() ? { goal: goal.trim() } : {}),
        ...(kickoff ? { kickoff } : {}),
        ...(deadline ? { deadline } : {}),
      });
      setTitle('');
      setGoal('');
      setKickoff('');
      setDeadline('');
      await p.onCreated();
    } catch (err) {
      p.onError(err);
    }
  }
  return (
    <form className="create-sprint" onSubmit={submit} aria-label="Create a sprint">
      <label>
        Sprint title
        <input name="sprint-title" required value={title} maxLength={500} onChange={(e) => setTitle(e.target.value)} />
      </label>
      <label>
        Goal
        <input name="goal" value={goal} onChange={(e) => setGoal(e.target.value)} />
      </label>
      <label>
        Kickoff
        <input name="kickoff" type="date" value={kickoff} onChange={(e) => setKickoff(e.target.value)} />
      </label>
      <label>
        Deadline
        <input name="deadline" type="date" value={deadline} onChange={(e) => setDeadline(e.target.value)} />
      </label>
      <button type="submit">Create sprint</button>
    </form>
  );
}
