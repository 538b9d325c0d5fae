import { callerId, type CallContext, type Handler } from '@app/shared/bus';
import type { BoardsOps, CardMoveResult, WipState } from '@app/shared/contracts';
import {
  boardScope, checkTaskUpdateFields, fieldTypesFor, typedColumns, boardScopeFilter, canReadTask, checkIfMatch, checkSprintChange, columnOf, loadBoard, canWriteTask, mergeMoveActions, nextVersion, planMove, resolveFor,
  runWrite, toTask, versionGuard, versionOf,
  type BoardDoc, type ColumnDef, type LoadedBoard, type MovePlan, type Principal, type ServiceDeps, type TaskDoc, type WriteUnit,
} from '@app/shared/domain';
import { AppError } from '@app/shared/errors';
import { buildEffectiveQuery, compileQuery, namesCustomFields, queryMatches, type Query } from '@app/shared/query';
import { Collections, type Collection, type Filter, type Session, type Update } from '@app/shared/store';
import { checkWip, guardEntry } from '../wip.js';

/** Conditional writes tried before a card whose tags keep changing under us is reported as 409 `CONFLICT`. */
const MAX_ATTEMPTS = 3;

/**
 * `boards.move` (docs/boards.md "Card move"; docs/architecture.md §7). Needs board write
 * access and task write access (403). The card is read with the source filter `{_id, deleted:false}
 * AND board scope AND compiled(from column query + default_tags)`: no match → 409
 * `KANBAN_TASK_NOT_IN_SOURCE_COLUMN` with the current `task` snapshot (404 `TASK_NOT_FOUND` when
 * the caller cannot read it at all). The merged actions are applied to that read; if the result
 * would not match the target column (query + default_tags) → 422, nothing written. `dry_run`
 * stops there. Otherwise ONE `findOneAndUpdate` with the same source filter plus the card's
 * version as read (the `If-Match` check, made on that read, and the source-column check
 * are one conditional write) writes it and bumps the version; if it no longer matches, the card is
 * read again and the move re-planned or refused. The card read, the write and its one
 * `card.moved` event are one transaction ({@link runWrite}). A target column with a `wip_limit`
 * is counted in the same transaction: `block` at the limit → 409 `WIP_LIMIT_REACHED` (dry runs
 * too); otherwise the reply and the event carry `wip` (docs/boards.md "WIP limits").
 */
export function moveCard(deps: ServiceDeps): Handler<typeof BoardsOps.move> {
  return async ({ boardId, taskId, from_column_id, to_column_id, dry_run = false }, ctx) => {
    const loaded = await loadBoard(deps.store, callerId(ctx), boardId, 'write');
    return runWrite(deps, ctx, async (w) => (await moveInWrite(deps, ctx, w, loaded, { taskId, from_column_id, to_column_id, dry_run })).result);
  };
}

/** What {@link moveInWrite} moves, and what the completion of a lease adds to the move's write. */
export interface MoveRequest {
  taskId: string;
  from_column_id: string;
  to_column_id: string;
  dry_run?: boolean;
  /** More conditions of the one conditional write (a lease complete: the lease is still the caller's). */
  guard?: Filter;
  /** Fields the write also removes (a lease complete: `lease`). */
  unset?: Record<string, ''>;
}

/**
 * The move itself, inside the write unit `w` of the caller (see {@link moveCard} for the rules and
 * errors): reads the card in the source column, plans, checks the target, writes it with ONE
 * conditional `findOneAndUpdate` (plus `req.guard`, removing `req.unset`) and emits `card.moved`.
 * Returns the reply and the card as written (`after`; absent on a dry run). Used by the move and by
 * the completion of a lease (docs/boards.md "Claiming a card under a lease"), so both apply the
 * column actions the same way.
 */
