import { Dialog } from '../Dialog.js';

/** A sprint as the start confirmation names it. */
export interface SprintRef {
  id: string;
  title: string;
}

/**
 * Asked before a sprint is started while another one runs (docs/web.md "Backlog and planning"):
 * starting makes the new sprint the board's active sprint, so the running sprint's cards leave the
 * board's default view. Names the running sprint and its open cards, and offers to close it first
 * (the close dialog, then the start), to start anyway, or to cancel.
 */
export function StartSprintDialog(p: {
  sprint: SprintRef;
  running: SprintRef;
  /** Titles of the running sprint's cards that are not done. */
  openCards: readonly string[];
  onCloseFirst: () => void;
  onStartAnyway: () => void;
  onCancel: () => void;
}) {
  const n = p.openCards.length;
  return (
    <Dialog title={`Start “${p.sprint.title}” while “${p.running.title}” runs?`} onClose={p.onCancel}>
      <p>
        “{p.running.title}” is the board's running sprint, with {n === 0 ? 'no open cards' : `${n} open card${n === 1 ? '' : 's'}`}. Starting “
        {p.sprint.title}” makes it the active sprint: the board then shows its cards, and the cards of “{p.running.title}” are no longer
        on the board's sprint view until you pick that sprint.
      </p>
      {n > 0 && (
        <ul className="unfinished" aria-label={`Open cards of “${p.running.title}”`}>
          {p.openCards.map((t, i) => (
            <li key={i}>{t}</li>
          ))}
        </ul>
      )}
      <div className="row">
        <button type="button" onClick={p.onCloseFirst}>
          Close “{p.running.title}” first…
        </button>
        <button type="button" className="secondary" onClick={p.onStartAnyway}>
          Start “{p.sprint.title}” anyway
        </button>
        <button type="button" className="secondary" onClick={p.onCancel}>
          Cancel
        </button>
      </div>
    </Dialog>
  );
}
