import { CardSkeletons } from './Lane.js';

/** The board page before the board is read: grey lanes of skeleton cards, not an empty board. */
export function BoardSkeleton() {
  return (
    <section className="board-page" aria-busy="true" aria-label="Loading board">
      <p className="muted">Loading board…</p>
      <div className="lanes skeleton-lanes">
        {[0, 1, 2].map((i) => (
          <div key={i} className="lane">
            <CardSkeletons count={2 + (i % 2)} />
          </div>
        ))}
      </div>
    </section>
  );
}

/** Said above the lanes when the filters match no card of the board, with the way back to every card. */
export function NothingMatches({ mine, onShowAll }: { mine: boolean; onShowAll: () => void }) {
  return (
    <div className="empty-filter" role="status" data-testid="empty-filter">
      <p>No card on this board matches the filter{mine ? ' (assigned to you)' : ''}.</p>
      <button type="button" className="secondary" onClick={onShowAll}>
        Show all cards
      </button>
    </div>
  );
}
