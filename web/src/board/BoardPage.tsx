import { DndContext, DragOverlay } from '@dnd-kit/core';
import { useCallback, useEffect, useRef, useState } from 'react';
import { createPortal } from 'react-dom';
import { ApiError, errorText, type Api } from '../api/client.js';
import { queryMessage } from '../api/humane.js';
import type { Summary } from '../api/types.js';
import { CardDetail } from './CardDetail.js';
import { CloseSprintDialog } from './CloseSprintDialog.js';
import { ColumnEditor } from './ColumnEditor.js';
import { CustomFieldsContext, useCustomFields } from './customFields.js';
import { FieldsEditor } from './FieldsEditor.js';
import { FilterBar, NO_FILTERS, type FilterError, type Filters } from './FilterBar.js';
import { BoardSkeleton, NothingMatches } from './BoardStates.js';
import { CardFace, Lane } from './Lane.js';
import { pollInterval, POLL_MS } from './live.js';
import { MembersDialog } from './MembersDialog.js';
import { Notice, type NoticeMessage } from './Notice.js';
import { SprintHeader, StartSprint } from './SprintHeader.js';
import { AppLink } from '../AppLink.js';
import { columnFilter, columnOf, emptyColumn, statusChoices, userPosition, wipRefusalOf, wipRefusalText } from './state.js';
import { useBoard } from './useBoard.js';
import { useBoardColumns } from './useBoardColumns.js';
import { useCardMove, type MoveReport } from './useCardMove.js';
import { useLiveUpdates } from './useLiveUpdates.js';
import { takeReturnCard, useOpenCard } from '../drafts.js';
import { useConnectivity } from '../OutageBanner.js';

/**
 * The board page: lanes with counts and WIP state, per-column pages, filter, sprint
 * switcher, card create, drag-and-drop and keyboard moves with dry-run previews, optimistic moves
 * with rollback, card detail, column editor, close-sprint dialog, and live updates (the event
 * stream when the gateway has one, else the summary re-read every {@link POLL_MS}). The state
 * lives in hooks: {@link useBoard} (board, sprints, people), {@link useBoardColumns} (the cards),
 * {@link useCardMove} (moves and drag) and {@link useLiveUpdates} (the live loop).
 */
