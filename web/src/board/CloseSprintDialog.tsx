import { useEffect, useState } from 'react';
import { errorText, type Api } from '../api/client.js';
import type { CloseSprintResult, Task } from '../api/types.js';
import { Dialog } from '../Dialog.js';

/**
 * Close the active sprint: lists the unfinished members, asks for the rollover target
 * (the backlog or another open sprint), says before the close when the target is a planned sprint
 * that the close will start (with how many cards), then shows the close-sprint answer (velocity,
 * rolled over, the sprint started).
 */
export function CloseSprintDialog(p: {
  api: Api;
  sprintId: string;
  sprintTitle: string;
  /** Open sprints to roll over into; `started_at` absent: planned (the close starts it), `member_count`: its cards now. */
  openSprints: Array<{ id: string; title: string; started_at?: string | undefined; member_count?: number }>;
  onClose: () => void;
  onClosed: () => Promise<void>;
}) {
  const [members, setMembers] = useState<Task[] | null>(null);
  const [target, setTarget] = useState('backlog');
  const [result, setResult] = useState<CloseSprintResult | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    const id = p.sprintId.replace(/'/g, "''");
    p.api.queryTasks(`app.sprint = '${id}' AND status != 'done' ORDER BY created_at ASC`).then(
      (r) => setMembers(r.data),
      (e: unknown) => setError(errorText(e)),
    );
  }, [p.api, p.sprintId]);

  async function close() {
    setBusy(true);
    setError(null);
    try {
      const r = await p.api.closeSprint(p.sprintId, members && members.length > 0 ? target : undefined);
      setResult(r);
      await p.onClosed();
    } catch (e) {
      setError(errorText(e));
    } finally {
      setBusy(false);
    }
  }

  const chosen = members && members.length > 0 ? p.openSprints.find((s) => s.id === target) : undefined;
  const starts = chosen && chosen.started_at === undefined ? chosen : undefined;
  const targetName = (t: string) => (t === 'backlog' ? 'the backlog' : t === 'none' ? 'nowhere (nothing was unfinished)' : (p.openSprints.find((s) => s.id === t)?.title ?? t));

  return (
    <Dialog title={`Close sprint “${p.sprintTitle}”`} onClose={p.onClose}>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      {result ? (
        <div role="status" className="close-result">
          <p>
            Sprint closed. Velocity: <strong data-testid="velocity">{result.velocity}</strong> points from {result.completed} finished
            cards.
          </p>
          <p>
            Rolled over: <strong data-testid="rolled-over">{result.rolledOver}</strong> to {targetName(result.target)}.
          </p>
          {result.startedSprintId && <p data-testid="started-sprint">“{targetName(result.startedSprintId)}” has started and is the board’s running sprint.</p>}
          <button type="button" onClick={p.onClose}>
            Done
          </button>
        </div>
      ) : members === null ? (
        <p aria-busy="true">Loading unfinished cards…</p>
      ) : (
        <>
          <h3>Unfinished cards ({members.length})</h3>
          {members.length === 0 ? (
            <p className="muted">Every card of this sprint is done.</p>
          ) : (
            <ul className="unfinished">
              {members.map((t) => (
                <li key={t.id}>
                  {t.title} <span className="muted">({t.status})</span>
                </li>
              ))}
            </ul>
          )}
          {members.length > 0 && (
            <label>
              Roll unfinished cards over to
              <select name="rollover" value={target} onChange={(e) => setTarget(e.target.value)}>
                <option value="backlog">The backlog</option>
                {p.openSprints.map((s) => (
                  <option key={s.id} value={s.id}>
                    {s.title}
                  </option>
                ))}
              </select>
            </label>
          )}
          {starts && members && (
            <p className="notice" data-testid="will-start">
              “{starts.title}” has not started: closing starts it now with {(starts.member_count ?? 0) + members.length} cards ({members.length} rolled
              over{starts.member_count ? `, ${starts.member_count} already planned` : ''}), and it becomes the board’s running sprint.
            </p>
          )}
          <div className="row">
            <button type="button" onClick={() => void close()} disabled={busy}>
              Close sprint
            </button>
            <button type="button" className="secondary" onClick={p.onClose}>
              Cancel
            </button>
          </div>
        </>
      )}
    </Dialog>
  );
}
