import { randomUUID } from 'node:crypto';
import { callerId, type CallContext, type Handler } from '@app/shared/bus';
import type { WebhooksOps } from '@app/shared/contracts';
import { auditHost, loadBoard, loadPrincipal, runWrite, type HandlerFactories, type ServiceDeps } from '@app/shared/domain';
import { AppError, invalidField } from '@app/shared/errors';
import { isEventType, lastSeq } from '@app/shared/events';
import { checkFunctionContext, parseQuery } from '@app/shared/query';
import type { DocumentStore } from '@app/shared/store';
import { deliveriesOf, newSecret, NO_LEASE, toDelivery, toWebhook, webhooksOf, type WebhookDoc } from '../webhooks/model.js';
import { checkTarget, targetPolicy } from '../webhooks/ssrf.js';
import { readableView } from './views.js';

/** Deliveries listed per webhook (the last 100). */
export const DELIVERY_LOG_SIZE = 100;

/** `events` of a webhook: known type names or `*`; 400 naming `/events/<i>` otherwise. Duplicates dropped. */
function checkEvents(events: readonly string[]): string[] {
  events.forEach((t, i) => {
    if (t !== '*' && !isEventType(t)) throw invalidField(`/events/${i}`, `unknown event type "${t}" (see docs/events.md, or "*" for all)`, 'unknown-type');
  });
  return events.includes('*') ? ['*'] : [...new Set(events)];
}

/**
 * Parses a webhook query (docs/architecture.md §6): 400 `QUERY_SYNTAX` / `QUERY_UNKNOWN_FIELD` /
 * `QUERY_UNKNOWN_FUNCTION` with the position; a bare `activeSprint()` needs the webhook's
 * `board_id` (400 `QUERY_FUNCTION_CONTEXT`). Functions stay as written; each delivery check
 * resolves them for the owner.
 */
function checkQuery(query: string, boardId: string | undefined): void {
  checkFunctionContext(parseQuery(query), { board: boardId !== undefined && boardId !== '' });
}

/** 400 for a webhook that would filter by both a query and a saved view. */
function bothQueryAndView(): AppError {
  return invalidField('/view_id', 'a webhook filters by `query` or by `view_id`, not both (clear one with "")', 'exclusive');
}

/**
 * What the audit log records of a webhook (docs/audit.md): its target's host only (a URL's
 * credentials, path and query may hold secrets), events, board and state; never its secret.
 */
function webhookAudit(hook: WebhookDoc): Record<string, unknown> {
  return { host: auditHost(hook.url), events: hook.events, active: hook.active, ...(hook.board_id !== undefined ? { board_id: hook.board_id } : {}) };
}

/** The caller's webhook `id`, or 404 `WEBHOOK_NOT_FOUND` (also for another user's). */
async function ownWebhook(store: DocumentStore, ctx: CallContext, id: string): Promise<WebhookDoc> {
  const hook = await webhooksOf(store).findOne({ _id: id });
  if (!hook || hook.owner_id !== callerId(ctx)) throw new AppError('WEBHOOK_NOT_FOUND', { details: { webhookId: id } });
  return hook;
}

/**
 * `POST /api/v1/webhooks`: checks the URL (http(s); the SSRF rules unless `WEBHOOK_ALLOW_PRIVATE=true`: 400
 * `WEBHOOK_URL_REFUSED`), the event types (400 naming `/events/<i>`), the board (404 when the
 * caller cannot read it), the query (400 with its position) or the saved view (`view_id`, 404
 * `VIEW_NOT_FOUND` unless the caller can read it; not together with a query); stores the webhook with a new
 * `whsec_` secret, returned this once. Only events committed after creation are delivered.
 * Create, update and delete record `webhook.*` entries in the audit log, in their transaction.
 */
