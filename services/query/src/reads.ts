import { FrozenJsonMemo } from '@app/shared/bus';
import { resolveFor, toTask, type BoardDoc, type ColumnDef, type Principal, type TaskDoc, type TaskView } from '@app/shared/domain';
import { Collections, type Collection, type DocumentStore, type Filter, type Projection, type Sort } from '@app/shared/store';
import { buildEffectiveQuery, compileQuery, storedQueryError } from '@app/shared/query';

/** Default page size of every list read (docs/http.md "Limits"; docs/architecture.md §6). */
export const DEFAULT_PAGE_SIZE = 20;

/** The `tasks` collection. */
export function tasksOf(store: DocumentStore): Collection<TaskDoc> {
  return store.collection<TaskDoc>(Collections.tasks);
}

/**
 * The sprint a column read or summary filters by (docs/query-service.md "Choices where SPEC is silent"): `active` → the board's
 * `activeSprintId` (none → no sprint clause), `none` → no clause, anything else → that sprint id.
 */
export function sprintFor(board: BoardDoc, choice = 'active'): string | undefined {
  if (choice === 'active') return board.activeSprintId;
  if (choice === 'none') return undefined;
  return choice;
}

/**
 * One page of `filter` in `sort` order, and the total match count (two round trips, run together;
 * a `pageSize` of 0 reads the count only). `sort` must end with the unique `_id` tie-breaker so
 * pages never overlap or skip (docs/architecture.md §6).
 */
export async function findPage(
  tasks: Collection<TaskDoc>,
  filter: Filter,
  sort: Sort,
  page: number,
  pageSize: number,
  projection?: Projection,
): Promise<{ docs: TaskDoc[]; total: number }> {
  const [docs, total] = await Promise.all([
    pageSize > 0 ? tasks.find(filter, { sort, skip: (page - 1) * pageSize, limit: pageSize, ...(projection ? { projection } : {}) }) : [],
    tasks.countDocuments(filter),
  ]);
  return { docs, total };
}

const encoded: Record<TaskView, FrozenJsonMemo<TaskDoc>> = {
  full: new FrozenJsonMemo((doc) => toTask(doc, 'full')),
  lite: new FrozenJsonMemo((doc) => toTask(doc, 'lite')),
};

/**
 * `JSON.stringify(toTask(doc, view))`, memoized for frozen documents ({@link FrozenJsonMemo}). A page
 * of 20 tasks encoded by one `JSON.stringify` cost about 30 µs of a text search's CPU (docs/bench.md).
 */
export function taskJson(doc: TaskDoc, view: TaskView): string {
  return encoded[view].json(doc);
}

/** A column's effective query (docs/architecture.md §7), printed and compiled. */
export interface CompiledColumn {
  column: ColumnDef;
  /** Canonical text, echoed as `effective_query`. */
  text: string;
  filter: Filter;
  sort: Sort;
}

/**
 * Assembles a column's effective query, `(column query) AND ('t' IN tags)… AND app.sprint = '<id>'
 * AND (filter) ORDER BY <column order or metadata.order ASC>` (docs/architecture.md §7), and compiles it.
 * The column read and the board summary both use it. Function calls are resolved for `principal`
 * on this board (`me()` = the reader, `activeSprint()` = the board's running sprint); `text` keeps
 * them as written. A bad `filter` is 400 `QUERY_SYNTAX` with the position relative to the filter text;
 * a stored column query that cannot run is a 400 naming the column (`storedQueryError`).
 */
export async function compileColumn(
  store: DocumentStore,
  principal: Principal,
  board: BoardDoc,
  column: ColumnDef,
  sprintId: string | undefined,
  now: Date,
  filter?: string,
): Promise<CompiledColumn> {
  try {
    const effective = buildEffectiveQuery({
      column: column.query,
      defaultTags: board.default_tags,
      ...(sprintId !== undefined ? { sprintId } : {}),
      ...(filter !== undefined ? { filter } : {}),
    });
    return { column, text: effective.text, ...compileQuery(await resolveFor(store, principal, effective.query, { now, board }), { now }) };
  } catch (e) {
    throw storedQueryError(e, { kind: 'column', id: column.id, name: column.name });
  }
}
