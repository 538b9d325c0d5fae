import { randomUUID } from 'node:crypto';
import { callerId, type Handler } from '@app/shared/bus';
import type { SortDTO, View, ViewsOps } from '@app/shared/contracts';
import {
  boardScopeFilter, canReadBoard, checkIfMatch, fieldTypesFor, loadBoard, loadPrincipal, nextVersion, readableTasksFilter, resolveFor, runWrite, toTask,
  versionGuard, versionOf, type BoardDoc, type HandlerFactories, type Principal, type ServiceDeps,
} from '@app/shared/domain';
import { AppError, invalidField } from '@app/shared/errors';
import { checkFunctionContext, compileQuery, fieldPath, parseQuery, storedQueryError } from '@app/shared/query';
import { Collections, type Collection, type DocumentStore, type IndexSpec, type Session, type Sort } from '@app/shared/store';
import { DEFAULT_PAGE_SIZE, findPageOrdered, tasksOf } from '../reads.js';

/** A saved view as stored in `views` (docs/views.md). */
export interface ViewDoc {
  _id: string;
  owner_id: string;
  name: string;
  /** Query text as written (functions kept; resolved for each reader). */
  query: string;
  board_id?: string;
  sort?: SortDTO;
  shared: boolean;
  version: number;
  created_at: string;
  updated_at: string;
  [key: string]: unknown;
}

/** Indexes of the views: the caller's own, and the shared ones of the boards it can read. */
export const viewIndexes: IndexSpec[] = [
  { collection: Collections.views, keys: { owner_id: 1, created_at: 1 }, name: 'views_owner' },
  { collection: Collections.views, keys: { board_id: 1, shared: 1 }, name: 'views_board_shared' },
];

/** The `views` collection. */
export function viewsOf(store: DocumentStore): Collection<ViewDoc> {
  return store.collection<ViewDoc>(Collections.views);
}

function toView(doc: ViewDoc, userId: string): View {
  const v: View = {
    id: doc._id, name: doc.name, query: doc.query, shared: doc.shared, owner_id: doc.owner_id, is_owner: doc.owner_id === userId,
    version: versionOf(doc), created_at: doc.created_at, updated_at: doc.updated_at,
  };
  if (doc.board_id !== undefined) v.board_id = doc.board_id;
  if (doc.sort !== undefined) v.sort = doc.sort;
  return v;
}

/** 400 naming `/query` with the query's position, unless it parses and its functions fit where it runs. */
function checkQuery(query: string, boardId: string | undefined): void {
  try {
    checkFunctionContext(parseQuery(query), { board: boardId !== undefined });
  } catch (e) {
    if (!AppError.is(e) || e.status !== 400) throw e;
    throw new AppError(e.code, { message: `query: ${e.message}`, details: { ...e.details, field: '/query' } });
  }
}

/** 400 naming `/sort/column` for a sort on no field. */
function checkSort(sort: SortDTO): void {
  try {
    fieldPath(sort.column);
  } catch (e) {
    if (!AppError.is(e)) throw e;
    throw invalidField('/sort/column', `unknown column "${sort.column}"`, 'unknown-field');
  }
}

/** A view may be shared only through a board. */
function checkShared(shared: boolean, boardId: string | undefined): void {
  if (shared && boardId === undefined) throw invalidField('/shared', 'a view is shared through its board: set board_id too', 'requires-board');
}

/**
 * The view `id` if `p` may read it (its owner, or shared through a board `p` can read), else 404
 * `VIEW_NOT_FOUND` (an unreadable view looks like a missing one).
 */
export async function readableView(store: DocumentStore, p: Principal, id: string, session?: Session): Promise<ViewDoc> {
  const s = session ? { session } : {};
  const doc = await viewsOf(store).findOne({ _id: id }, s);
  if (doc && (doc.owner_id === p.userId || (doc.shared && doc.board_id !== undefined && (await boardReadable(store, p, doc.board_id, session))))) return doc;
  throw new AppError('VIEW_NOT_FOUND', { details: { viewId: id } });
}

async function boardReadable(store: DocumentStore, p: Principal, boardId: string, session?: Session): Promise<boolean> {
  const board = await store.collection<BoardDoc>(Collections.boards).findOne({ _id: boardId }, session ? { session } : {});
  return board !== null && canReadBoard(p, board);
}

