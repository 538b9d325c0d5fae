import { useCallback, useEffect, useMemo, useState } from 'react';
import uPlot from 'uplot';
import { ApiError, errorText, type Api } from '../api/client.js';
import type { Board, Burndown, SprintReport, SprintSummary, TaskDetail, Velocity } from '../api/types.js';
import { AppLink } from '../AppLink.js';
import { AXIS, shortDay } from '../charts/axes.js';
import { Chart } from '../charts/Chart.js';
import { CloseSprintDialog } from './CloseSprintDialog.js';
import { PageError } from './Notice.js';
import { burnDays } from './state.js';


/**
 * A sprint's view (`/boards/<id>/sprints/<sprintId>`): its goal and dates, the burndown chart
 * (remaining points per day against the ideal line, scope changes marked), the report (live while
 * open, frozen after the close), and the board's velocity chart of the last N closed sprints
 * (committed vs completed). Every chart (uPlot) has a text table beside it for screen readers.
 */
export function SprintPage(p: { api: Api; boardId: string; sprintId: string; navigate: (path: string) => void }) {
  const { api, boardId, sprintId } = p;
  const [board, setBoard] = useState<Board | null>(null);
  const [sprint, setSprint] = useState<TaskDetail | null>(null);
  const [summary, setSummary] = useState<SprintSummary | undefined>(undefined);
  const [openSprints, setOpenSprints] = useState<SprintSummary[]>([]);
  const [sprintTitles, setSprintTitles] = useState<ReadonlyMap<string, string>>(new Map());
  const [report, setReport] = useState<SprintReport | null>(null);
  const [burn, setBurn] = useState<Burndown | null | 'not-started'>(null);
  const [velocity, setVelocity] = useState<Velocity | null>(null);
  const [last, setLast] = useState(6);
  const [error, setError] = useState<string | null>(null);
  const [closing, setClosing] = useState(false);

  const load = useCallback(async () => {
    try {
      const [b, s, list, r] = await Promise.all([api.getBoard(boardId), api.getTask(sprintId), api.listSprints(boardId, 'all'), api.sprintReport(sprintId)]);
      setBoard(b);
      setSprint(s);
      setSummary(list.find((x) => x.id === sprintId));
      setOpenSprints(list.filter((x) => x.state === 'open'));
      setSprintTitles(new Map(list.map((x) => [x.id, x.title])));
      setReport(r);
      // a planned sprint has no burndown yet: not asked (the API would answer 400 SPRINT_NOT_STARTED)
      const info = list.find((x) => x.id === sprintId);
      if (info && info.state === 'open' && !info.started_at) {
        setBurn('not-started');
        return;
      }
      try {
        setBurn(await api.burndown(sprintId));
      } catch (e) {
        if (e instanceof ApiError && e.code === 'SPRINT_NOT_STARTED') setBurn('not-started');
        else throw e;
      }
    } catch (e) {
      setError(errorText(e));
    }
  }, [api, boardId, sprintId]);

  useEffect(() => {
    void load();
  }, [load]);
  useEffect(() => {
    api.velocity(boardId, last).then(setVelocity, (e: unknown) => setError(errorText(e)));
  }, [api, boardId, last, report]);

  const boardPath = `/boards/${encodeURIComponent(boardId)}`;

  if (error && !sprint) return <PageError className="sprint-page" text={error} />;
  if (!sprint || !report || !board) return <p aria-busy="true">Loading sprint…</p>;

  const md = sprint.metadata as Record<string, unknown>;
  const goal = typeof md['app.goal'] === 'string' ? md['app.goal'] : undefined;
  const writable = board.is_owner || board.permission === 'rw';
  const closed = report.state === 'closed';

  return (
    <section className="sprint-page" aria-labelledby="sprint-title">
      <div className="board-head">
        <h1 id="sprint-title">Sprint “{sprint.title}”</h1>
        <span className="muted" data-testid="sprint-state">
          {closed ? 'closed' : summary?.started_at ? 'active' : 'planned'} · {board.name}
        </span>
        <div className="board-actions">
          <AppLink to={boardPath} navigate={p.navigate}>
            Board
          </AppLink>
          <AppLink to={`${boardPath}/plan`} navigate={p.navigate}>
            Planning
          </AppLink>
          {writable && !closed && summary?.started_at && (
            <button type="button" onClick={() => setClosing(true)}>
              Close sprint…
            </button>
          )}
        </div>
      </div>
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
      <dl className="fields sprint-fields">
        <dt>Goal</dt>
        <dd>{goal ?? '—'}</dd>
        <dt>Kickoff</dt>
        <dd>{sprint.kickoff?.slice(0, 10) ?? '—'}</dd>
        <dt>Deadline</dt>
        <dd>{sprint.deadline?.slice(0, 10) ?? '—'}</dd>
      </dl>

      <div className="sprint-grid">
        <section aria-labelledby="burndown-title" className="panel">
          <h2 id="burndown-title">Burndown</h2>
          {burn === 'not-started' ? <p className="muted">The sprint has not started: no burndown yet.</p> : burn ? <BurndownChart burn={burn} /> : <p aria-busy="true">Loading…</p>}
        </section>
        <section aria-labelledby="report-title" className="panel">
          <h2 id="report-title">Report</h2>
          <ReportTable report={report} titles={sprintTitles} />
        </section>
        <section aria-labelledby="velocity-title" className="panel wide">
          <h2 id="velocity-title">Velocity</h2>
          <label className="inline">
            Closed sprints shown
            <select name="last" value={last} onChange={(e) => setLast(Number(e.target.value))}>
              {[3, 6, 12].map((n) => (
                <option key={n} value={n}>
                  last {n}
                </option>
              ))}
            </select>
          </label>
          {velocity ? <VelocityChart velocity={velocity} /> : <p aria-busy="true">Loading…</p>}
        </section>
      </div>

      {closing && (
        <CloseSprintDialog
          api={api}
          sprintId={sprintId}
          sprintTitle={sprint.title}
          openSprints={openSprints.filter((s) => s.id !== sprintId)}
          onClose={() => setClosing(false)}
          onClosed={load}
        />
      )}
    </section>
  );
}

