import { callerId, type Handler } from '@app/shared/bus';
import type { BatchOutcome, BatchOutcomeItem, Task, TasksOps, TaskUpdateBody, UpsertItem, UpsertOutcomeItem } from '@app/shared/contracts';
import {
  checkTaskRefs, distinct, isUuid, loadPrincipal, normalizeDate, readableTasksFilter, runWrite, taskPatchUpdate, taskUpdatedEvent, toTask,
  validateTitle, type ServiceDeps, type TaskDoc,
} from '@app/shared/domain';
import { AppError, invalidField } from '@app/shared/errors';
import { Collections, metadataPath, type Doc } from '@app/shared/store';
import { loadTask, tasksOf, writeTask } from '../task-store.js';
import { errorText, settleEach, type Settled } from './batch.js';
import { createTaskIn } from './create.js';
import { removeTaskIn } from './remove.js';
import { updateTaskIn } from './update.js';

/*
 * The batch family of ud's clients (Swagger `/todolist/batch*`; docs/tasks.md "Batch family"):
 * every id or item is checked as its single request would be (access per item: an unreadable
 * task is 404, a read-only one 403), and one item's failure is its result while the others stand.
 * Each write batch is ONE unit of work (`runWrite`: one transaction, its events, one
 * Idempotency-Key record) run item by item through `settleEach`; a store fault fails it (503).
 */

/** The metadata key the upsert matches on. */
export const OBSIDIAN_PATH = 'obsidianPath';

/** The id batches' reply from the outcome of each id, in input order. */
function outcome(ids: readonly string[], settled: ReadonlyArray<Settled<unknown>>): BatchOutcome {
  const results = settled.map((s, i): BatchOutcomeItem =>
    s.ok ? { id: ids[i]!, success: true } : { id: ids[i]!, success: false, error: errorText(s.error), code: s.error.code, status: s.error.status },
  );
  const successCount = results.filter((r) => r.success).length;
  return { totalCount: results.length, successCount, failCount: results.length - successCount, results };
}

/**
 * Re-throws a 400 of a body part checked once for the whole batch with its fields under `at`
 * (`/title` → `/updates/title`), so the answer names the field as the client sent it.
 */
function under(at: string, e: unknown): never {
  if (!AppError.is(e) || e.status !== 400) throw e;
  const validationErrors = e.validationErrors?.map((v) => ({ ...v, field: `${at}${v.field}` }));
  throw new AppError(e.code, {
    message: `${at.slice(1)}/${e.message}`,
    ...(e.details ? { details: e.details } : {}),
    ...(validationErrors ? { validationErrors } : {}),
  });
}

/**
 * `tasks.getMany` (`POST /tasks/batch-get`, legacy `POST /todolist/batch`): the live tasks among
 * `ids` that the caller can read, in the order of the ids (a repeated id once); the others are
 * left out, never reported (docs/architecture.md §4). One read.
 */
export const getMany = ({ store }: ServiceDeps): Handler<typeof TasksOps.getMany> => async ({ ids }, ctx) => {
  const wanted = distinct(ids).filter(isUuid);
  if (wanted.length === 0) return { items: [] };
  const p = await loadPrincipal(store, callerId(ctx));
  const docs = await tasksOf(store).find({ $and: [readableTasksFilter(p), { _id: { $in: wanted } }] });
  const byId = new Map(docs.map((d) => [d._id, d]));
  return { items: wanted.flatMap((id) => { const d = byId.get(id); return d ? [toTask(d)] : []; }) };
};

/**
 * `tasks.updateMany` (`POST /tasks/batch-update`): the same changes (a task PATCH body, checked
 * once: a bad field is a 400 naming `/updates/<field>`, nothing written) applied to each id as
 * its single PATCH would (404/403 per id).
 */
