import { useCallback, useEffect, useState, type FormEvent } from 'react';
import { errorText, type Api } from './api/client.js';
import type { AccessToken, BoardList, CreatedAccessToken } from './api/types.js';

const SCOPE_WORDS: Record<string, string> = {
  read: 'read: every read',
  write: 'write: cards, moves, claims, notes, sprints, views',
  admin: 'admin: boards, sharing, groups, webhooks, tokens',
};

/** A timestamp as the user's local date and time, or a word when absent. */
function when(iso: string | undefined, none: string): string {
  return iso ? new Date(iso).toLocaleString() : none;
}

/**
 * Personal access tokens (`/tokens`, docs/web.md "Access tokens"): create one for an agent or a
 * script with a name, scopes, optionally some boards and an expiry day (the token ends at the end
 * of that day, UTC); its secret is shown once with a copy button; the list shows every token with
 * its scopes, boards, last use and state, and **Revoke** (two steps) ends one at once.
 */
export function TokensPage({ api }: { api: Api }) {
  const [tokens, setTokens] = useState<AccessToken[] | null>(null);
  const [boards, setBoards] = useState<Array<{ id: string; name: string }>>([]);
  const [error, setError] = useState<string | null>(null);
  const [created, setCreated] = useState<CreatedAccessToken | null>(null);
  const [copied, setCopied] = useState(false);
  const [confirm, setConfirm] = useState<string | null>(null);
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState<string[]>(['read', 'write']);
  const [boardIds, setBoardIds] = useState<string[]>([]);
  const [expires, setExpires] = useState('');
  const [busy, setBusy] = useState(false);

  const load = useCallback(async () => {
    try {
      setTokens(await api.listTokens());
    } catch (e) {
      setError(errorText(e));
    }
  }, [api]);
  useEffect(() => {
    void load();
    api.listBoards().then(
      (l: BoardList) => setBoards([...l.owned_boards, ...l.shared_boards].map((b) => ({ id: b.id, name: b.name }))),
      () => {},
    );
  }, [api, load]);
  const boardName = (id: string) => boards.find((b) => b.id === id)?.name ?? 'a board you no longer see';

  async function create(e: FormEvent) {
    e.preventDefault();
    setError(null);
    setBusy(true);
    try {
      const t = await api.createToken({
        name: name.trim(),
        scopes,
        ...(boardIds.length ? { board_ids: boardIds } : {}),
        ...(expires ? { expires_at: `${expires}T23:59:59.000Z` } : {}),
      });
      setCreated(t);
      setCopied(false);
      setName('');
      await load();
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  }

  async function revoke(id: string) {
    setError(null);
    setConfirm(null);
    try {
      await api.revokeToken(id);
      if (created?.id === id) setCreated(null);
      await load();
    } catch (err) {
      setError(errorText(err));
    }
  }

  async function copy(secret: string) {
    try {
      await navigator.clipboard.writeText(secret);
      setCopied(true);
    } catch {
      // no clipboard permission: the text is selected for a manual copy
      (document.getElementById('token-secret') as HTMLInputElement | null)?.select();
    }
  }

  return (
    <section className="tokens-page" aria-labelledby="tokens-title">
      <h1 id="tokens-title">Access tokens</h1>
      <p className="muted">
        A token lets an agent or a script use the API as you, with only the scopes and boards you give it
        (<code>Authorization: Bearer bts_…</code>). A card it claims shows the token’s name.
      </p>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {created && (
        <div className="token-secret" role="region" aria-label="New token">
          <p>
            <strong>“{created.name}” is ready.</strong> Copy its secret now: it is shown only this once.
          </p>
          <div className="row">
            <label className="grow">
              Secret of “{created.name}”
              <input id="token-secret" readOnly value={created.token} onFocus={(e) => e.target.select()} />
            </label>
            <button type="button" onClick={() => void copy(created.token)}>
              Copy
            </button>
            <button type="button" className="secondary" onClick={() => setCreated(null)}>
              Done
            </button>
          </div>
          <p role="status" className="muted">
            {copied ? 'Copied to the clipboard.' : ''}
          </p>
        </div>
      )}
      <form className="create-token" onSubmit={create} aria-labelledby="create-token-title">
        <h2 id="create-token-title">New token</h2>
        <label>
          Name
          <input name="token-name" required maxLength={100} value={name} placeholder="e.g. triage agent" onChange={(e) => setName(e.target.value)} />
        </label>
        <fieldset>
          <legend>Scopes</legend>
          {(['read', 'write', 'admin'] as const).map((s) => (
            <label key={s} className="check">
              <input
                type="checkbox"
                name={`scope-${s}`}
                checked={scopes.includes(s)}
                onChange={(e) => setScopes((cur) => (e.target.checked ? [...cur, s] : cur.filter((x) => x !== s)))}
              />
              {SCOPE_WORDS[s]}
            </label>
          ))}
        </fieldset>
        <label>
          Boards (none chosen: every board you can reach)
          <select multiple name="token-boards" value={boardIds} onChange={(e) => setBoardIds(Array.from(e.target.selectedOptions, (o) => o.value))}>
            {boards.map((b) => (
              <option key={b.id} value={b.id}>
                {b.name}
              </option>
            ))}
          </select>
        </label>
        <label>
          Expires after (empty: never)
          <input name="token-expires" type="date" value={expires} onChange={(e) => setExpires(e.target.value)} />
        </label>
        <button type="submit" disabled={busy || scopes.length === 0 || name.trim() === ''}>
          Create token
        </button>
      </form>
      <h2>Your tokens</h2>
      {tokens === null ? (
        <p aria-busy="true">Loading…</p>
      ) : tokens.length === 0 ? (
        <p className="muted">No token yet.</p>
      ) : (
        <div className="table-scroll">
          <table className="tokens">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Scopes</th>
                <th scope="col">Boards</th>
                <th scope="col">Last used</th>
                <th scope="col">Expires</th>
                <th scope="col">State</th>
                <th scope="col">
                  <span className="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {tokens.map((t) => {
                const expired = t.expires_at !== undefined && Date.parse(t.expires_at) <= Date.now();
                return (
                  <tr key={t.id} aria-label={t.name}>
                    <td>
                      {t.name} <code className="muted">{t.prefix}…</code>
                    </td>
                    <td>{t.scopes.join(', ')}</td>
                    <td>{t.board_ids ? t.board_ids.map(boardName).join(', ') : 'all'}</td>
                    <td data-testid="token-last-used">{when(t.last_used_at, 'never')}</td>
                    <td>{when(t.expires_at, 'never')}</td>
                    <td data-testid="token-state">{t.revoked ? 'revoked' : expired ? 'expired' : 'active'}</td>
                    <td>
                      {!t.revoked &&
                        (confirm === t.id ? (
                          <span className="row">
                            <button type="button" className="danger" onClick={() => void revoke(t.id)}>
                              Revoke “{t.name}”
                            </button>
                            <button type="button" className="secondary" onClick={() => setConfirm(null)}>
                              Keep it
                            </button>
                          </span>
                        ) : (
                          <button type="button" className="danger" onClick={() => setConfirm(t.id)}>
                            Revoke…
                          </button>
                        ))}
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