/** The event payload: `board_id` only while shared, so an unshared view's events stay its owner's (docs/events.md). */
function viewEvent(type: 'view.created' | 'view.updated' | 'view.deleted', doc: ViewDoc) {
  return { type, ...(doc.shared && doc.board_id !== undefined ? { board_id: doc.board_id } : {}), data: { view: toView(doc, doc.owner_id) } };
}

/**
 * `POST /api/v1/views` (docs/views.md): checks the query (400 with its position, `details.field`
 * `/query`; a bare `activeSprint()` needs `board_id`), the sort column, the board (404 when the
 * caller cannot read it) and `shared` (needs `board_id`); stores the view at version 1 and emits
 * `view.created`, in one write unit.
 */
const create =
  (deps: ServiceDeps): Handler<typeof ViewsOps.create> =>
  async (input, ctx) => {
    const shared = input.shared ?? false;
    checkQuery(input.query, input.board_id);
    if (input.sort) checkSort(input.sort);
    checkShared(shared, input.board_id);
    return runWrite(deps, ctx, async (w) => {
      if (input.board_id !== undefined) await loadBoard(deps.store, w.userId, input.board_id, 'read', w.session);
      const iso = w.now.toISOString();
      const doc: ViewDoc = {
        _id: randomUUID(), owner_id: w.userId, name: input.name, query: input.query, shared, version: 1, created_at: iso, updated_at: iso,
        ...(input.board_id !== undefined ? { board_id: input.board_id } : {}),
        ...(input.sort ? { sort: input.sort } : {}),
      };
      await viewsOf(deps.store).insertOne(doc, { session: w.session });
      w.emit(viewEvent('view.created', doc));
      return toView(doc, w.userId);
    });
  };

/** `GET /api/v1/views`: the caller's views and those shared through a board it can read, oldest first. */
const list =
  ({ store }: ServiceDeps): Handler<typeof ViewsOps.list> =>
  async (_input, ctx) => {
    const p = await loadPrincipal(store, callerId(ctx));
    const boardScope = p.groupIds.length ? { $or: [{ owner_id: p.userId }, { groupId: { $in: p.groupIds } }] } : { owner_id: p.userId };
    const boards = await store.collection<BoardDoc>(Collections.boards).find(boardScope, { projection: { _id: 1 } });
    const or: Array<Record<string, unknown>> = [{ owner_id: p.userId }];
    if (boards.length) or.push({ shared: true, board_id: { $in: boards.map((b) => b._id) } });
    const docs = await viewsOf(store).find({ $or: or }, { sort: { created_at: 1, _id: 1 } });
    return { data: docs.map((d) => toView(d, p.userId)) };
  };

/** `GET /api/v1/views/{id}`: a view the caller can read (404 otherwise). */
const get =
  ({ store }: ServiceDeps): Handler<typeof ViewsOps.get> =>
  async (input, ctx) => {
    const p = await loadPrincipal(store, callerId(ctx));
    return toView(await readableView(store, p, input.viewId), p.userId);
  };

/** The caller's own view inside a write: 404 when unreadable, 403 when readable (shared) but another's, 412 on a stale If-Match. */
async function ownView(deps: ServiceDeps, userId: string, viewId: string, ifMatch: string | undefined, session: Session): Promise<ViewDoc> {
  const p = await loadPrincipal(deps.store, userId, session);
  const doc = await readableView(deps.store, p, viewId, session);
  if (doc.owner_id !== userId) throw new AppError('FORBIDDEN', { message: 'Only the owner of a view may change or delete it', details: { viewId } });
  checkIfMatch(ifMatch, versionOf(doc), { viewId });
  return doc;
}

/**
 * `PATCH /api/v1/views/{id}` (owner only; `If-Match` as every write, docs/concurrency.md): the
 * fields the body carries change, checked as on create against the view as it will be;
 * `board_id: ""` and `sort: null` clear. Bumps the version and emits `view.updated`.
 */
