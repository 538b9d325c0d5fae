import { useCallback, useRef, useState, type Dispatch, type MutableRefObject, type SetStateAction } from 'react';
import type { Api } from '../api/client.js';
import type { Board, Summary } from '../api/types.js';
import { NO_FILTERS, type Filters } from './FilterBar.js';
import { columnFilter, emptyColumn, PAGE_SIZE, summarySignature, type Columns, type ColumnState } from './state.js';

/** What {@link useBoardColumns} gives the board page. */
export interface BoardColumns {
  /** The cards shown per column id, with each column's `total` and pages loaded. */
  columns: Columns;
  /** The same, current inside callbacks that outlive a render. */
  columnsRef: MutableRefObject<Columns>;
  setColumns: Dispatch<SetStateAction<Columns>>;
  /** The board summary of the last reload (WIP limits, totals, active sprint). */
  summary: Summary | null;
  /** {@link summarySignature} of the last summary read; the periodic refresh compares against it. */
  signatureRef: MutableRefObject<string | null>;
  /** Column reloads in flight (the lanes are `aria-busy` meanwhile). */
  reloading: number;
  /** The filters and sprint choice the shown cards were read with. */
  filter: Filters;
  sprint: string;
  /**
   * Re-reads every column of `board` keeping how many pages each shows, and the
   * summary. `filter` and `sprint` default to the ones in force; on success they become the ones
   * in force. Throws the API's error (a bad filter's 400 among them); the cards shown stay.
   */
  reload: (board: Board, opts?: { filter?: Filters; sprint?: string }) => Promise<void>;
  /** Reads the next page of one column and appends its cards. Throws the API's error. */
  loadMore: (board: Board, columnId: string) => Promise<void>;
  /** Sets every column of `board` to the empty, loading state (before its first read). */
  reset: (board: Board) => void;
}

/**
 * The board's cards per column, read with the page's filters and sprint choice: per-column pages
 * of {@link PAGE_SIZE}, the summary, and the "in flight" count that marks the lanes busy
 * (docs/web.md "A board").
 */
export function useBoardColumns(api: Api): BoardColumns {
  const [columns, setColumns] = useState<Columns>({});
  const [summary, setSummary] = useState<Summary | null>(null);
  const [reloading, setReloading] = useState(0);
  const [filter, setFilter] = useState<Filters>(NO_FILTERS);
  const [sprint, setSprint] = useState('active');
  const columnsRef = useRef(columns);
  columnsRef.current = columns;
  const signatureRef = useRef<string | null>(null);
  const choice = useRef({ filter, sprint });
  choice.current = { filter, sprint };

  const sentFilter = useCallback(
    (f: Filters) => columnFilter(f.query, f.search, f.mine ? api.session?.userId : undefined).filter,
    [api],
  );

  /** Reads pages 1..`pages` of one column (aligned pages of PAGE_SIZE). */
  const readColumn = useCallback(
    async (b: Board, columnId: string, pages: number, f: Filters, s: string): Promise<ColumnState> => {
      const filterSent = sentFilter(f);
      const reads = await Promise.all(
        Array.from({ length: Math.max(1, pages) }, (_, i) =>
          api.readColumn(b.id, columnId, { sprint: s, filter: filterSent, page: i + 1, page_size: PAGE_SIZE }),
        ),
      );
      const seen = new Set<string>();
      const cards = reads.flatMap((r) => r.data).filter((c) => !seen.has(c.id) && seen.add(c.id));
      return { cards, total: reads[0]!.total, pages: Math.max(1, pages), loading: false };
    },
    [api, sentFilter],
  );

  /**
   * Reads may finish out of order (a live refresh started before "Apply" can answer after it):
   * each reload takes a number, and a reload that answers after a newer one was shown is dropped,
   * so the last choice the user made is what stays shown.
   */
  const seq = useRef(0);
  const shownSeq = useRef(0);
  /** The filters and sprint of the newest reload asked for: a reload without its own reads with these, not with an older choice. */
  const requested = useRef<{ filter: Filters; sprint: string } | null>(null);

  const reload = useCallback(
    async (b: Board, opts: { filter?: Filters; sprint?: string } = {}) => {
      const base = requested.current ?? choice.current;
      const f = opts.filter ?? base.filter;
      const s = opts.sprint ?? base.sprint;
      const mine = ++seq.current;
      const asked = { filter: f, sprint: s };
      requested.current = asked;
      const ids = b.columns.map((c) => c.id);
      const pages = ids.map((id) => columnsRef.current[id]?.pages ?? 1);
      setReloading((n) => n + 1);
      let states: ColumnState[];
      let sum: Summary;
      try {
        [states, sum] = await Promise.all([
          Promise.all(ids.map((id, i) => readColumn(b, id, pages[i]!, f, s))),
          api.summary(b.id, s),
        ]).finally(() => setReloading((n) => n - 1));
      } catch (e) {
        // A refused choice (a bad filter's 400) is not the one in force: later reloads use the shown one.
        if (requested.current === asked) requested.current = null;
        throw e;
      }
      if (mine < shownSeq.current) return; // a newer reload is shown already
      shownSeq.current = mine;
      setColumns((prev) => {
        const next: Columns = {};
        ids.forEach((id, i) => {
          const read = states[i]!;
          const cur = prev[id];
          // "Load more" finished while this reload was reading: keep the pages it added after the
          // ones re-read here, or a live refresh would fold the lane back to its first page.
          if (cur && cur.pages > read.pages) {
            const seen = new Set(read.cards.map((c) => c.id));
            const extra = cur.cards.slice(read.pages * PAGE_SIZE).filter((c) => !seen.has(c.id));
            next[id] = { ...read, cards: [...read.cards, ...extra], pages: cur.pages };
          } else next[id] = read;
        });
        return next;
      });
      setSummary(sum);
      signatureRef.current = summarySignature(sum);
      setFilter(f);
      setSprint(s);
      if (requested.current === asked) requested.current = null;
    },
    [api, readColumn],
  );

  const loadMore = useCallback(
    async (b: Board, columnId: string) => {
      const col = columnsRef.current[columnId];
      if (!col) return;
      const r = await api.readColumn(b.id, columnId, {
        sprint: choice.current.sprint,
        filter: sentFilter(choice.current.filter),
        page: col.pages + 1,
        page_size: PAGE_SIZE,
      });
      setColumns((c) => {
        const cur = c[columnId]!;
        const ids = new Set(cur.cards.map((x) => x.id));
        return {
          ...c,
          [columnId]: { ...cur, cards: [...cur.cards, ...r.data.filter((x) => !ids.has(x.id))], total: r.total, pages: cur.pages + 1 },
        };
      });
    },
    [api, sentFilter],
  );

  const reset = useCallback((b: Board) => {
    setColumns((c) => Object.fromEntries(b.columns.map((x) => [x.id, c[x.id] ?? emptyColumn()])));
  }, []);

  return { columns, columnsRef, setColumns, summary, signatureRef, reloading, filter, sprint, reload, loadMore, reset };
}