export const updateMany = (deps: ServiceDeps): Handler<typeof TasksOps.updateMany> => async ({ ids, updates }, ctx) => {
  try {
    taskPatchUpdate(updates, callerId(ctx), new Date(0));
  } catch (e) {
    under('/updates', e);
  }
  const each = distinct(ids);
  return runWrite(deps, ctx, async (w) => outcome(each, await settleEach(each.length, (i) => updateTaskIn(deps, w, undefined, each[i]!, updates))));
};

/**
 * `tasks.updateEach` (`PATCH /tasks/batch-update-each`): per item, the task's `description`
 * and/or its links (`links_to` replaces `linkedToIds`; every id must be a task the caller can
 * read, else that item fails naming `/items/<i>/links_to/<j>`). Write access per item. An item
 * with nothing to change succeeds without a write.
 */
export const updateEach = (deps: ServiceDeps): Handler<typeof TasksOps.updateEach> => async ({ items }, ctx) =>
  runWrite(deps, ctx, async (w) => {
    const settled = await settleEach(items.length, async (i) => {
      const item = items[i]!;
      const { task, principal } = await loadTask(deps.store, { userId: w.userId, ifMatch: undefined }, item.id, 'write', w.session);
      const $set: Record<string, unknown> = {};
      if (item.description !== undefined) $set.description = item.description;
      if (item.links_to !== undefined) {
        const links = distinct(item.links_to);
        const self = links.indexOf(task._id);
        if (self >= 0) throw invalidField(`/items/${i}/links_to/${item.links_to.indexOf(task._id)}`, 'a task cannot link to itself', 'self');
        await checkTaskRefs(deps.store, await principal(), item.links_to.map((id, j) => ({ field: `/items/${i}/links_to/${j}`, id })), w.session);
        $set.linkedToIds = links;
      }
      if (Object.keys($set).length === 0) return;
      const after = await writeTask(deps.store, w, task, { $set: { ...$set, updated_at: w.now.toISOString(), updated_by: w.userId } });
      const event = taskUpdatedEvent(task, after);
      if (event) w.emit(event);
    });
    return outcome(items.map((it) => it.id), settled);
  });

/** `tasks.deleteMany` (`POST /tasks/batch-delete`): soft-deletes each id as its single DELETE would (404/403 per id). */
export const deleteMany = (deps: ServiceDeps): Handler<typeof TasksOps.deleteMany> => async ({ ids }, ctx) => {
  const each = distinct(ids);
  return runWrite(deps, ctx, async (w) => outcome(each, await settleEach(each.length, (i) => removeTaskIn(deps, w, undefined, each[i]!))));
};

/**
 * `tasks.transfer` (`POST /tasks/batch-transfer`): gives each task to `newOwnerId`, which must be
 * a user (else 400 naming `/newOwnerId`, nothing written). Per id: unreadable → 404; readable but
 * not the caller's own → 403 `FORBIDDEN` (only the owner may transfer, a group member with `rw`
 * cannot). The task keeps its group sharing; the caller then sees it only through that group.
 * Emits `task.updated` (`created_by`).
 */
export const transfer = (deps: ServiceDeps): Handler<typeof TasksOps.transfer> => async ({ ids, newOwnerId }, ctx) => {
  const user = await deps.store.collection<Doc>(Collections.users).findOne({ _id: newOwnerId }, { projection: { _id: 1 } });
  if (!user) throw invalidField('/newOwnerId', `no user with id "${newOwnerId}"`, 'not_found');
  const each = distinct(ids);
  return runWrite(deps, ctx, async (w) =>
    outcome(each, await settleEach(each.length, async (i) => {
      const { task } = await loadTask(deps.store, { userId: w.userId, ifMatch: undefined }, each[i]!, 'read', w.session);
      if (task.created_by !== w.userId) throw new AppError('FORBIDDEN', { message: 'Only the owner of a task may transfer it', details: { taskId: task._id } });
      if (newOwnerId === w.userId) return;
      const after = await writeTask(deps.store, w, task, { $set: { created_by: newOwnerId, updated_at: w.now.toISOString(), updated_by: w.userId } });
      const event = taskUpdatedEvent(task, after);
      if (event) w.emit(event);
    })),
  );
};

