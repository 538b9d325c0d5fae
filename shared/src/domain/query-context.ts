import { buildEffectiveQuery, compileQuery, resolveQuery, storedQueryError, TYPE_FIELD, type CompiledQuery, type FunctionLookups, type Query } from '../query/index.js';
import { fieldTypesFor } from './custom-fields.js';
import { Collections } from '../store/collections.js';
import { metadataPath } from '../store/keys.js';
import type { Collection, DocumentStore, Filter, Session, Sort } from '../store/port.js';
import { readableTasksFilter, type Principal } from './access.js';
import { loadBoard } from './load-board.js';
import type { BoardDoc, ColumnDef } from './board.js';
import type { TaskDoc } from './task.js';

/** The stored path of `app.type`, the metadata key that marks a sprint task (docs/architecture.md §8). */
const TYPE_PATH = metadataPath(TYPE_FIELD);

/**
 * The look-ups of query functions (docs/query-language.md "Functions") under the caller's access
 * rules (docs/architecture.md §5): `activeSprint('<board>')` reads the board with `loadBoard` (missing or
 * unreadable → 404 `BOARD_NOT_FOUND`, the same answer, so a sprint of an unreadable board never
 * resolves); `openSprints()` / `closedSprints()` list the live sprint tasks (`app.type = sprint`)
 * the caller can read; the time zone is the `timezone` the caller chose (read-only projection of
 * its user record; absent → UTC). `board`, when given, answers `activeSprint()` for the board the
 * query runs on without another read. With `session` (a write's transaction) every read passes it
 * and the look-ups run one at a time (`oneAtATime`).
 */
export function queryLookups(store: DocumentStore, principal: Principal, opts: { board?: BoardDoc; session?: Session } = {}): FunctionLookups {
  const s = opts.session ? { session: opts.session } : {};
  return {
    oneAtATime: opts.session !== undefined,
    async activeSprint(boardId) {
      if (opts.board && opts.board._id === boardId) return opts.board.activeSprintId;
      return (await loadBoard(store, principal.userId, boardId, 'read', opts.session)).board.activeSprintId;
    },
    async sprints(state) {
      const filter: Filter = {
        $and: [readableTasksFilter(principal), { [TYPE_PATH]: 'sprint' }, state === 'open' ? { status: { $ne: 'done' } } : { status: 'done' }],
      };
      const docs = await store.collection<TaskDoc>(Collections.tasks).find(filter, { projection: { _id: 1 }, sort: { created_at: 1, _id: 1 }, ...s });
      return docs.map((d) => d._id);
    },
    async timezone() {
      const user = await store.collection<{ _id: string; timezone?: string }>(Collections.users).findOne({ _id: principal.userId }, { projection: { timezone: 1 }, ...s });
      return typeof user?.timezone === 'string' ? user.timezone : undefined;
    },
  };
}

/**
 * `q` with its function calls resolved for `principal` at `now`, on board `board` when the query
 * runs on one (board query, column read, move); see `resolveQuery` for the rules and errors.
 * A query without calls is returned as is, with no store read.
 */
export function resolveFor(
  store: DocumentStore,
  principal: Principal,
  q: Query,
  opts: { now: Date; board?: BoardDoc; session?: Session },
): Promise<Query> {
  return resolveQuery(
    q,
    { userId: principal.userId, now: opts.now, ...(opts.board ? { boardId: opts.board._id } : {}) },
    queryLookups(store, principal, { ...(opts.board ? { board: opts.board } : {}), ...(opts.session ? { session: opts.session } : {}) }),
  );
}

/** A column's effective query (docs/architecture.md §7), printed and compiled. */
export interface CompiledColumn {
  column: ColumnDef;
  /** Canonical text, echoed as `effective_query`. */
  text: string;
  filter: Filter;
  sort: Sort;
  /** Set when the column orders by a select field (`CompiledQuery.byOption`). */
  byOption?: CompiledQuery['byOption'];
}

