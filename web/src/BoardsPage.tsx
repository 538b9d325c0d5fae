import { useEffect, useState, type FormEvent } from 'react';
import { errorText, type Api } from './api/client.js';
import type { Board, BoardList } from './api/types.js';

/** The caller's boards (owned and shared) and a form to create one with the default columns. */
export function BoardsPage({ api, navigate }: { api: Api; navigate: (path: string) => void }) {
  const [list, setList] = useState<BoardList | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [name, setName] = useState('');
  const [type, setType] = useState<'private' | 'shared'>('private');

  useEffect(() => {
    api.listBoards().then(setList, (e: unknown) => setError(errorText(e)));
  }, [api]);

  async function create(e: FormEvent) {
    e.preventDefault();
    setError(null);
    try {
      const board = await api.createBoard(name.trim(), type);
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
        {b.permission ? ` · ${b.permission === 'r' ? 'read only' : 'read-write'}` : ''} · {b.columns.length} columns
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
        <button type="submit">Create board</button>
        <p className="muted">New boards get the columns To Do, Doing and Done; edit them on the board.</p>
      </form>
    </section>
  );
}
