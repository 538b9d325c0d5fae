import { useEffect, useState, type FormEvent } from 'react';
import { errorText, type Api } from '../api/client.js';
import type { BoardMember } from '../api/types.js';
import { Dialog } from '../Dialog.js';

const PERMISSIONS = [
  { value: 'rw', label: 'can edit' },
  { value: 'r', label: 'can view' },
] as const;

/** The choices of a permission select: `rw` "can edit", `r` "can view". */
function PermissionOptions() {
  return PERMISSIONS.map((x) => (
    <option key={x.value} value={x.value}>
      {x.label}
    </option>
  ));
}

/**
 * The board's members panel (owner): who is on the board and what each may do; invite by user
 * name as viewer or editor, change a member's permission, remove a member. One API call per
 * gesture (`/boards/{id}/members`, docs/boards.md "Members"); every answer is the new list.
 */
export function MembersDialog(p: { api: Api; boardId: string; boardName: string; onClose: () => void; onChanged: (people: BoardMember[]) => void }) {
  const { api, boardId } = p;
  const [people, setPeople] = useState<BoardMember[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [status, setStatus] = useState('');
  const [username, setUsername] = useState('');
  const [permission, setPermission] = useState<'r' | 'rw'>('rw');
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    api.boardMembers(boardId).then(setPeople, (e: unknown) => setError(errorText(e)));
  }, [api, boardId]);

  /** Runs one gesture; the answer is the board's people, shown at once and passed on. */
  async function run(call: () => Promise<BoardMember[]>, done: string) {
    setBusy(true);
    setError(null);
    try {
      const next = await call();
      setPeople(next);
      setStatus(done);
      p.onChanged(next);
      return true;
    } catch (e) {
      setError(errorText(e));
      return false;
    } finally {
      setBusy(false);
    }
  }

  async function invite(e: FormEvent) {
    e.preventDefault();
    const name = username.trim();
    if (!name) return;
    if (await run(() => api.addBoardMember(boardId, name, permission), `${name} ${permission === 'rw' ? 'can edit' : 'can view'} this board.`)) setUsername('');
  }

  return (
    <Dialog title={`Members of ${p.boardName}`} onClose={p.onClose}>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      <p className="sr-only" role="status">
        {status}
      </p>
      {people === null ? (
        <p aria-busy="true">Loading members…</p>
      ) : (
        <ul className="members" aria-label="Members">
          {people.map((m) => (
            <li key={m.id} aria-label={m.username}>
              <span className="member-name">{m.username}</span>
              {m.permission === 'owner' ? (
                <span className="muted">owner</span>
              ) : (
                <>
                  <label>
                    <span className="sr-only">Permission of {m.username}</span>
                    <select
                      value={m.permission ?? 'r'}
                      disabled={busy}
                      onChange={(e) => {
                        const v = e.target.value as 'r' | 'rw';
                        void run(() => api.updateBoardMember(boardId, m.id, v), `${m.username} ${v === 'rw' ? 'can edit' : 'can view'} this board.`);
                      }}
                    >
                      <PermissionOptions />
                    </select>
                  </label>
                  <button
                    type="button"
                    className="danger"
                    disabled={busy}
                    onClick={() => void run(() => api.removeBoardMember(boardId, m.id), `${m.username} was removed from this board.`)}
                  >
                    Remove<span className="sr-only"> {m.username}</span>
                  </button>
                </>
              )}
            </li>
          ))}
        </ul>
      )}
      <form className="invite row" onSubmit={invite} aria-label="Invite a member">
        <label>
          User name
          <input name="invite-username" autoComplete="off" value={username} onChange={(e) => setUsername(e.target.value)} required />
        </label>
        <label>
          Permission
          <select name="invite-permission" value={permission} onChange={(e) => setPermission(e.target.value as 'r' | 'rw')}>
            <PermissionOptions />
          </select>
        </label>
        <button type="submit" disabled={busy}>
          Invite
        </button>
      </form>
    </Dialog>
  );
}