/** The report's figures: items and points per list; frozen (from the close snapshot) or live. */
function ReportTable({ report: r, titles }: { report: SprintReport; titles: ReadonlyMap<string, string> }) {
  const rows: Array<[string, number, number]> = [
    ['Committed', r.committed.length, r.committed_points],
    ['Added', r.added.length, r.added_points],
    ['Removed', r.removed.length, r.removed_points],
    ['Completed', r.completed.length, r.velocity],
    r.state === 'closed' ? ['Rolled over', r.rolled_over.length, r.rolled_over_points] : ['Remaining', r.remaining.length, r.remaining_points],
  ];
  return (
    <>
      <p className="muted" data-testid="report-kind">
        {r.live ? 'Live: computed now from the sprint’s cards.' : `Frozen at the close (${r.close?.taken_at.slice(0, 16).replace('T', ' ')} UTC).`}
      </p>
      <table className="figures" data-testid="report">
        <caption className="sr-only">Sprint report</caption>
        <thead>
          <tr>
            <th scope="col">List</th>
            <th scope="col">Cards</th>
            <th scope="col">Points</th>
          </tr>
        </thead>
        <tbody>
          {rows.map(([name, n, pts]) => (
            <tr key={name}>
              <th scope="row">{name}</th>
              <td>{n}</td>
              <td>{pts}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {r.completion_ratio !== undefined && <p className="muted">Completion: {Math.round(r.completion_ratio * 100)} % of the committed points.</p>}
      <div className="report-lists">
        <ReportList title="Completed" items={r.completed} empty="No card finished yet." />
        <ReportList
          title={r.state === 'closed' ? 'Not completed (rolled over)' : 'Not completed'}
          items={r.state === 'closed' ? r.rolled_over : r.remaining}
          empty="Every card is done."
          target={(t) => (t === 'backlog' ? 'to the backlog' : `to “${r.close?.target_title ?? titles.get(t) ?? t}”`)}
        />
        {r.added.length > 0 && <ReportList title="Added during the sprint" items={r.added} />}
        {r.removed.length > 0 && <ReportList title="Removed during the sprint" items={r.removed} />}
      </div>
    </>
  );
}

/** One list of the report: each card with its points, its status where the report gives one, and where it rolled over. */
function ReportList(p: { title: string; items: SprintReport['completed']; empty?: string; target?: (t: string) => string }) {
  const id = `report-${p.title.replace(/\W+/g, '-').toLowerCase()}`;
  return (
    <section aria-labelledby={id} className="report-list">
      <h3 id={id}>
        {p.title} ({p.items.length})
      </h3>
      {p.items.length === 0 ? (
        <p className="muted">{p.empty}</p>
      ) : (
        <ul>
          {p.items.map((it) => (
            <li key={it.id}>
              <span className="plan-title">{it.title}</span>{' '}
              <span className="badge pts">{it.points === undefined ? 'no points' : `${it.points} pts`}</span>
              {it.status && it.status !== 'done' && <span className="muted"> · {it.status}</span>}
              {it.target && p.target && <span className="muted"> · {p.target(it.target)}</span>}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

/**
 * The burndown over the sprint's days as the API lists them (kickoff to deadline, {@link burnDays}): remaining points,
 * the dashed ideal line to 0 on the deadline, scope changes as red dots, today as a vertical line.
 * The x axis is in days (one tick per day up to two weeks, fewer beyond), the y axis in points.
 */
function BurndownChart({ burn }: { burn: Burndown }) {
  const days = useMemo(() => burnDays(burn, { now: new Date() }), [burn]);
  const data = useMemo<uPlot.AlignedData>(
    () => [
      days.map((_, i) => i),
      days.map((d) => d.remaining),
      days.map((d) => d.ideal),
      days.map((d) => (d.scopeChange !== 0 ? d.scope : null)),
    ],
    [days],
  );
  const build = useCallback(
    (width: number, height: number): uPlot.Options => {
      const todayAt = days.findIndex((d) => d.today);
      // A tick per day while labels fit (about 64 px each), else every n-th day; read at each
      // draw, so a chart resized to a phone's width thins its ticks.
      const every = (u: uPlot) => Math.max(1, Math.ceil(days.length / Math.max(2, Math.floor(u.width / 64))));
      return {
        width,
        height,
        legend: { show: true, live: false },
        scales: { x: { time: false, range: () => [-0.3, Math.max(1, days.length - 1) + 0.3] }, y: { range: (_u, min, max) => [0, Math.max(1, max, min)] } },
        axes: [
          {
            ...AXIS,
            label: 'day (UTC)',
            splits: (u) => days.map((_, i) => i).filter((i) => i % every(u) === 0),
            values: (_u, ticks) => ticks.map((t) => (days[t] ? shortDay(days[t].date) : '')),
          },
          { ...AXIS, label: 'points remaining', size: 50 },
        ],
        series: [
          {},
          { label: 'Remaining', stroke: '#2457c5', width: 2, points: { show: true, size: 6 } },
          { label: 'Ideal', stroke: '#5e6673', width: 1.5, dash: [6, 4], points: { show: false } },
          { label: 'Scope change', stroke: '#b42318', width: 0, points: { show: true, size: 9, fill: '#b42318' } },
        ],
        hooks: {
          // drawn after the axes and before the series, so a point of today (on day 1 the only one) lies on top of the line
          drawAxes: [
            (u) => {
              if (todayAt < 0) return;
              const x = Math.round(u.valToPos(todayAt, 'x', true));
              const { ctx, bbox } = u;
              ctx.save();
              ctx.strokeStyle = '#b54708';
              ctx.lineWidth = 2 * devicePixelRatio;
              ctx.beginPath();
              ctx.moveTo(x, bbox.top);
              ctx.lineTo(x, bbox.top + bbox.height);
              ctx.stroke();
              ctx.fillStyle = '#b54708';
              ctx.font = `${12 * devicePixelRatio}px system-ui, sans-serif`;
              ctx.textAlign = x > bbox.left + bbox.width - 60 * devicePixelRatio ? 'right' : 'left';
              ctx.fillText('today', x + (ctx.textAlign === 'right' ? -4 : 4) * devicePixelRatio, bbox.top + 12 * devicePixelRatio);
              ctx.restore();
            },
          ],
        },
      };
    },
    [days],
  );
  return (
    <div className="chart-with-table">
      <Chart label="Burndown: remaining points per day against the ideal line, kickoff to deadline" data={data} build={build} testId="burndown-chart" />
      <table className="figures" data-testid="burndown-table">
        <caption>Remaining points per day (end of day, UTC)</caption>
        <thead>
          <tr>
            <th scope="col">Day</th>
            <th scope="col">Remaining</th>
            <th scope="col">Ideal</th>
            <th scope="col">Scope</th>
          </tr>
        </thead>
        <tbody>
          {days.map((d) => (
            <tr key={d.date} className={d.today ? 'today' : undefined} aria-current={d.today ? 'date' : undefined}>
              <th scope="row">
                {d.date}
                {d.today && ' (today)'}
              </th>
              <td>{d.remaining ?? '—'}</td>
              <td>{d.ideal}</td>
              <td>
                {d.scope ?? '—'}
                {d.scopeChange !== 0 && ` (${d.scopeChange > 0 ? '+' : '−'}${Math.abs(d.scopeChange)})`}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function VelocityChart({ velocity }: { velocity: Velocity }) {
  const data = useMemo<uPlot.AlignedData>(
    () => [velocity.sprints.map((_, i) => i + 1), velocity.sprints.map((s) => s.committed_points), velocity.sprints.map((s) => s.velocity)],
    [velocity],
  );
  const build = useCallback(
    (width: number, height: number): uPlot.Options => {
      const bars = uPlot.paths.bars!;
      return {
        width,
        height,
        scales: { x: { time: false, range: (_u, min, max) => [min - 0.6, max + 0.6] }, y: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
        // the legend names the series only (no "Value: --" readings)
        legend: { show: true, live: false },
        axes: [
          {
            ...AXIS,
            splits: () => velocity.sprints.map((_, i) => i + 1),
            values: (_u, ticks) => ticks.map((t) => velocity.sprints[t - 1]?.title ?? ''),
          },
          { ...AXIS, label: 'points', size: 50 },
        ],
        series: [
          {},
          { label: 'Committed', stroke: '#5e6673', fill: '#c5cad3', width: 1, paths: bars({ size: [0.35, 60], align: -1 }), points: { show: false } },
          { label: 'Completed', stroke: '#1a7f37', fill: '#7fc48e', width: 1, paths: bars({ size: [0.35, 60], align: 1 }), points: { show: false } },
        ],
      };
    },
    [velocity],
  );
  if (velocity.sprints.length === 0) return <p className="muted">No closed sprint on this board yet.</p>;
  return (
    <div className="chart-with-table">
      <Chart label="Velocity: committed against completed points of the last closed sprints" data={data} build={build} testId="velocity-chart" />
      <table className="figures" data-testid="velocity-table">
        <caption>
          Last {velocity.sprints.length} closed sprints (mean velocity {velocity.mean}, median {velocity.median})
        </caption>
        <thead>
          <tr>
            <th scope="col">Sprint</th>
            <th scope="col">Committed</th>
            <th scope="col">Completed</th>
          </tr>
        </thead>
        <tbody>
          {velocity.sprints.map((s) => (
            <tr key={s.sprint_id}>
              <th scope="row">{s.title}</th>
              <td>{s.committed_points}</td>
              <td>{s.velocity}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
