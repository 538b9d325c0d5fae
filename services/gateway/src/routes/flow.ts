import { CycleTimeQuerystring, CycleTimeResult, FlowOps, FlowParams, FlowQuerystring, FlowResult, FlowSnapshotResult } from '@app/shared/contracts';
import { route, type RouteSpec } from './route.js';

/**
 * Flow reports of a board (docs/flow.md), served by the query service: cumulative flow per day and
 * column, lead and cycle time of finished cards, and the on-demand daily snapshot. Draft: target paths only.
 */
export const flowRoutes: RouteSpec[] = [
  route({
    method: 'GET', url: '/api/v1/boards/:boardId/flow', op: FlowOps.cumulative,
    input: (req) => ({ ...req.query, boardId: req.params.boardId! }),
    summary: 'Cumulative flow: per day and column, the card count and points (past days from daily snapshots, today live)',
    tag: 'boards', maturity: 'draft', params: FlowParams, querystring: FlowQuerystring, response: FlowResult,
  }),
  route({
    method: 'GET', url: '/api/v1/boards/:boardId/cycle-time', op: FlowOps.cycleTime,
    input: (req) => ({ ...req.query, boardId: req.params.boardId! }),
    summary: 'Lead and cycle time of the cards finished in a range, their p50/p85/p95, and throughput per week',
    tag: 'boards', maturity: 'draft', params: FlowParams, querystring: CycleTimeQuerystring, response: CycleTimeResult,
  }),
  route({
    method: 'POST', url: '/api/v1/boards/:boardId/flow/snapshot', op: FlowOps.snapshot,
    input: (req) => ({ boardId: req.params.boardId! }),
    summary: "Take today's flow snapshot of the board now (replacing one taken earlier today)",
    tag: 'boards', maturity: 'draft', params: FlowParams, response: FlowSnapshotResult,
  }),
];
