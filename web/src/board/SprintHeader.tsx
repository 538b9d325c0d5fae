import { useEffect, useState, type MouseEvent, type ReactNode } from 'react';
import type { Api } from '../api/client.js';
import type { Board, SprintSummary } from '../api/types.js';
import { daysLeft } from './state.js';

/** What the header shows of the running sprint: its list entry (dates, points) and goal. */
interface RunningSprint {
  summary: SprintSummary;
  goal: string | undefined;
}

/**
 * The board's sprint header (docs/web.md "Sprint header"): the running sprint's title and goal,
 * the days left to its deadline, its progress (points done of points committed) and links to the
 * sprint view and to planning; with no sprint running, says so and offers `start` (the owner's
 * start form). Re-read whenever `version` changes (the page passes its last summary read, so a
 * move or a sprint started or closed elsewhere shows here too).
 */
export function SprintHeader(p: {
  api: Api;
  board: Board;
  version: unknown;
  navigate: (path: string) => void;
  /** Controls shown with the running sprint (close) or without one (start). */
  children?: ReactNode;
}) {
  const { api, board, version } = p;
  const sprintId = board.activeSprintId;
  const [running, setRunning] = useState<RunningSprint | null>(null);
  useEffect(() => {
    if (!sprintId) return setRunning(null);
    let cancelled = false;
    Promise.all([api.listSprints(board.id, 'open'), api.getTask(sprintId)]).then(
      ([list, task]) => {
        const summary = list.find((s) => s.id === sprintId);
        const goal = (task.metadata as Record<string, unknown>)['app.goal'];
        if (!cancelled) setRunning(summary ? { summary, goal: typeof goal === 'string' ? goal : undefined } : null);
      },
      () => {
        /* the next summary read tries again; the board stays usable */
      },
    );
    return () => {
      cancelled = true;
    };
  }, [api, board.id, sprintId, version]);

  const go = (path: string) => (e: MouseEvent) => {
    e.preventDefault();
    p.navigate(path);
  };
  const boardPath = `/boards/${encodeURIComponent(board.id)}`;
  const planning = (
    <a href={`${boardPath}/plan`} onClick={go(`${boardPath}/plan`)}>
      Backlog and planning
    </a>
  );
  const s = running?.summary.id === sprintId ? running : null;

  if (!sprintId) {
    return (
      <section className="sprint-header idle" aria-label="Sprint" data-testid="sprint-header">
        <p>
          <strong>No sprint running.</strong> {planning}
        </p>
        {p.children}
      </section>
    );
  }
  const sprintPath = `${boardPath}/sprints/${encodeURIComponent(sprintId)}`;
  const committed = s?.summary.points_committed ?? 0;
  const done = s?.summary.points_done ?? 0;
  const left = s?.summary.deadline ? daysLeft(s.summary.deadline, new Date()) : undefined;
  return (
    <section className="sprint-header" aria-label="Sprint" aria-busy={s === null} data-testid="sprint-header">
      <div className="sprint-name">
        <h2>{s ? s.summary.title : 'Sprint'}</h2>
        {s?.goal && <p className="goal">{s.goal}</p>}
      </div>
      {s && (
        <dl className="sprint-stats">
          {left !== undefined && (
            <div>
              <dt className="sr-only">Time left</dt>
              <dd data-testid="days-left">{left.text}</dd>
            </div>
          )}
          <div>
            <dt className="sr-only">Progress</dt>
            <dd data-testid="sprint-progress">
              <progress max={Math.max(committed, 1)} value={Math.min(done, Math.max(committed, 1))} aria-label="Points done of points committed" />{' '}
              {done} of {committed} points done
            </dd>
          </div>
        </dl>
      )}
      <nav className="sprint-links" aria-label="Sprint links">
        <a href={sprintPath} onClick={go(sprintPath)}>
          Sprint view
        </a>
        {planning}
      </nav>
      {p.children}
    </section>
  );
}

/** Owner control when no sprint runs: create a sprint task and make it the board's active sprint. */
export function StartSprint({ onStart }: { onStart: (title: string) => Promise<void> }) {
  const [title, setTitle] = useState('');
  return (
    <form
      className="start-sprint"
      onSubmit={(e) => {
        e.preventDefault();
        if (title.trim()) void onStart(title.trim()).then(() => setTitle(''));
      }}
    >
      <label>
        New sprint
        <input name="sprint-title" placeholder="Sprint title" value={title} onChange={(e) => setTitle(e.target.value)} />
      </label>
      <button type="submit">Start sprint</button>
    </form>
  );
}

