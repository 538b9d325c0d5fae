import { useEffect, useRef, useState } from 'react';
import { queryMessage } from '../api/humane.js';
import { ApiError, type Api } from '../api/client.js';
import type { QueryFault, QueryValidation, SavedView, SavedViewList } from '../api/types.js';

/** Wait after the last keystroke before asking the server (milliseconds). */
export const VALIDATE_DEBOUNCE_MS = 250;

/**
 * The board filter's text box, self-contained: while the user types it asks
 * `POST /api/v1/tasks/query/validate` (debounced, the previous request aborted) and underlines the
 * fault under the box with its message and suggestion; it lists the saved views of this board and
 * the caller's own (picking one fills the box) and saves the current text as a view, shared with
 * the board's readers when asked. The parent keeps the text and applies it (and reports what
 * applying it answered, `applyErrorId`).
 */
export function QueryInput({
  api, boardId, value, onChange, applyErrorId, translate,
}: {
  api: Api;
  boardId: string;
  value: string;
  onChange: (text: string) => void;
  /** The id of the parent's alert when applying the text failed (then the box is marked invalid and points at it). */
  applyErrorId?: string | undefined;
  /** Rewrites the text before it is checked (the filter box's field names → keys); positions then refer to the rewritten text. */
  translate?: (text: string) => string;
}) {
  const [fault, setFault] = useState<{ text: string; fault: QueryFault } | null>(null);
  const [views, setViews] = useState<SavedView[]>([]);
  const [note, setNote] = useState('');
  const controller = useRef<AbortController | null>(null);

  useEffect(() => {
    const text = value;
    if (text.trim() === '') {
      setFault(null);
      return;
    }
    const timer = setTimeout(() => {
      controller.current?.abort();
      const ctl = (controller.current = new AbortController());
      api
        .call<QueryValidation>('validateQuery', { body: { query: translate ? translate(text) : text, board_id: boardId }, signal: ctl.signal })
        .then((r) => setFault(r.valid || !r.errors[0] ? null : { text, fault: r.errors[0] }))
        .catch(() => {}); // an aborted or failed check leaves the last answer; applying reports errors
    }, VALIDATE_DEBOUNCE_MS);
    return () => clearTimeout(timer);
  }, [api, boardId, value, translate]);

  const loadViews = () =>
    api
      .call<SavedViewList>('listViews')
      .then((r) => setViews(r.data.filter((v) => v.board_id === undefined || v.board_id === boardId)))
      .catch(() => setViews([]));
  useEffect(() => void loadViews(), [api, boardId]); // eslint-disable-line react-hooks/exhaustive-deps

  async function save() {
    const name = window.prompt('Name of the view', '')?.trim();
    if (!name) return;
    const shared = window.confirm('Share this view with everyone who can read this board?');
    try {
      await api.call('createView', { body: { name, query: value, board_id: boardId, shared } });
      setNote(`Saved "${name}"`);
      await loadViews();
    } catch (e) {
      setNote(e instanceof ApiError ? e.message : 'Could not save the view');
    }
  }

  const shown = fault && fault.text === value ? fault.fault : null;
  return (
    <>
      <input
        id="filter-input"
        name="filter"
        placeholder="e.g. assignee = me() AND 'bug' IN tags"
        value={value}
        onChange={(e) => onChange(e.target.value)}
        aria-invalid={shown || applyErrorId ? true : undefined}
        aria-describedby={applyErrorId ?? (shown ? 'filter-check' : undefined)}
        spellCheck={false}
      />
      {views.length > 0 && (
        <select aria-label="Saved views" value="" onChange={(e) => onChange(views.find((v) => v.id === e.target.value)?.query ?? value)}>
          <option value="">Views…</option>
          {views.map((v) => (
            <option key={v.id} value={v.id}>
              {v.name}
              {v.shared ? ' (shared)' : ''}
            </option>
          ))}
        </select>
      )}
      <button type="button" className="secondary" disabled={value.trim() === '' || shown !== null} onClick={() => void save()}>
        Save view
      </button>
      {note && <span className="query-note" role="status">{note}</span>}
      {shown && (
        <div id="filter-check" className="query-check" role="status">
          <code>
            {value.slice(0, shown.position)}
            <u className="query-fault">{value.slice(shown.position, shown.position + Math.max(shown.length, 1)) || ' '}</u>
            {value.slice(shown.position + Math.max(shown.length, 1))}
          </code>
          <span>
            {queryMessage(shown.message)}
            {shown.suggestion && !/did you mean/i.test(shown.message) ? ` Try ${shown.suggestion}.` : ''}
          </span>
        </div>
      )}
    </>
  );
}
