import { FrozenJsonMemo } from '@app/shared/bus';
import { toTask, type BoardDoc, type TaskDoc, type TaskView } from '@app/shared/domain';
import { Collections, type Collection, type DocumentStore, type Filter, type Projection, type Sort } from '@app/shared/store';

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

/** A column's effective query, compiled (shared with the boards service's claim). */
export { compileColumn, type CompiledColumn } from '@app/shared/domain';
