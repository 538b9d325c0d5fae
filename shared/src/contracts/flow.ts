import { Type, type Static } from '@sinclair/typebox';
import { op } from './op.js';
import { busRequest, PathId, Timestamp } from './schemas.js';

/*
 * Flow reports of a board (docs/flow.md): the cumulative flow per day and column, the lead and
 * cycle time of finished cards, and the daily snapshot that keeps past days.
 */

/** A UTC day, `YYYY-MM-DD`. */
const DayOf = (description = 'a UTC day, YYYY-MM-DD') => Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', description });
const Day = DayOf();

/** Path parameters of the flow routes. */
export const FlowParams = Type.Object({ boardId: PathId });

/** Query string of `GET /api/v1/boards/{boardId}/flow`. */
export const FlowQuerystring = Type.Object(
  {
    from: Type.Optional(DayOf('first day (UTC, inclusive); default 29 days before `to`')),
    to: Type.Optional(DayOf('last day (UTC, inclusive); default today')),
    sprint: Type.Optional(Type.String({ minLength: 1, description: "today's row: absent counts the board's cards across sprints; `active` (the board's running sprint, every card while none runs), `none` (across sprints) or a sprint id narrows it, as the summary does" })),
  },
  { additionalProperties: false },
);
export type FlowQuerystring = Static<typeof FlowQuerystring>;

/** One column of one day of the cumulative flow. */
export const FlowColumn = Type.Object({
  column_id: Type.String(),
  name: Type.String(),
  count: Type.Integer({ minimum: 0, description: 'cards in the column that day' }),
  points: Type.Number({ description: 'sum of the numeric `app.points` of those cards' }),
});

/** One day of the cumulative flow, columns in the board's order. */
export const FlowDay = Type.Object({
  day: Day,
  live: Type.Boolean({ description: 'true for today: counted now for the reader; false: the day\'s snapshot' }),
  columns: Type.Array(FlowColumn),
});
export type FlowDay = Static<typeof FlowDay>;

/** Reply of the cumulative flow: the days that have figures, oldest first. */
export const FlowResult = Type.Object({
  board_id: Type.String(),
  from: Day,
  to: Day,
  days: Type.Array(FlowDay, { description: 'days with a snapshot (and today, live), oldest first; a day with no snapshot is absent' }),
});
export type FlowResult = Static<typeof FlowResult>;

/** Query string of `GET /api/v1/boards/{boardId}/cycle-time`. */
export const CycleTimeQuerystring = Type.Object(
  {
    from: Type.Optional(DayOf('first day a card may have finished on (UTC, inclusive); default 29 days before `to`')),
    to: Type.Optional(DayOf('last day a card may have finished on (UTC, inclusive); default today')),
    start_column: Type.Optional(Type.String({ minLength: 1, description: 'the column whose first leaving starts the cycle; default the board\'s first column' })),
    end_column: Type.Optional(Type.String({ minLength: 1, description: 'the column whose entry finishes a card; default the board\'s last column' })),
  },
  { additionalProperties: false },
);
export type CycleTimeQuerystring = Static<typeof CycleTimeQuerystring>;

const Hours = (description: string) => Type.Number({ minimum: 0, description: `${description}, in hours` });

/** Percentiles of a set of durations, in hours (nearest rank); absent when no card finished. */
export const Percentiles = Type.Object({ p50: Hours('median'), p85: Hours('85th percentile'), p95: Hours('95th percentile') });

/** One finished card of the cycle-time report. */
export const FinishedCard = Type.Object({
  task_id: Type.String(),
  title: Type.String(),
  created_at: Timestamp,
  started_at: Timestamp,
  finished_at: Timestamp,
  lead_time_hours: Hours('created → entered the end column'),
  cycle_time_hours: Hours('first left the start column → entered the end column'),
});
export type FinishedCard = Static<typeof FinishedCard>;

/** Reply of the cycle-time report. */
export const CycleTimeResult = Type.Object({
  board_id: Type.String(),
  from: Day,
  to: Day,
  start_column: Type.String(),
  end_column: Type.String(),
  cards: Type.Array(FinishedCard, { description: 'finished cards the reader may read, by finish time' }),
  lead_time: Type.Optional(Percentiles),
  cycle_time: Type.Optional(Percentiles),
  throughput: Type.Array(
    Type.Object({ week: Day, finished: Type.Integer({ minimum: 0 }) }, { description: 'a UTC week from Monday' }),
    { description: 'finished cards per week, every week of the range' },
  ),
});
export type CycleTimeResult = Static<typeof CycleTimeResult>;

/** Reply of the on-demand snapshot: today's snapshot as stored. */
export const FlowSnapshotResult = Type.Object({
  board_id: Type.String(),
  day: Day,
  taken_at: Timestamp,
  columns: Type.Array(FlowColumn),
});
export type FlowSnapshotResult = Static<typeof FlowSnapshotResult>;

/** The flow reports' bus API (query service), subjects `flow.<verb>`. */
export const FlowOps = {
  cumulative: op({ subject: 'flow.cumulative', request: busRequest(FlowParams.properties, FlowQuerystring.properties), response: FlowResult }),
  cycleTime: op({ subject: 'flow.cycleTime', request: busRequest(FlowParams.properties, CycleTimeQuerystring.properties), response: CycleTimeResult }),
  snapshot: op({ subject: 'flow.snapshot', request: busRequest(FlowParams.properties), response: FlowSnapshotResult }),
} as const;
