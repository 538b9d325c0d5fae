import {
  CardLease, ClaimBody, ClaimParams, LeaseCompleteBody, LeaseCompleteResult, LeaseReleaseBody, LeaseRenewBody, LeasesOps, LeaseTaskParams, Task,
} from '@app/shared/contracts';
import { route, type RouteSpec } from './route.js';

const leases = { tag: 'leases', maturity: 'live' } as const;
const taskId = (params: Record<string, string>) => params.taskId!;

/**
 * Routes of cards claimed under a lease (docs/boards.md "Claiming a card under a lease"), served by
 * the boards service: the claim of a column's first free card, and renew / complete / release of a
 * lease on one card. Target paths only. Every op input is `{...body, ...path params}`.
 */
export const leaseRoutes: RouteSpec[] = [
  route({
    ...leases,
    method: 'POST',
    url: '/api/v1/boards/:boardId/columns/:columnId/claim',
    op: LeasesOps.claim,
    input: (req) => ({ ...(req.body as ClaimBody), boardId: req.params.boardId!, columnId: req.params.columnId! }),
    summary: 'Claim the first card of a column (column order, optionally narrowed by a query) that has no live lease: 200 {lease_id, expires_at, task}, or 204 when none is free',
    params: ClaimParams,
    body: ClaimBody,
    response: CardLease,
    noContentWhenNull: true,
  }),
  route({
    ...leases,
    method: 'POST',
    url: '/api/v1/tasks/:taskId/lease/renew',
    op: LeasesOps.renew,
    input: (req) => ({ ...(req.body as LeaseRenewBody), taskId: taskId(req.params) }),
    summary: 'Renew a live lease the caller holds: it expires lease_seconds from now (409 LEASE_NOT_HELD / LEASE_EXPIRED otherwise)',
    params: LeaseTaskParams,
    body: LeaseRenewBody,
    response: CardLease,
  }),
  route({
    ...leases,
    method: 'POST',
    url: '/api/v1/tasks/:taskId/lease/complete',
    op: LeasesOps.complete,
    input: (req) => ({ ...(req.body as LeaseCompleteBody), taskId: taskId(req.params) }),
    summary: 'Complete a card under the caller\'s live lease: the lease ends (card.released, completed), and with to_column_id the card moves from its claim column as a move does',
    params: LeaseTaskParams,
    body: LeaseCompleteBody,
    response: LeaseCompleteResult,
  }),
  route({
    ...leases,
    method: 'POST',
    url: '/api/v1/tasks/:taskId/lease/release',
    op: LeasesOps.release,
    input: (req) => ({ ...(req.body as LeaseReleaseBody), taskId: taskId(req.params) }),
    summary: 'Release a live lease the caller holds, leaving the card unchanged (card.released, released); the card is claimable again',
    params: LeaseTaskParams,
    body: LeaseReleaseBody,
    response: Task,
  }),
];
