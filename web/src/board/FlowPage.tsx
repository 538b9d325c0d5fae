import { useCallback, useEffect, useMemo, useState, type ReactNode } from 'react';
import uPlot from 'uplot';
import { errorText, type Api } from '../api/client.js';
import type { Board, CycleTime, Flow } from '../api/types.js';
import { AppLink } from '../AppLink.js';
import { AXIS, daySplits, shortDay } from '../charts/axes.js';
import { Chart } from '../charts/Chart.js';
import { PageError } from './Notice.js';
import { cfdBands, epochDay, flowRange } from './state.js';

/** The ranges the flow view offers, in days up to today. */
const RANGES = [30, 90] as const;
/** One fill per column band, in board order (repeated past the last). */
const BAND_COLOURS = ['#9dbcf0', '#f4c774', '#8fd0a0', '#cfa5e6', '#f2a596', '#8fd6d0', '#c5cad3', '#e6d28f'];
const DAY_MS = 86_400_000;
const hours = (h: number) => `${h.toFixed(1)} h`;

/**
 * A board's flow view (`/boards/<id>/flow`, docs/flow.md; linked from the board's toolbar): the
 * cumulative flow diagram (cards per column per day, stacked, from `GET /boards/{id}/flow`), the
 * cycle-time scatter of the cards finished in the range with their p50/p85/p95 lines and the
 * throughput per week (`GET /boards/{id}/cycle-time`), over the last 30 or 90 UTC days. Each chart
 * (uPlot, canvas hidden from screen readers) has a text table of the same figures beside it.
 */
export function FlowPage(p: { api: Api; boardId: string; navigate: (path: string) => void }) {
  const { api, boardId } = p;
  const [board, setBoard] = useState<Board | null>(null);
  const [days, setDays] = useState<number>(30);
  const [flow, setFlow] = useState<Flow | null>(null);
  const [cycle, setCycle] = useState<CycleTime | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    api.getBoard(boardId).then(setBoard, (e: unknown) => setError(errorText(e)));
  }, [api, boardId]);
  const load = useCallback(async () => {
    const { from, to } = flowRange(new Date(), days);
    try {
      const [f, c] = await Promise.all([api.flow(boardId, from, to), api.cycleTime(boardId, from, to)]);
      setFlow(f);
      setCycle(c);
      setError(null);
    } catch (e) {
      setError(errorText(e));
    }
  }, [api, boardId, days]);
  useEffect(() => {
    void load();
  }, [load]);

  const boardPath = `/boards/${encodeURIComponent(boardId)}`;
  if (error && !board) return <PageError className="flow-page" text={error} />;
  if (!board) return <p aria-busy="true">Loading the flow view…</p>;
  const endName = board.columns[board.columns.length - 1]?.name ?? 'the last column';

  return (
    <section className="flow-page" aria-labelledby="flow-title">
      <div className="board-head">
        <h1 id="flow-title">Flow of “{board.name}”</h1>
        <span className="muted">{flow ? `${flow.from} to ${flow.to} (UTC days)` : '…'}</span>
        <div className="board-actions">
          <label className="inline">
            Range
            <select name="range" value={days} onChange={(e) => setDays(Number(e.target.value))}>
              {RANGES.map((n) => (
                <option key={n} value={n}>
                  last {n} days
                </option>
              ))}
            </select>
          </label>
          <AppLink to={boardPath} navigate={p.navigate}>
            Board
          </AppLink>
        </div>
      </div>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      <section aria-labelledby="cfd-title" className="panel">
        <h2 id="cfd-title">Cumulative flow</h2>
        {flow ? <CumulativeFlow flow={flow} /> : <p aria-busy="true">Loading…</p>}
      </section>
      <section aria-labelledby="cycle-title" className="panel">
        <h2 id="cycle-title">Cycle time</h2>
        <p className="muted">
          From a card first leaving {cycle ? nameIn(board, cycle.start_column) : 'the first column'} to entering {cycle ? nameIn(board, cycle.end_column) : endName}, per finished card.
        </p>
        {cycle ? <CycleScatter cycle={cycle} /> : <p aria-busy="true">Loading…</p>}
      </section>
      <section aria-labelledby="throughput-title" className="panel">
        <h2 id="throughput-title">Throughput</h2>
        {cycle ? <Throughput cycle={cycle} /> : <p aria-busy="true">Loading…</p>}
      </section>
    </section>
  );
}

const nameIn = (board: Board, columnId: string) => board.columns.find((c) => c.id === columnId)?.name ?? columnId;

/** Keyboard-reachable scrolling box of a long table (a region named by its caption). */
function TableBox(p: { label: string; children: ReactNode }) {
  return (
    <div className="table-box" role="region" aria-label={p.label} tabIndex={0}>
      {p.children}
    </div>
  );
}