const create =
  (deps: ServiceDeps): Handler<typeof WebhooksOps.create> =>
  async (input, ctx) => {
    const { store, clock, config } = deps;
    const owner = callerId(ctx);
    const events = checkEvents(input.events);
    if (input.query !== undefined && input.view_id !== undefined && input.query.trim() !== '') throw bothQueryAndView();
    if (input.query !== undefined) checkQuery(input.query, input.board_id);
    if (input.view_id !== undefined) await readableView(store, await loadPrincipal(store, owner), input.view_id);
    const url = (await checkTarget(input.url, targetPolicy(config))).href;
    if (input.board_id !== undefined) await loadBoard(store, owner, input.board_id, 'read');
    const iso = clock.now().toISOString();
    const doc: WebhookDoc = {
      _id: randomUUID(), owner_id: owner, url, events, secret: newSecret(), active: input.active ?? true,
      after_seq: await lastSeq(store), created_at: iso, updated_at: iso,
      ...(input.board_id !== undefined ? { board_id: input.board_id } : {}),
      ...(input.query !== undefined && input.query.trim() !== '' ? { query: input.query } : {}),
      ...(input.view_id !== undefined ? { view_id: input.view_id } : {}),
    };
    return runWrite(deps, ctx, async (w) => {
      await webhooksOf(store).insertOne(doc, { session: w.session });
      w.audit({ action: 'webhook.create', target: `webhook:${doc._id}`, details: webhookAudit(doc) });
      return { ...toWebhook(doc), secret: doc.secret };
    });
  };

/** `GET /api/v1/webhooks`: the caller's webhooks, oldest first. */
const list =
  ({ store }: ServiceDeps): Handler<typeof WebhooksOps.list> =>
  async (_input, ctx) => ({
    data: (await webhooksOf(store).find({ owner_id: callerId(ctx) }, { sort: { created_at: 1, _id: 1 } })).map(toWebhook),
  });

/** `GET /api/v1/webhooks/{id}`: one of the caller's webhooks (404 otherwise). */
const get =
  ({ store }: ServiceDeps): Handler<typeof WebhooksOps.get> =>
  async (input, ctx) => toWebhook(await ownWebhook(store, ctx, input.webhookId));

/**
 * `PATCH /api/v1/webhooks/{id}`: changes the fields the body carries, checked as on create;
 * `""` clears `board_id` or `query`; `active: true` re-enables a disabled webhook (its failure
 * clock restarts), `active: false` pauses it (pending deliveries wait).
 */
const update =
  (deps: ServiceDeps): Handler<typeof WebhooksOps.update> =>
  async (input, ctx) => {
    const { store, clock, config } = deps;
    const hook = await ownWebhook(store, ctx, input.webhookId);
    const set: Record<string, unknown> = { updated_at: clock.now().toISOString() };
    const unset: Record<string, ''> = {};
    if (input.events !== undefined) set.events = checkEvents(input.events);
    if (input.url !== undefined) {
      set.url = (await checkTarget(input.url, targetPolicy(config))).href;
    }
    if (input.query !== undefined) {
      if (input.query.trim() === '') unset.query = '';
      else {
        checkQuery(input.query, input.board_id ?? hook.board_id);
        set.query = input.query;
      }
    }
    if (input.view_id !== undefined) {
      if (input.view_id === '') unset.view_id = '';
      else {
        await readableView(store, await loadPrincipal(store, hook.owner_id), input.view_id);
        set.view_id = input.view_id;
      }
    }
    const query = set.query !== undefined || (hook.query !== undefined && unset.query === undefined);
    const view = set.view_id !== undefined || (hook.view_id !== undefined && unset.view_id === undefined);
    if (query && view) throw bothQueryAndView();
    if (input.board_id !== undefined) {
      if (input.board_id === '') unset.board_id = '';
      else {
        await loadBoard(store, hook.owner_id, input.board_id, 'read');
        set.board_id = input.board_id;
      }
    }
    if (input.active !== undefined) {
      set.active = input.active;
      if (input.active) {
        unset.disabled_reason = '';
        unset.failing_since = '';
      }
    }
    return runWrite(deps, ctx, async (w) => {
      const updated = await webhooksOf(store).findOneAndUpdate(
        { _id: hook._id },
        Object.keys(unset).length ? { $set: set, $unset: unset } : { $set: set },
        { returnDocument: 'after', session: w.session },
      );
      if (!updated) throw new AppError('WEBHOOK_NOT_FOUND', { details: { webhookId: input.webhookId } });
      w.audit({ action: 'webhook.update', target: `webhook:${hook._id}`, details: { ...webhookAudit(updated), changed: Object.keys(input).filter((k) => k !== 'webhookId').sort() } });
      return toWebhook(updated);
    });
  };