/** The `obsidianPath` of an upsert item, or a 400 naming it. */
function obsidianPathOf(item: UpsertItem, i: number): string {
  const v = (item.metadata as Record<string, unknown> | undefined)?.[OBSIDIAN_PATH];
  if (typeof v !== 'string' || v === '') throw invalidField(`/items/${i}/metadata/${OBSIDIAN_PATH}`, 'must be a non-empty string: the key the item is matched on', 'required');
  return v;
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * True when applying `patch` to `current` changes nothing a client sees (normalized as the write
 * would: trimmed title, distinct tags, UTC dates; metadata compared key by key).
 */
function changesNothing(current: Task, patch: TaskUpdateBody): boolean {
  if (patch.title !== undefined && validateTitle(patch.title) !== current.title) return false;
  if (patch.description !== undefined && patch.description !== (current.description ?? '')) return false;
  if (patch.status !== undefined && patch.status !== current.status) return false;
  if (patch.tags !== undefined && !same(distinct(patch.tags), current.tags)) return false;
  if (patch.assignee !== undefined && patch.assignee !== (current.assignee ?? '')) return false;
  for (const f of ['kickoff', 'deadline'] as const) {
    const v = patch[f];
    if (v !== undefined && (v === '' ? current[f] !== undefined : normalizeDate(`/${f}`, v) !== current[f])) return false;
  }
  return Object.entries(patch.metadata ?? {}).every(([k, v]) => same(v, (current.metadata as Record<string, unknown>)[k]));
}

/**
 * `tasks.upsert` (`POST /tasks/batch-upsert`): each item is matched on `metadata.obsidianPath`
 * among the caller's own live tasks (oldest first when several match). No match → created (as
 * `POST /tasks`); a match whose sent fields already hold → `skipped` (no write); otherwise
 * `updated` (the sent fields, as a PATCH). An item without `obsidianPath`, or failing the rules
 * of its create or update, is `failed` with its error; the others stand. Items of one batch see
 * each other (a repeated path updates or skips the task the batch just created).
 */
export const upsert = (deps: ServiceDeps): Handler<typeof TasksOps.upsert> => async ({ items }, ctx) =>
  runWrite(deps, ctx, async (w) => {
    const tasks = tasksOf(deps.store);
    const settled = await settleEach(items.length, async (i): Promise<UpsertOutcomeItem> => {
      const item = items[i]!;
      const obsidianPath = obsidianPathOf(item, i);
      const [match] = await tasks.find(
        { created_by: w.userId, deleted: false, [metadataPath(OBSIDIAN_PATH)]: obsidianPath },
        { sort: { created_at: 1, _id: 1 }, limit: 1, session: w.session },
      );
      if (!match) return { action: 'created', id: (await createTaskIn(deps, w, item)).id, obsidianPath };
      if (changesNothing(toTask(match as TaskDoc), item)) return { action: 'skipped', id: match._id, obsidianPath };
      await updateTaskIn(deps, w, undefined, match._id, item);
      return { action: 'updated', id: match._id, obsidianPath };
    });
    const results = settled.map((s, i): UpsertOutcomeItem => {
      if (s.ok) return s.value;
      const path = (items[i]!.metadata as Record<string, unknown> | undefined)?.[OBSIDIAN_PATH];
      return { action: 'failed', ...(typeof path === 'string' ? { obsidianPath: path } : {}), error: errorText(s.error), code: s.error.code, status: s.error.status };
    });
    const count = (action: string) => results.filter((r) => r.action === action).length;
    return {
      totalCount: results.length, createdCount: count('created'), updatedCount: count('updated'), skippedCount: count('skipped'),
      failCount: count('failed'), results,
    };
  });
