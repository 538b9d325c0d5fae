import { FrozenJsonMemo } from '@app/shared/bus';
import { countCards, splitCards, toTask, type BoardDoc, type TaskDoc, type TaskView } from '@app/shared/domain';
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
 * for a board's cards three: the sprints among the matches, then the page and the count, see
 * `splitCards`; a `pageSize` of 0 reads the count only). `sort` must end with the unique `_id` tie-breaker so
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
  const read = (f: Filter) => (pageSize > 0 ? tasks.find(f, { sort, skip: (page - 1) * pageSize, limit: pageSize, ...(projection ? { projection } : {}) }) : Promise.resolve([]));
  const split = splitCards(filter);
  if (!split) {
    const [docs, total] = await Promise.all([read(filter), tasks.countDocuments(filter)]);
    return { docs, total };
  }
  // a board's cards: the sprints among the matches first (few, indexed); with none, which is
  // every column but the one sprints start in, the page is read without the `!=` clause, which
  // lets the indexes answer it exactly (countCards, docs/boards.md "Sprints are not cards")
  const sprints = await tasks.countDocuments(split.sprints);
  const [docs, all] = await Promise.all([read(sprints === 0 ? split.rest : filter), tasks.countDocuments(split.rest)]);
  return { docs, total: all - sprints };
}

/**
 * One page of `filter` in the order of a compiled query (docs/custom-fields.md "ORDER BY"): like
 * {@link findPage}, except when the query orders first by a select field (`byOption`): the options
 * then decide the order, not their ids' spelling. The read counts each option's matches (and
 * those with no option, which sort lowest like missing values: first ascending, last descending),
 * then reads only the option segments the page covers, each in the query's further sort keys.
 * Rounds: one count per option plus one, and one read per segment on the page.
 */
export async function findPageOrdered(
  tasks: Collection<TaskDoc>,
  filter: Filter,
  compiled: { sort: Sort; byOption?: { path: string; ids: string[]; dir: 1 | -1 } },
  page: number,
  pageSize: number,
  projection?: Projection,
): Promise<{ docs: TaskDoc[]; total: number }> {
  const by = compiled.byOption;
  if (!by) return findPage(tasks, filter, compiled.sort, page, pageSize, projection);
  const rest: Sort = Object.fromEntries(Object.entries(compiled.sort).filter(([k]) => k !== by.path));
  const segments: Filter[] = [{ [by.path]: { $nin: by.ids } }, ...by.ids.map((id) => ({ [by.path]: id }))];
  if (by.dir === -1) segments.reverse();
  const filters = segments.map((seg) => ({ $and: [filter, seg] }));
  const counts = await Promise.all(filters.map((f) => countCards(tasks, f)));
  const total = counts.reduce((a, b) => a + b, 0);
  const docs: TaskDoc[] = [];
  let skip = (page - 1) * pageSize;
  for (let i = 0; i < filters.length && docs.length < pageSize; i++) {
    if (skip >= counts[i]!) {
      skip -= counts[i]!;
      continue;
    }
    const limit = pageSize - docs.length;
    docs.push(...(await tasks.find(filters[i]!, { sort: rest, skip, limit, ...(projection ? { projection } : {}) })));
    skip = 0;
  }
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