/** `DELETE /api/v1/webhooks/{id}`: removes the webhook and its deliveries in one transaction (with its audit entry). */
const remove =
  (deps: ServiceDeps): Handler<typeof WebhooksOps.remove> =>
  async (input, ctx) => {
    const { store } = deps;
    const hook = await ownWebhook(store, ctx, input.webhookId);
    return runWrite(deps, ctx, async ({ session, audit }) => {
      await webhooksOf(store).deleteOne({ _id: hook._id }, { session });
      await deliveriesOf(store).deleteMany({ webhook_id: hook._id }, { session });
      audit({ action: 'webhook.delete', target: `webhook:${hook._id}`, details: webhookAudit(hook) });
      return null;
    });
  };

/** `GET /api/v1/webhooks/{id}/deliveries`: the last 100 deliveries, newest event first, with their attempts. */
const deliveries =
  ({ store }: ServiceDeps): Handler<typeof WebhooksOps.deliveries> =>
  async (input, ctx) => {
    const hook = await ownWebhook(store, ctx, input.webhookId);
    const docs = await deliveriesOf(store).find({ webhook_id: hook._id }, { sort: { seq: -1 }, limit: DELIVERY_LOG_SIZE });
    return { data: docs.map(toDelivery) };
  };

/**
 * `POST /api/v1/webhooks/{id}/deliveries/{deliveryId}/retry`: makes the delivery due now (same
 * `webhook-id`, one more attempt). A pending delivery gets that attempt on top of its schedule:
 * if it fails, the scheduled retries go on as before (it does not count against
 * `WEBHOOK_MAX_ATTEMPTS`). A failed or delivered delivery goes back to pending for that one
 * attempt. 404 `DELIVERY_NOT_FOUND` for a delivery of another webhook.
 */
const retry =
  ({ store, clock }: ServiceDeps): Handler<typeof WebhooksOps.retry> =>
  async (input, ctx) => {
    const hook = await ownWebhook(store, ctx, input.webhookId);
    const iso = clock.now().toISOString();
    const notFound = () => new AppError('DELIVERY_NOT_FOUND', { details: { webhookId: hook._id, deliveryId: input.deliveryId } });
    const current = await deliveriesOf(store).findOne({ _id: input.deliveryId, webhook_id: hook._id });
    if (!current) throw notFound();
    const pending = current.status === 'pending';
    const change = pending
      ? { next_attempt_at: iso, lease_until: NO_LEASE, bonus: true, resume_at: current.bonus === true ? (current.resume_at ?? current.next_attempt_at) : current.next_attempt_at, updated_at: iso }
      : { status: 'pending' as const, next_attempt_at: iso, lease_until: NO_LEASE, manual: true, updated_at: iso };
    // conditional on the state read, so an attempt recorded meanwhile is not overwritten
    const updated = await deliveriesOf(store).findOneAndUpdate(
      { _id: current._id, webhook_id: hook._id, status: current.status, attempt: current.attempt },
      { $set: change },
      { returnDocument: 'after' },
    );
    if (!updated) {
      const now = await deliveriesOf(store).findOne({ _id: input.deliveryId, webhook_id: hook._id });
      if (!now) throw notFound();
      return toDelivery(now);
    }
    return toDelivery(updated);
  };

/** Handler factories of {@link WebhooksOps}. */
export const webhookHandlers: HandlerFactories<typeof WebhooksOps> = { create, list, get, update, remove, deliveries, retry };