/**
 * Assembles a column's effective query, `(column query) AND ('t' IN tags)… AND app.sprint = '<id>'
 * AND app.type != 'sprint' AND (filter) ORDER BY <column order or metadata.order ASC>`
 * (docs/architecture.md §7; the sprint exclusion unless the column query or filter names
 * `app.type`, docs/boards.md "Sprints are not cards"), and compiles it.
 * The column read, the board summary and the claim (reading in its transaction `session`) use it.
 * Function calls are resolved for `principal` on this board (`me()` = the reader,
 * `activeSprint()` = the board's running sprint); `text` keeps them as written. A bad `filter` is 400 `QUERY_SYNTAX` with the position relative to the filter text;
 * a stored column query that cannot run is a 400 naming the column (`storedQueryError`).
 * Predicates on the custom fields of the board's scope are typed (docs/custom-fields.md).
 */
export async function compileColumn(
  store: DocumentStore,
  principal: Principal,
  board: BoardDoc,
  column: ColumnDef,
  sprintId: string | undefined,
  now: Date,
  filter?: string,
  session?: Session,
): Promise<CompiledColumn> {
  try {
    const effective = buildEffectiveQuery({
      column: column.query,
      defaultTags: board.default_tags,
      ...(sprintId !== undefined ? { sprintId } : {}),
      ...(filter !== undefined ? { filter } : {}),
      cardsOnly: true,
    });
    // in a transaction the reads run one at a time (one session, one operation at a time)
    const resolving = () => resolveFor(store, principal, effective.query, { now, board, ...(session ? { session } : {}) });
    const typing = () => fieldTypesFor(store, principal, { board, query: effective.query, ...(session ? { session } : {}) });
    const [resolved, fields] = session ? [await resolving(), await typing()] : await Promise.all([resolving(), typing()]);
    return { column, text: effective.text, ...compileQuery(resolved, { now, fields }) };
  } catch (e) {
    throw storedQueryError(e, { kind: 'column', id: column.id, name: column.name });
  }
}


/** Whether `f` is the compiled `app.type != 'sprint'` clause of {@link compileColumn}'s effective query. */
function isNotASprint(f: Filter): boolean {
  const keys = Object.keys(f);
  if (keys.length !== 1 || keys[0] !== TYPE_PATH) return false;
  const cond = f[TYPE_PATH] as Record<string, unknown> | null;
  return typeof cond === 'object' && cond !== null && Object.keys(cond).length === 1 && cond.$ne === 'sprint';
}

/** The conditions ANDed at the top of `f` (nested `$and`s opened up). */
function andItems(f: Filter, out: Filter[] = []): Filter[] {
  const and = f.$and;
  if (Object.keys(f).length === 1 && Array.isArray(and)) for (const item of and as Filter[]) andItems(item, out);
  else out.push(f);
  return out;
}

/**
 * `filter` split at the clause that leaves sprints out (`app.type != 'sprint'`, docs/boards.md
 * "Sprints are not cards"), when it is one of its top-level conditions: `rest`, the filter
 * without it, and `sprints`, the sprint tasks among the matches of `rest` (an indexed equality).
 * The matches of `filter` are exactly those of `rest` less those of `sprints`. `undefined` when
 * `filter` holds no such clause.
 */
export function splitCards(filter: Filter): { rest: Filter; sprints: Filter } | undefined {
  const items = andItems(filter);
  const at = items.findIndex(isNotASprint);
  if (at < 0) return undefined;
  const rest = items.filter((_, i) => i !== at);
  return { rest: rest.length === 0 ? {} : rest.length === 1 ? rest[0]! : { $and: rest }, sprints: { $and: [...rest, { [TYPE_PATH]: 'sprint' }] } };
}

/**
 * The number of tasks matching `filter` (a column's compiled filter, alone or ANDed with more).
 * When it holds the clause that leaves sprints out ({@link splitCards}), it is counted as the
 * matches of the rest minus the sprints among them: equality is index-served like the rest of a
 * column's conditions, while `!=` would have every candidate tested (on a 10,000-card board,
 * milliseconds per count instead of microseconds). The same number either way: `!=` matches
 * exactly what `=` does not. Two counts, run together outside a transaction.
 */
export async function countCards(tasks: Collection<TaskDoc>, filter: Filter, session?: Session): Promise<number> {
  const split = splitCards(filter);
  const opts = session ? { session } : {};
  if (!split) return tasks.countDocuments(filter, opts);
  // in a transaction the operations run one at a time (one session, one operation at a time)
  if (session) return (await tasks.countDocuments(split.rest, opts)) - (await tasks.countDocuments(split.sprints, opts));
  const [n, s] = await Promise.all([tasks.countDocuments(split.rest), tasks.countDocuments(split.sprints)]);
  return n - s;
}
