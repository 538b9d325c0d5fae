import type { Handler } from '@app/shared/bus';
import type { BatchItemResult, Task, TasksOps } from '@app/shared/contracts';
import { runWrite, type ServiceDeps, type WriteUnit } from '@app/shared/domain';
import { AppError } from '@app/shared/errors';
import { createTaskIn } from './create.js';
import { updateTaskIn } from './update.js';

/**
 * Batch writes (docs/concurrency.md): every item obeys the rules and
 * access checks of its single request and answers what that request would have (status, task or
 * error body), in input order. The whole batch is ONE unit of work (one transaction, one
 * Idempotency-Key record): an item's checks all come before its one write, so a failed item has
 * written nothing and the others stand (`atomic: false`). With `atomic: true` the first failed
 * item rolls everything back: it keeps its error, every other item answers 424
 * `BATCH_ITEM_NOT_APPLIED` naming it, and no event is emitted. A store fault fails the batch (503);
 * a transient transaction error reruns the whole batch (the store's `withTransaction` retries it).
 */
async function runItems(
  w: WriteUnit,
  atomic: boolean,
  count: number,
  okStatus: number,
  item: (i: number) => Promise<Task>,
): Promise<{ results: BatchItemResult[] }> {
  const results: BatchItemResult[] = [];
  for (let index = 0; index < count; index++) {
    try {
      results.push({ index, status: okStatus, task: await item(index) });
    } catch (err) {
      // Only an item's own 4xx answer stays with the item. Anything else fails the whole batch as it
      // was thrown: a store fault is a 503, and a transient transaction error (a MongoDB write
      // conflict or network error, labelled TransientTransactionError) must reach the store's
      // withTransaction unchanged so the batch is rerun, as a single write would be.
      if (!AppError.is(err) || err.status >= 500) throw err;
      results.push(failedItem(index, err));
      if (atomic) w.rollbackWith({ results: notApplied(count, index, results[index]!) });
    }
  }
  return { results };
}

/** The result of item `index` that answers `err`: the status of its code in the error catalogue, and its error body. */
function failedItem(index: number, err: AppError): BatchItemResult {
  const { code, message, details, validationErrors, extra } = err.toWire();
  const error = { ...extra, code, message, ...(details ? { details } : {}), ...(validationErrors ? { validationErrors } : {}) };
  return { index, status: err.status, error };
}

/**
 * The results of an atomic batch whose item `failed` failed: that item's error, and for every
 * other `BATCH_ITEM_NOT_APPLIED` (424 in the error catalogue, docs/errors.md) naming it.
 */
function notApplied(count: number, failed: number, failure: BatchItemResult): BatchItemResult[] {
  const notTried = new AppError('BATCH_ITEM_NOT_APPLIED', {
    message: `Not applied: item ${failed} of this atomic batch failed, so nothing was written`,
    details: { failed_index: failed },
  });
  return Array.from({ length: count }, (_, index) => (index === failed ? failure : failedItem(index, notTried)));
}

/** `tasks.createBatch`: `POST /tasks/batch`, 1..100 creates (each 201 or its error). */
export const createBatch = (deps: ServiceDeps): Handler<typeof TasksOps.createBatch> => async ({ tasks, atomic = false }, ctx) =>
  runWrite(deps, ctx, (w) => runItems(w, atomic, tasks.length, 201, (i) => createTaskIn(deps, w, tasks[i]!)));

/** `tasks.updateBatch`: `PATCH /tasks/batch`, 1..100 updates (each 200 or its error; `if_match` as the header). */
export const updateBatch = (deps: ServiceDeps): Handler<typeof TasksOps.updateBatch> => async ({ updates, atomic = false }, ctx) =>
  runWrite(deps, ctx, (w) =>
    runItems(w, atomic, updates.length, 200, (i) => {
      const u = updates[i]!;
      return updateTaskIn(deps, w, u.if_match, u.id, u.changes);
    }),
  );

/** The outcome of one item of a batch: its value, or the 4xx it would have answered alone. */
export type Settled<T> = { ok: true; value: T } | { ok: false; error: AppError };

/**
 * Runs `item(i)` for i in 0..count-1, in order, inside one unit of work: each item's checks come
 * before its one write, so a failed item has written nothing and the others stand. A 4xx is that
 * item's outcome; a 5xx (store fault) fails the whole batch (503) and a transient transaction
 * error reruns it, as in {@link runItems}.
 */
export async function settleEach<T>(count: number, item: (i: number) => Promise<T>): Promise<Array<Settled<T>>> {
  const out: Array<Settled<T>> = [];
  for (let i = 0; i < count; i++) {
    try {
      out.push({ ok: true, value: await item(i) });
    } catch (e) {
      // only an item's own 4xx stays with the item; a store fault or a transient transaction
      // error reaches withTransaction unchanged (503, or the whole batch rerun), as in runItems
      if (!AppError.is(e) || e.status >= 500) throw e;
      out.push({ ok: false, error: e });
    }
  }
  return out;
}

/** `CODE: message` of a failed item, as the batch family's `error` strings carry it. */
export function errorText(e: AppError): string {
  return `${e.code}: ${e.message}`;
}
