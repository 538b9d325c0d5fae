import { useEffect, useState, type FormEvent } from 'react';
import { errorText, type Api } from './api/client.js';
import type { Board, BoardList } from './api/types.js';

/**
 * A tag of its own for a new board (docs/boards.md "Two kinds of board"): `board-` and the name's
 * slug, made unique among `taken` (the default tags of the caller's boards) with `-2`, `-3`…
 */
export function boardTag(name: string, taken: ReadonlySet<string>): string {
  const slug = name.normalize('NFKD').replace(/[\u0300-\u036f]/g, '').toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 40) || 'cards';
  const base = `board-${slug}`;
  let tag = base;
  for (let i = 2; taken.has(tag); i++) tag = `${base}-${i}`;
  return tag;
}

/** What the board list says of a board's kind: its own cards (its tag), or a view over every task in its scope. */
export function boardKind(b: Pick<Board, 'default_tags'>): string {
  return b.default_tags.length > 0 ? `own cards (tag ${b.default_tags.join(', ')})` : 'view of all tasks matching its columns';
}

/**
 * The caller's boards (owned and shared, each saying its kind) and a form to create one with the
 * default columns: a board of its own cards (a default tag of its own, the default) or a view
 * board over every task the board's scope holds.
 */
export function BoardsPage({ api, navigate }: { api: Api; navigate: (path: string) => void }) {
  const [list, setList] = useState<BoardList | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [name, setName] = useState('');
  const [type, setType] = useState<'private' | 'shared'>('private');
  const [kind, setKind] = useState<'own' | 'view'>('own');

  useEffect(() => {
    api.listBoards().then(setList, (e: unknown) => setError(errorText(e)));
  }, [api]);

  async function create(e: FormEvent) {
    e.preventDefault();
    setError(null);
    try {
      const taken = new Set([...(list?.owned_boards ?? []), ...(list?.shared_boards ?? [])].flatMap((b) => b.default_tags));
      const board = await api.createBoard(name.trim(), type, kind === 'own' ? [boardTag(name.trim(), taken)] : undefined);
      navigate(`/boards/${encodeURIComponent(board.id)}`);
    } catch (err) {
      setError(errorText(err));
    }
  }

  const item = (b: Board) => (
    <li key={b.id}>
      <a
        href={`/boards/${encodeURIComponent(b.id)}`}
        onClick={(e) => {
          e.preventDefault();
          navigate(`/boards/${encodeURIComponent(b.id)}`);
        }}
      >
        {b.name}
      </a>{' '}
      <span className="muted">
        {b.board_type}
        {b.permission ? ` · ${b.permission === 'r' ? 'read only' : 'read-write'}` : ''} · {b.columns.length} columns ·{' '}
        <span data-testid="board-kind">{boardKind(b)}</span>
      </span>
    </li>
  );

  return (
    <section className="boards" aria-labelledby="boards-title">
      <h1 id="boards-title">Your boards</h1>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {list === null ? (
        <p aria-busy="true">Loading…</p>
      ) : (
        <div className="board-lists">
          <section aria-labelledby="owned-title">
            <h2 id="owned-title">Owned</h2>
            {list.owned_boards.length ? <ul>{list.owned_boards.map(item)}</ul> : <p className="muted">No boards yet.</p>}
          </section>
          <section aria-labelledby="shared-title">
            <h2 id="shared-title">Shared with you</h2>
            {list.shared_boards.length ? <ul>{list.shared_boards.map(item)}</ul> : <p className="muted">None.</p>}
          </section>
        </div>
      )}
      <form className="create-board" onSubmit={create} aria-labelledby="create-title">
        <h2 id="create-title">Create a board</h2>
        <label>
          Name
          <input name="board-name" required maxLength={200} value={name} onChange={(e) => setName(e.target.value)} />
        </label>
        <label>
          Visibility
          <select name="board-type" value={type} onChange={(e) => setType(e.target.value as 'private' | 'shared')}>
            <option value="private">Private</option>
            <option value="shared">Shared</option>
          </select>
        </label>
        <fieldset className="board-kind">
          <legend>Cards</legend>
          <label>
            <input type="radio" name="board-kind" value="own" checked={kind === 'own'} onChange={() => setKind('own')} />
            Its own cards: a new, empty board whose cards carry a tag of their own
          </label>
          <label>
            <input type="radio" name="board-kind" value="view" checked={kind === 'view'} onChange={() => setKind('view')} />
            A view: show all my tasks matching the columns
          </label>
        </fieldset>
        <button type="submit">Create board</button>
        <p className="muted">New boards get the columns To Do, Doing and Done; edit them on the board.</p>
      </form>
    </section>
  );
}