/**
 * The cumulative flow diagram: one band per column, stacked so the last column (Done) is at the
 * bottom and the first on top; x in UTC days, y in cards. The table lists each day's count per
 * column (today counted live).
 */
function CumulativeFlow({ flow }: { flow: Flow }) {
  const bands = useMemo(() => cfdBands(flow.days), [flow]);
  const data = useMemo<uPlot.AlignedData>(() => [bands.x, ...bands.columns.map((c) => c.top)], [bands]);
  const build = useCallback(
    (width: number, height: number): uPlot.Options => {
      const lo = epochDay(flow.from);
      const hi = epochDay(flow.to);
      const few = bands.x.length <= 2;
      return {
        width,
        height,
        legend: { show: true, live: false },
        scales: { x: { time: false, range: () => [lo - 0.5, hi + 0.5] }, y: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
        axes: [
          { ...AXIS, label: 'day (UTC)', splits: (u) => daySplits(u.width, lo, hi), values: (_u, ticks) => ticks.map((t) => shortDay(t * DAY_MS)) },
          { ...AXIS, label: 'cards', size: 50 },
        ],
        series: [
          {},
          ...bands.columns.map((c, i) => {
            const colour = BAND_COLOURS[i % BAND_COLOURS.length]!;
            return { label: c.name, stroke: colour, fill: colour, width: 1, points: { show: few, size: 8, fill: colour } };
          }),
        ],
      };
    },
    [bands, flow.from, flow.to],
  );
  if (bands.columns.length === 0 || bands.columns.every((c) => c.counts.every((n) => n === 0))) {
    return <p className="muted">No card on this board yet: the cumulative flow starts with the first card.</p>;
  }
  return (
    <div className="flow-pair">
      <Chart label="Cumulative flow: cards per column and day, stacked in board order" data={data} build={build} testId="cfd-chart" height={260} />
      <TableBox label="Cards per column and day">
        <table className="figures" data-testid="cfd-table">
          <caption>Cards per column at the end of each day (UTC; today counted now)</caption>
          <thead>
            <tr>
              <th scope="col">Day</th>
              {bands.columns.map((c) => (
                <th key={c.id} scope="col">
                  {c.name}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {flow.days
              .map((d, j) => (
                <tr key={d.day} className={d.live ? 'today' : undefined} aria-current={d.live ? 'date' : undefined}>
                  <th scope="row">
                    {d.day}
                    {d.live && ' (today)'}
                  </th>
                  {bands.columns.map((c) => (
                    <td key={c.id}>{c.counts[j]}</td>
                  ))}
                </tr>
              ))
              .reverse()}
          </tbody>
        </table>
      </TableBox>
    </div>
  );
}

/** The percentile lines of the scatter: label, hours, colour. */
const PERCENTILES = [
  ['p50', '#1a7f37'],
  ['p85', '#b54708'],
  ['p95', '#b42318'],
] as const;

/**
 * Cycle time of each finished card: x its finish instant (UTC days), y its cycle time in hours,
 * with horizontal p50/p85/p95 lines. The table lists the cards with cycle and lead time.
 */
function CycleScatter({ cycle }: { cycle: CycleTime }) {
  const data = useMemo<uPlot.AlignedData>(() => [cycle.cards.map((c) => epochDay(c.finished_at)), cycle.cards.map((c) => c.cycle_time_hours)], [cycle]);
  const build = useCallback(
    (width: number, height: number): uPlot.Options => {
      const lo = epochDay(cycle.from);
      const hi = epochDay(cycle.to) + 1;
      const pct = cycle.cycle_time;
      return {
        width,
        height,
        legend: { show: true, live: false },
        scales: {
          x: { time: false, range: () => [lo, hi] },
          y: { range: (_u, _min, max) => [0, Math.max(1, max, pct?.p95 ?? 0) * 1.1] },
        },
        axes: [
          { ...AXIS, label: 'finished (UTC day)', splits: (u) => daySplits(u.width, lo, hi), values: (_u, ticks) => ticks.map((t) => shortDay(t * DAY_MS)) },
          { ...AXIS, label: 'cycle time (hours)', size: 56 },
        ],
        series: [{}, { label: 'Finished card', stroke: '#2457c5', width: 0, paths: () => null, points: { show: true, size: 8, fill: '#2457c5' } }],
        hooks: {
          draw: [
            (u) => {
              if (!pct) return;
              const { ctx, bbox } = u;
              ctx.save();
              ctx.font = `${11 * devicePixelRatio}px system-ui, sans-serif`;
              ctx.textAlign = 'right';
              let labelled = Infinity; // the y of the last label drawn: labels closer than 12 px are joined
              for (const [i, [name, colour]] of PERCENTILES.entries()) {
                const y = Math.round(u.valToPos(pct[name], 'y', true));
                ctx.strokeStyle = colour;
                ctx.fillStyle = colour;
                ctx.lineWidth = 1.5 * devicePixelRatio;
                ctx.setLineDash([6 * devicePixelRatio, 4 * devicePixelRatio]);
                ctx.beginPath();
                ctx.moveTo(bbox.left, y);
                ctx.lineTo(bbox.left + bbox.width, y);
                ctx.stroke();
                if (Math.abs(labelled - y) < 12 * devicePixelRatio) continue;
                // This label names every following percentile drawn at (nearly) the same height.
                const same = PERCENTILES.slice(i).filter(([n]) => Math.abs(u.valToPos(pct[n], 'y', true) - y) < 12 * devicePixelRatio);
                ctx.fillText(`${same.map(([n]) => n).join(' = ')} ${hours(pct[name])}`, bbox.left + bbox.width - 4 * devicePixelRatio, y - 3 * devicePixelRatio);
                labelled = y;
              }
              ctx.restore();
            },
          ],
        },
      };
    },
    [cycle],
  );
  if (cycle.cards.length === 0) return <p className="muted">No card finished between {cycle.from} and {cycle.to} yet.</p>;
  const pct = cycle.cycle_time;
  return (
    <div className="flow-pair">
      <Chart label="Cycle time of each finished card, with the 50th, 85th and 95th percentile lines" data={data} build={build} testId="cycle-chart" height={260} />
      <div>
        {pct && (
          <p data-testid="cycle-percentiles">
            Cycle time: p50 {hours(pct.p50)}, p85 {hours(pct.p85)}, p95 {hours(pct.p95)}
            {cycle.lead_time && ` · lead time p50 ${hours(cycle.lead_time.p50)}`}
          </p>
        )}
        <TableBox label="Finished cards">
          <table className="figures" data-testid="cycle-table">
            <caption>Finished cards, by finish time (UTC)</caption>
            <thead>
              <tr>
                <th scope="col">Card</th>
                <th scope="col">Finished</th>
                <th scope="col">Cycle time (h)</th>
                <th scope="col">Lead time (h)</th>
              </tr>
            </thead>
            <tbody>
              {cycle.cards.map((c) => (
                <tr key={c.task_id}>
                  <th scope="row">{c.title}</th>
                  <td>{c.finished_at.slice(0, 16).replace('T', ' ')}</td>
                  <td>{c.cycle_time_hours.toFixed(1)}</td>
                  <td>{c.lead_time_hours.toFixed(1)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableBox>
      </div>
    </div>
  );
}

/** Finished cards per UTC week (from Monday) as bars, every week of the range; the table lists the same. */
function Throughput({ cycle }: { cycle: CycleTime }) {
  const weeks = cycle.throughput;
  const data = useMemo<uPlot.AlignedData>(() => [weeks.map((_, i) => i), weeks.map((w) => w.finished)], [weeks]);
  const build = useCallback(
    (width: number, height: number): uPlot.Options => {
      const bars = uPlot.paths.bars!;
      return {
        width,
        height,
        legend: { show: true, live: false },
        scales: { x: { time: false, range: () => [-0.6, weeks.length - 0.4] }, y: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
        axes: [
          {
            ...AXIS,
            label: 'week (UTC, from Monday)',
            splits: (u) => daySplits(u.width, 0, weeks.length - 1),
            values: (_u, ticks) => ticks.map((t) => (weeks[t] ? shortDay(weeks[t].week) : '')),
          },
          { ...AXIS, label: 'cards finished', size: 50 },
        ],
        series: [{}, { label: 'Finished', stroke: '#1a7f37', fill: '#7fc48e', width: 1, paths: bars({ size: [0.6, 48] }), points: { show: false } }],
      };
    },
    [weeks],
  );
  if (weeks.every((w) => w.finished === 0)) return <p className="muted">No card finished between {cycle.from} and {cycle.to} yet: no throughput to show.</p>;
  return (
    <div className="flow-pair">
      <Chart label="Throughput: cards finished per week" data={data} build={build} testId="throughput-chart" />
      <TableBox label="Cards finished per week">
        <table className="figures" data-testid="throughput-table">
          <caption>Cards finished per week (weeks from Monday, UTC)</caption>
          <thead>
            <tr>
              <th scope="col">Week of</th>
              <th scope="col">Finished</th>
            </tr>
          </thead>
          <tbody>
            {weeks.map((w) => (
              <tr key={w.week}>
                <th scope="row">{w.week}</th>
                <td>{w.finished}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </TableBox>
    </div>
  );
}