export function BoardPage({ api, boardId, navigate }: { api: Api; boardId: string; navigate: (path: string) => void }) {
  const { board, setBoard, loadBoard, sprints, loadSprints, members, people, loadMembers } = useBoard(api, boardId);
  const cols = useBoardColumns(api);
  // the custom fields of the board's scope: card badges, the card detail's widgets, the filter bar
  const boardFields = useCustomFields(api, boardId);
  const [fieldsOpen, setFieldsOpen] = useState(false);
  const { columns, columnsRef, summary, filter, sprint, reload } = cols;
  const [loadError, setLoadError] = useState<string | null>(null);
  /** The message bar; `sprintId` ties a notice to a sprint, so closing that sprint ends it. */
  const [notice, setNotice] = useState<(NoticeMessage & { sprintId?: string }) | null>(null);
  const [announcement, setAnnouncement] = useState('');
  // back after an ended session: the card whose detail was open opens again (its drafts restore themselves)
  const [openCard, setOpenCard] = useState<string | null>(() => takeReturnCard() ?? null);
  useOpenCard(openCard);
  const connectivity = useConnectivity(api);
  const [editing, setEditing] = useState(false);
  const [closing, setClosing] = useState<{ id: string; title: string } | null>(null);
  const [sharing, setSharing] = useState(false);
  const [filtersOpen, setFiltersOpen] = useState(false);
  /** Changed to reset the filter bar's inputs (after "Show all cards"). */
  const [filterBarKey, setFilterBarKey] = useState(0);

  const writable = board !== null && (board.is_owner || board.permission === 'rw');
  const nameOf = useCallback((id: string) => board?.columns.find((c) => c.id === id)?.name ?? id, [board]);
  const fail = useCallback((e: unknown) => setNotice({ text: errorText(e), kind: 'error' }), []);
  const report = useCallback((r: MoveReport) => {
    setAnnouncement(r.text);
    setNotice(r);
  }, []);
  const move = useCardMove({ api, board, writable, cols, nameOf, report });

  /** Re-reads the columns with the filters and sprint in force; a failure goes to the message bar. */
  const refresh = useCallback(async () => {
    if (board) await reload(board).catch(fail);
  }, [board, reload, fail]);

  useEffect(() => {
    let cancelled = false;
    performance.mark('board:start');
    (async () => {
      try {
        const b = await loadBoard();
        if (cancelled) return;
        performance.mark('board:board-read');
        cols.reset(b);
        await reload(b, { filter: NO_FILTERS, sprint: 'active' });
        performance.mark('board:reads-done');
        void loadSprints();
        loadMembers();
      } catch (e) {
        if (!cancelled) setLoadError(errorText(e));
      }
    })();
    return () => {
      cancelled = true;
    };
  }, [loadBoard, reload, loadSprints, loadMembers]);

  // A permission changed by the owner (r → rw, or back) reaches an open page when its window gets
  // the focus again: the board (and so the handles, menus and card form) is re-read then.
  useEffect(() => {
    const again = () => void loadBoard().catch(() => {});
    window.addEventListener('focus', again);
    return () => window.removeEventListener('focus', again);
  }, [loadBoard]);

  // First render of every lane's cards: the mark the browser test and bench read.
  const rendered = board !== null && board.columns.length > 0 && board.columns.every((c) => columns[c.id] && !columns[c.id]!.loading);
  useEffect(() => {
    if (rendered && performance.getEntriesByName('board:rendered').length === 0) {
      performance.mark('board:rendered');
      performance.measure('board:first-render', 'board:start', 'board:rendered');
    }
  }, [rendered]);

  // The people may change (a board shared with a group, a member added): re-read them when a card opens.
  useEffect(() => {
    if (openCard) loadMembers();
  }, [loadMembers, openCard]);

  const live = useLiveUpdates({
    api,
    boardId: board?.id ?? null,
    sprint,
    signatureRef: cols.signatureRef,
    moveInFlight: move.moveInFlight,
    shows: (e) => e.task_id !== undefined && columnOf(columnsRef.current, e.task_id) !== undefined,
    refresh: () => void refresh(),
  });

  // The running sprint changed behind the page's back (started or closed by someone else, seen by
  // the stream or the summary poll): re-read the board and the sprints so the header, the switcher
  // and the close control follow.
  // Each summary read is looked at once (the board re-read must not start another).
  const summarySeen = useRef<Summary | null>(null);
  useEffect(() => {
    if (!board || !summary || summarySeen.current === summary) return;
    summarySeen.current = summary;
    if ((summary.active_sprint_id ?? null) !== (board.activeSprintId ?? null)) {
      loadBoard().catch(() => {});
      void loadSprints();
    }
  }, [board, summary, loadBoard, loadSprints]);

  // ---- filter and sprint ----------------------------------------------------------------------------
  /**
   * Reads the columns with `next` filters; on a 400 the user's query-language text is read alone
   * once (first column) so the message and position are the server's for exactly what was typed.
   */
  async function applyFilters(next: Filters): Promise<FilterError | null> {
    if (!board) return null;
    try {
      await reload(board, { filter: next });
      return null;
    } catch (err) {
      if (!(err instanceof ApiError && err.status === 400)) {
        fail(err);
        return null;
      }
      const text = next.query;
      const e: ApiError = err;
      const first = board.columns[0];
      if (text && first) {
        try {
          await api.readColumn(board.id, first.id, { sprint, filter: text, page: 1, page_size: 1 });
        } catch (alone) {
          if (alone instanceof ApiError && alone.status === 400) {
            return { message: queryMessage(alone.message), ...(alone.position !== undefined ? { position: alone.position } : {}), text };
          }
        }
      }
      const { offset } = columnFilter(text, next.search);
      return { message: e.code.startsWith('QUERY_') ? queryMessage(e.message) : errorText(e), ...(e.position !== undefined ? { position: userPosition(e.position, offset, text) } : {}), text };
    }
  }

  async function chooseSprint(value: string) {
    if (board) await reload(board, { sprint: value }).catch(fail);
  }

  async function startSprint(title: string) {
    if (!board) return;
    try {
      const s = await api.createBoardSprint(board.id, { title, start: true });
      const b = await loadBoard();
      await loadSprints();
      await reload(b);
      setNotice({ text: `Sprint “${s.title}” started.`, kind: 'info', sprintId: s.id });
    } catch (err) {
      fail(err);
    }
  }

  // ---- card create and paging -----------------------------------------------------------------------
  async function createCard(columnId: string, title: string): Promise<boolean> {
    if (!board) return false;
    try {
      const t = await api.createCard(board.id, title, columnId);
      setAnnouncement(`Created “${t.title}” in ${nameOf(columnId)}.`);
      await refresh();
      return true;
    } catch (e) {
      const full = e instanceof ApiError ? wipRefusalOf(e.code, e.body.details) : undefined;
      if (full) setNotice({ text: wipRefusalText(title, nameOf(full.column_id), full, 'created'), kind: 'error' });
      else fail(e);
      return false;
    }
  }

  function loadMore(columnId: string) {
    if (board) cols.loadMore(board, columnId).catch(fail);
  }

  if (loadError) {
    return (
      <section className="board-page">
        <p role="alert" className="error">
          {loadError}
        </p>
        <button type="button" onClick={() => navigate('/')}>
          Back to boards
        </button>
      </section>
    );
  }
  if (!board) return <BoardSkeleton />;

  const wipOf = (id: string) => summary?.columns.find((c) => c.column_id === id);
  const { dragging } = move;
  const draggedCard = dragging ? columns[columnOf(columns, dragging) ?? '']?.cards.find((c) => c.id === dragging) : undefined;
  const activeSprint = sprints.find((s) => s.id === board.activeSprintId);
  const filtered = filter.query !== '' || filter.search !== '' || filter.mine;
  const nothingMatches = filtered && board.columns.every((c) => columns[c.id] && !columns[c.id]!.loading && columns[c.id]!.total === 0);

  return (
    <CustomFieldsContext.Provider value={boardFields}>
    <section className="board-page" aria-labelledby="board-title">
      <div className="board-head">
        <h1 id="board-title">{board.name}</h1>
        <span className="muted">
          {board.board_type}
          {!writable ? ' · read only' : ''} · {connectivity === 'offline' ? 'not updating: the server cannot be reached' : live === 'stream' ? 'live' : `refreshes every ${Math.round(pollInterval() / 1000)} s`}
        </span>
        <div className="board-actions">
          <AppLink to={`/boards/${encodeURIComponent(board.id)}/flow`} navigate={navigate}>
            Flow
          </AppLink>
          {board.is_owner && (
            <button type="button" className="secondary" onClick={() => setSharing(true)}>
              Members…
            </button>
          )}
          {board.is_owner && (
            <button type="button" onClick={() => setEditing(true)}>
              Edit columns
            </button>
          )}
          {writable && (
            <button type="button" className="secondary" onClick={() => setFieldsOpen(true)}>
              Fields…
            </button>
          )}
        </div>
      </div>
      <SprintHeader api={api} board={board} version={summary} navigate={navigate}>
        {writable && board.activeSprintId && (
          <button type="button" onClick={() => setClosing({ id: board.activeSprintId!, title: activeSprint?.title ?? board.activeSprintId! })}>
            Close sprint…
          </button>
        )}
        {writable && board.is_owner && !board.activeSprintId && <StartSprint onStart={startSprint} />}
      </SprintHeader>

      <div className={`toolbar${filtersOpen ? ' open' : ''}`}>
        {/* On a phone the filter inputs fold behind this button, so the lanes start near the top. */}
        <button type="button" className="secondary filters-toggle" aria-expanded={filtersOpen} onClick={() => setFiltersOpen((o) => !o)}>
          Filter and search{filtered ? ' (on)' : ''}
        </button>
        <FilterBar key={filterBarKey} applied={filter} onApply={applyFilters} api={api} boardId={board.id} />
        <label className="sprint-switch">
          Sprint
          <select name="sprint" value={sprint} onChange={(e) => void chooseSprint(e.target.value)}>
            <option value="active">Active sprint{activeSprint ? ` (${activeSprint.title})` : board.activeSprintId ? '' : ' (none running)'}</option>
            <option value="none">All cards (no sprint filter)</option>
            {sprints.map((s) => (
              <option key={s.id} value={s.id}>
                {s.title}
              </option>
            ))}
          </select>
        </label>
      </div>
      <Notice notice={notice} onDismiss={() => setNotice(null)} />
      {nothingMatches && (
        <NothingMatches mine={filter.mine} onShowAll={() => reload(board, { filter: NO_FILTERS }).then(() => setFilterBarKey((k) => k + 1), fail)} />
      )}
      <div className="sr-only" aria-live="polite" role="log">
        {announcement}
      </div>

      <DndContext {...move.dnd}>
        <div className="lanes" role="list" aria-label={`Columns of ${board.name}`} aria-busy={cols.reloading > 0}>
          {board.columns.map((col) => (
            <Lane
              key={col.id}
              column={col}
              state={columns[col.id] ?? emptyColumn()}
              summary={wipOf(col.id)}
              writable={writable}
              order={board.columns}
              preview={move.preview}
              dragging={move.dragging}
              people={people}
              filtered={filtered}
              onOpen={setOpenCard}
              onCreate={createCard}
              onLoadMore={loadMore}
              onMove={move.performMove}
              onPreview={move.showPreview}
              onReadOnlyMove={() => setNotice({ text: 'This board is read-only for you: cards cannot be moved.', kind: 'error' })}
            />
          ))}
        </div>
        {createPortal(
          <DragOverlay dropAnimation={null}>
            {draggedCard ? (
              <div className="card drag-overlay" data-testid="drag-overlay">
                <CardFace card={draggedCard} people={people} />
                {/* The lane's own preview line may be under this copy: it is repeated here, for the eye only. */}
                {move.preview?.cardId === draggedCard.id && (
                  <p className={`overlay-preview${move.preview.ok ? '' : ' bad'}`} aria-hidden="true" data-testid="overlay-preview">
                    {move.preview.text}
                  </p>
                )}
              </div>
            ) : null}
          </DragOverlay>,
          document.body,
        )}
      </DndContext>

      {openCard && (
        <CardDetail
          api={api}
          taskId={openCard}
          writable={writable}
          statuses={statusChoices(board.columns)}
          members={members}
          sprints={sprints}
          onClose={() => setOpenCard(null)}
          onChanged={() => void refresh()}
        />
      )}
      {sharing && (
        <MembersDialog
          api={api}
          boardId={board.id}
          boardName={board.name}
          onClose={() => setSharing(false)}
          onChanged={() => {
            loadMembers();
            loadBoard().catch(() => {});
          }}
        />
      )}
      {editing && (
        <ColumnEditor
          api={api}
          board={board}
          onClose={() => setEditing(false)}
          onSaved={(b) => {
            setBoard(b);
            setEditing(false);
            cols.reset(b);
            move.forgetPreviews();
            void reload(b).catch(fail);
          }}
        />
      )}
      {fieldsOpen && (
        <FieldsEditor
          api={api}
          board={board}
          fields={boardFields.fields}
          onClose={() => setFieldsOpen(false)}
          onChanged={() => {
            boardFields.reload();
            void reload(board).catch(fail);
          }}
        />
      )}
      {closing && (
        <CloseSprintDialog
          api={api}
          sprintId={closing.id}
          sprintTitle={closing.title}
          openSprints={sprints.filter((s) => s.id !== closing.id)}
          onClose={() => setClosing(null)}
          onClosed={async () => {
            const closedId = closing.id;
            setNotice((n) => (n?.sprintId === closedId ? null : n));
            const b = await loadBoard().catch(() => board);
            await loadSprints();
            await reload(b).catch(fail);
          }}
        />
      )}
    </section>
    </CustomFieldsContext.Provider>
  );
}
