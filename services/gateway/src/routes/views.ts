import { View, ViewCreateBody, ViewList, ViewParams, ViewQueryBody, ViewQueryResult, ViewsOps, ViewUpdateBody } from '@app/shared/contracts';
import { route, type RouteSpec } from './route.js';

/**
 * Saved views (docs/views.md), served by the query service: named queries, the caller's own and
 * those shared through a board it can read, run for whoever reads them. Draft: target paths only.
 */
export const viewRoutes: RouteSpec[] = [
  route({
    method: 'POST', url: '/api/v1/views', op: ViewsOps.create,
    input: (req) => req.body,
    summary: 'Save a query as a view (optionally on a board, shared with its readers)',
    tag: 'views', maturity: 'draft', body: ViewCreateBody, response: View, status: 201,
  }),
  route({
    method: 'GET', url: '/api/v1/views', op: ViewsOps.list, input: () => ({}),
    summary: "The caller's views and those shared through a board it can read", tag: 'views', maturity: 'draft', response: ViewList,
  }),
  route({
    method: 'GET', url: '/api/v1/views/:viewId', op: ViewsOps.get,
    input: (req) => ({ viewId: req.params.viewId! }),
    summary: 'One view', tag: 'views', maturity: 'draft', params: ViewParams, response: View, conditional: true,
  }),
  route({
    method: 'PATCH', url: '/api/v1/views/:viewId', op: ViewsOps.update,
    input: (req) => ({ ...req.body, viewId: req.params.viewId! }),
    summary: 'Change a view (owner only; If-Match)', tag: 'views', maturity: 'draft',
    params: ViewParams, body: ViewUpdateBody, response: View, conditional: true,
  }),
  route({
    method: 'DELETE', url: '/api/v1/views/:viewId', op: ViewsOps.remove,
    input: (req) => ({ viewId: req.params.viewId! }),
    summary: 'Delete a view (owner only; If-Match)', tag: 'views', maturity: 'draft', params: ViewParams, status: 204, conditional: true,
  }),
  route({
    method: 'POST', url: '/api/v1/views/:viewId/query', op: ViewsOps.query,
    input: (req) => ({ ...req.body, viewId: req.params.viewId! }),
    summary: "Run a view for the caller (its functions resolved for the caller: a shared 'assigned to me' view is each reader's own)",
    tag: 'views', maturity: 'draft', params: ViewParams, body: ViewQueryBody, response: ViewQueryResult,
  }),
];