export async function moveInWrite(
  deps: ServiceDeps, ctx: CallContext, w: WriteUnit, { board, principal }: LoadedBoard, req: MoveRequest,
): Promise<{ result: CardMoveResult; after?: TaskDoc }> {
  const { store } = deps;
  const tasks = store.collection<TaskDoc>(Collections.tasks);
  const { taskId, from_column_id, to_column_id, dry_run = false } = req;
  const from = columnOf(board, from_column_id);
  const to = columnOf(board, to_column_id);
  const { session, now } = w;
  // column functions resolve for the mover on this board (`assignee = me()`: the mover's cards),
  // one column after the other: their look-ups read in this transaction (docs/store.md "Transactions")
  const resolve = (q: Query) => resolveFor(store, principal, q, { now, board, session });
  const source = await resolve(columnQuery(board, from));
  const target = await resolve(columnQuery(board, to));
  // the custom fields of the board's scope type both columns' queries (docs/custom-fields.md)
  const fields = namesCustomFields(source) || namesCustomFields(target) ? await fieldTypesFor(store, principal, { board, session }) : undefined;
  const inSource: Filter = {
    $and: [{ _id: taskId, deleted: false }, boardScopeFilter(board, principal), compileQuery(source, { now, ...(fields ? { fields } : {}) }).filter],
  };
  // the columns' actions set custom fields in their stored form (a select's label → its id)
  const [typedFrom, typedTo] = await typedColumns(store, boardScope(board), [from, to], session);
  const effect = mergeMoveActions(typedFrom!, typedTo!);
  let wip: WipState | null | undefined;

  for (let attempt = 1; ; attempt++) {
    const task = await tasks.findOne(inSource, { session });
    if (!task) throw await notInSource(tasks, principal, taskId, from_column_id, session);
    if (!canWriteTask(principal, task)) throw new AppError('FORBIDDEN', { message: 'You may read this card but not change it', details: { taskId } });
    checkIfMatch(ctx.ifMatch, versionOf(task), { taskId });
    const plan = planMove(task, effect, principal.userId, now);
    // values the column actions set obey the card's custom field definitions
    await checkTaskUpdateFields(store, task, plan.update.$set as Record<string, unknown>, session);
    if (!queryMatches(target, plan.after, now, fields)) {
      throw new AppError('KANBAN_TARGET_COLUMN_UNREACHABLE', {
        message: `The card would not match column ${to_column_id} after the move; change the column's actions or the card first`,
        details: { taskId, to_column_id },
      });
    }
    // a column action that puts the card into a sprint obeys the sprint rule (docs/sprints.md)
    await checkSprintChange(store, principal.userId, task, plan.update, '/to_column_id', session);
    // the target's WIP limit, counted once per move (docs/boards.md "WIP limits"); `block` refuses, dry runs included
    if (wip === undefined && from_column_id !== to_column_id) wip = (await checkWip(store, principal, board, to, now, session, taskId)) ?? null;
    if (dry_run) return { result: moveResult(plan, versionOf(task), wip) };
    // an entry into a blocking column conflicts with any concurrent one (docs/boards.md "WIP limits")
    if (attempt === 1 && from_column_id !== to_column_id) await guardEntry(store, board, to, now, session);
    // pinned at the version planned from: the plan (tags included) is exact for what it replaces
    const guard = { $and: [inSource, versionGuard(task), ...(req.guard ? [req.guard] : [])] };
    const version = nextVersion(task);
    const update: Update = { ...plan.update, $set: { ...(plan.update.$set as Record<string, unknown>), ...version } };
    if (req.unset) update.$unset = { ...(plan.update.$unset as Record<string, ''> | undefined), ...req.unset };
    const after = await tasks.findOneAndUpdate(guard, update, { returnDocument: 'after', session });
    if (after) {
      const result = moveResult(plan, version.version, wip);
      w.emit({
        type: 'card.moved', task_id: taskId, board_id: board._id,
        data: { board_id: board._id, from_column_id, to_column_id, applied_actions: result.applied_actions, ...(wip ? { wip } : {}), task: toTask(after) },
      });
      return { result, after };
    }
    if (attempt === MAX_ATTEMPTS) {
      throw new AppError('CONFLICT', { message: 'The card kept changing during the move; read it again and retry', details: { taskId } });
    }
  }
}

/** The effective query of a column without sprint or filter: column query AND default_tags (docs/architecture.md §7). */
function columnQuery(board: BoardDoc, column: ColumnDef) {
  return buildEffectiveQuery({ column: column.query, defaultTags: board.default_tags }).query;
}

/** The error for a card not found by the source filter: 409 with its snapshot when readable, else 404. */
async function notInSource(tasks: Collection<TaskDoc>, p: Principal, taskId: string, fromColumnId: string, session: Session): Promise<AppError> {
  const current = await tasks.findOne({ _id: taskId, deleted: false }, { session });
  if (!current || !canReadTask(p, current)) return new AppError('TASK_NOT_FOUND', { details: { taskId } });
  return new AppError('KANBAN_TASK_NOT_IN_SOURCE_COLUMN', {
    message: `The card is no longer in column ${fromColumnId}; refresh the board and retry`,
    details: { taskId, from_column_id: fromColumnId },
    extra: { task: { id: current._id, status: current.status, tags: current.tags } },
  });
}

function moveResult(plan: MovePlan, version: number, wip: WipState | null | undefined): CardMoveResult {
  const { _id, title, status, tags } = plan.after;
  return { task: { id: _id, title, status, tags, version }, applied_actions: plan.applied, ...(wip ? { wip } : {}) };
}