const update =
  (deps: ServiceDeps): Handler<typeof ViewsOps.update> =>
  async (input, ctx) =>
    runWrite(deps, ctx, async (w) => {
      const doc = await ownView(deps, w.userId, input.viewId, ctx.ifMatch, w.session);
      const next: ViewDoc = { ...doc, updated_at: w.now.toISOString(), ...nextVersion(doc) };
      if (input.name !== undefined) next.name = input.name;
      if (input.query !== undefined) next.query = input.query;
      if (input.shared !== undefined) next.shared = input.shared;
      if (input.board_id === '') delete next.board_id;
      else if (input.board_id !== undefined) next.board_id = input.board_id;
      if (input.sort === null) delete next.sort;
      else if (input.sort !== undefined) {
        checkSort(input.sort);
        next.sort = input.sort;
      }
      checkQuery(next.query, next.board_id);
      checkShared(next.shared, next.board_id);
      if (next.board_id !== undefined && next.board_id !== doc.board_id) await loadBoard(deps.store, w.userId, next.board_id, 'read', w.session);
      const { _id, ...fields } = next;
      const unset: Record<string, ''> = {};
      if (next.board_id === undefined && doc.board_id !== undefined) unset.board_id = '';
      if (next.sort === undefined && doc.sort !== undefined) unset.sort = '';
      const replaced = await viewsOf(deps.store).findOneAndUpdate(
        { $and: [{ _id }, versionGuard(doc)] },
        Object.keys(unset).length ? { $set: fields, $unset: unset } : { $set: fields },
        { session: w.session, returnDocument: 'after' },
      );
      if (!replaced) throw new AppError('CONFLICT', { message: 'The view changed during the update; read it again and retry', details: { viewId: doc._id } });
      w.emit(viewEvent('view.updated', next));
      return toView(next, w.userId);
    });

/** `DELETE /api/v1/views/{id}` (owner only; `If-Match`): removes it and emits `view.deleted`. */
const remove =
  (deps: ServiceDeps): Handler<typeof ViewsOps.remove> =>
  async (input, ctx) =>
    runWrite(deps, ctx, async (w) => {
      const doc = await ownView(deps, w.userId, input.viewId, ctx.ifMatch, w.session);
      const gone = await viewsOf(deps.store).deleteOne({ $and: [{ _id: doc._id }, versionGuard(doc)] }, { session: w.session });
      if (gone.deletedCount !== 1) throw new AppError('CONFLICT', { message: 'The view changed during the delete; read it again and retry', details: { viewId: doc._id } });
      w.emit(viewEvent('view.deleted', doc));
      return null;
    });

/**
 * `POST /api/v1/views/{id}/query`: runs a view the caller can read, for the caller: its functions
 * resolved for the caller (a shared "assigned to me" view is each reader's own), within the board
 * scope when the view has a board (404 `BOARD_NOT_FOUND` when the caller can no longer read it),
 * else within everything the caller can read; the view's sort replaces the query's ORDER BY.
 */
const query =
  ({ store, clock }: ServiceDeps): Handler<typeof ViewsOps.query> =>
  async (input, ctx) => {
    const userId = callerId(ctx);
    const p = await loadPrincipal(store, userId);
    const view = await readableView(store, p, input.viewId);
    const now = clock.now();
    let scope;
    let board: BoardDoc | undefined;
    if (view.board_id !== undefined) {
      board = (await loadBoard(store, userId, view.board_id, 'read')).board;
      scope = boardScopeFilter(board, p);
    } else scope = readableTasksFilter(p);
    let compiled;
    try {
      const parsedView = parseQuery(view.query);
      const fields = await fieldTypesFor(store, p, { query: parsedView, ...(board ? { board } : {}) });
      compiled = compileQuery(await resolveFor(store, p, parsedView, { now, ...(board ? { board } : {}) }), { now, fields });
    } catch (e) {
      throw storedQueryError(e, { kind: 'view', id: view._id, name: view.name });
    }
    let sort = compiled.sort;
    let byOption = compiled.byOption;
    if (view.sort) {
      byOption = undefined;
      const [path, dir] = [fieldPath(view.sort.column), view.sort.direction === 'asc' ? 1 : -1] as const;
      sort = path === '_id' ? { _id: dir } : ({ [path]: dir, _id: 1 } as Sort);
    }
    const page = input.page ?? 1;
    const pageSize = input.page_size ?? DEFAULT_PAGE_SIZE;
    const { docs, total } = await findPageOrdered(tasksOf(store), { $and: [scope, compiled.filter] }, { sort, ...(byOption ? { byOption } : {}) }, page, pageSize);
    return { data: docs.map((d) => toTask(d)), total, page, page_size: pageSize, effective_query: view.query };
  };

/** Handler factories of {@link ViewsOps}. */
export const viewHandlers: HandlerFactories<typeof ViewsOps> = { create, list, get, update, remove, query };
