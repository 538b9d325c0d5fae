import type { BoardTaskCreateBody, ColumnAction as ColumnActionView, ColumnActionInput, ColumnInput } from '../contracts/boards.js';
import { STATUS_MAX, type TaskCreateBody } from '../contracts/tasks.js';
import { AppError, invalidField } from '../errors/index.js';
import { isMoverValue, materializeActions, MOVER_VALUE, parseQuery } from '../query/index.js';
import type { ColumnAction, ColumnDef } from './board.js';
import { METADATA_FIELD, mergeMoveActions } from './move.js';
import { checkMetadataEntry, distinct, normalizeDate, validatePath } from './task-write.js';

/**
 * Column rules of every board write (docs/boards.md "Columns"; docs/architecture.md §7): ids backfilled and kept
 * stable, column queries validated, `source: query` actions regenerated from the column query
 * alone (default_tags are merged into column *queries* and card tags, never into
 * actions), `source: manual` actions checked and kept. Also the initial values of a card created
 * in a column. Errors name the column by index (`/columns/2/query`).
 */

/** Columns of a board created without `columns` (the SPEC's sample statuses). */
export const DEFAULT_COLUMNS: readonly ColumnInput[] = [
  { name: 'To Do', query: "status = 'todo'" },
  { name: 'Doing', query: "status = 'doing'" },
  { name: 'Done', query: "status = 'done'" },
];

/**
 * `col-<slug>` of a column name: lower-case ASCII letters and digits joined by `-`, at most 48
 * characters (`To Do` → `col-to-do`); `col-column` when nothing is left.
 */
export function columnSlugId(name: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/\p{M}/gu, '') // accents dropped: `Déjà` → `deja`
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 48)
    .replace(/-+$/, '');
  return `col-${slug || 'column'}`;
}

/**
 * Assigns an id to every column (docs/architecture.md §7). A sent id is kept (duplicates → 400 naming the
 * second one). A column without one takes the id of the previous column with the same name when
 * that id is still free, else `col-<slug>` made unique with `-2`, `-3`… Returns ids in input order.
 */
export function backfillColumnIds(columns: ReadonlyArray<Pick<ColumnInput, 'id' | 'name'>>, previous: ReadonlyArray<Pick<ColumnDef, 'id' | 'name'>> = []): string[] {
  const taken = new Set<string>();
  columns.forEach((c, i) => {
    if (c.id === undefined) return;
    if (taken.has(c.id)) throw invalidField(`/columns/${i}/id`, `duplicate column id "${c.id}"`, 'unique');
    taken.add(c.id);
  });
  return columns.map((c) => {
    if (c.id !== undefined) return c.id;
    const prior = previous.find((p) => p.name === c.name && !taken.has(p.id));
    let id = prior?.id;
    if (id === undefined) {
      const base = columnSlugId(c.name);
      id = base;
      for (let n = 2; taken.has(id); n++) id = `${base}-${n}`;
    }
    taken.add(id);
    return id;
  });
}

/**
 * The `source: query` actions of a column query (docs/architecture.md §7), as `preview-actions` returns them.
 * They come from the column query alone: the board's default_tags are part of the column's
 * effective query (move checks, column read) and of a new card's tags, never actions;
 * a query that is empty or only an ORDER BY has none. Throws the query's 400 (`QUERY_SYNTAX` /
 * `QUERY_UNKNOWN_FIELD` / `QUERY_TOO_LONG`) with `details.field` = `field` and its message
 * prefixed by it.
 */
export function queryActions(query: string, field = '/query'): ColumnAction[] {
  try {
    return materializeActions(parseQuery(query)); // errors with positions relative to the column query itself
  } catch (e) {
    if (!AppError.is(e) || e.status !== 400) throw e;
    throw new AppError(e.code, {
      message: `${field.slice(1)}: ${e.message}`,
      details: { ...e.details, field },
      ...(e.validationErrors ? { validationErrors: e.validationErrors } : {}),
    });
  }
}

/**
 * A stored action as one action per tag: a tag action stored with a list of tags (boards written
 * before tag actions carried one tag) becomes one action per distinct tag, same trigger, operation
 * and source, in list order. Any other action is returned as is.
 */
function splitTagAction(a: ColumnAction): ColumnAction[] {
  if (a.field !== 'tags' || !Array.isArray(a.value)) return [a];
  return distinct(a.value.filter((t): t is string => typeof t === 'string')).map((tag) => ({ ...a, value: tag }));
}

/**
 * The columns of a stored board as reads return them: each column's `source: query` actions are
 * those of its query alone, so a board stored before default_tags stopped being materialized (its
 * columns then carried `enter add` / `exit remove` of every default tag) reads as if written
 * today; manual actions are kept after them, a manual tag action stored with a list of tags read
 * as one action per tag (ud's `ColumnActionDTO`; docs/boards.md). A column whose stored actions
 * are already right is returned as is (same object); a query that no longer parses keeps its
 * stored query actions. Pure: the stored document is not changed (the next board write stores the
 * fresh ones).
 */
export function columnsAsRead(columns: readonly ColumnDef[]): ColumnDef[] {
  return columns.map((c) => {
    let fresh: ColumnAction[];
    try {
      fresh = materializeActions(parseQuery(c.query));
    } catch {
      fresh = c.actions.filter((a) => a.source === 'query').flatMap(splitTagAction);
    }
    const actions = [...fresh, ...c.actions.filter((a) => a.source !== 'query').flatMap(splitTagAction)];
    if (JSON.stringify(actions) === JSON.stringify(c.actions)) return c;
    return { ...c, actions };
  });
}

/**
 * An action as the API returns it: ud's `ColumnActionDTO`, `value` a string (SPEC: the published
 * Swagger wins for Live operations). A string value is sent as is; a number or boolean as its
 * text with `value_type` `number` / `boolean`; anything else (a metadata object, array or null)
 * as JSON with `value_type` `json`; the mover (`field = me()`) as `me()` with `value_type`
 * `function`; a `clear` carries no value.
 */
export function actionView(a: ColumnAction): ColumnActionView {
  const view: ColumnActionView = { trigger: a.trigger, field: a.field, operation: a.operation, source: a.source };
  const v = a.value;
  if (v === undefined) return view;
  if (typeof v === 'string') view.value = v;
  else if (isMoverValue(v)) {
    view.value = 'me()';
    view.value_type = 'function';
  } else if (typeof v === 'number' || typeof v === 'boolean') {
    view.value = String(v);
    view.value_type = typeof v === 'number' ? 'number' : 'boolean';
  } else {
    view.value = JSON.stringify(v);
    view.value_type = 'json';
  }
  return view;
}

/**
 * The value a client sent with its `value_type` (as {@link actionView} writes it): `number` and
 * `boolean` text read back as such, `json` parsed, `function` `me()` → the mover; without `value_type` the value as sent. A
 * `value_type` with a value that does not read as that type → 400 naming `at`.
 */
function typedValue(value: unknown, valueType: string | undefined, at: string): unknown {
  if (valueType === undefined) return value;
  if (typeof value !== 'string') throw invalidField(at, '`value_type` goes with a string `value`', 'type');
  if (valueType === 'number') {
    const n = value.trim() === '' ? NaN : Number(value);
    if (!Number.isFinite(n)) throw invalidField(at, `"${value}" is not a number`, 'type');
    return n;
  }
  if (valueType === 'boolean') {
    if (value !== 'true' && value !== 'false') throw invalidField(at, `"${value}" is not \`true\` or \`false\``, 'type');
    return value === 'true';
  }
  if (valueType === 'function') {
    if (value.trim() !== 'me()') throw invalidField(at, `"${value}" is not a function a column action may set (only \`me()\`, the mover)`, 'type');
    return { ...MOVER_VALUE };
  }
  try {
    return JSON.parse(value) as unknown;
  } catch {
    throw invalidField(at, 'is not JSON text', 'type');
  }
}

/** Fields an action may change besides `metadata.<key>` (docs/tasks.md "Shapes"). */
const SCALAR_FIELDS = new Set(['status', 'assignee', 'path', 'kickoff', 'deadline']);

/**
 * Checks and normalizes one manual action (`at` is its JSON pointer): `cf.x` / `app.x` fields
 * become `metadata.cf.x` / `metadata.app.x`; `tags` takes `add`/`remove` with a tag or a list of
 * tags, stored as one action per distinct tag; other fields take `set` (a value, read with its
 * `value_type` when one is sent; dates normalized, paths checked) or `clear` (no value). Anything
 * else → 400 `VALIDATION_FAILED` naming the part at fault.
 */
function normalizeManualAction(a: ColumnActionInput, at: string): ColumnAction[] {
  const field = /^(cf|app)\./.test(a.field) ? `${METADATA_FIELD}${a.field}` : a.field;
  const base = { trigger: a.trigger, field, source: 'manual' as const };
  if (field === 'tags') {
    if (a.operation !== 'add' && a.operation !== 'remove') throw invalidField(`${at}/operation`, 'tags take `add` or `remove`', 'operation');
    const tags = typeof a.value === 'string' ? [a.value] : a.value;
    if (!Array.isArray(tags) || tags.length === 0 || !tags.every((t) => typeof t === 'string' && t !== '')) {
      throw invalidField(`${at}/value`, 'must be a tag or a non-empty list of tags', 'type');
    }
    const operation = a.operation;
    return distinct(tags as string[]).map((tag) => ({ ...base, operation, value: tag }));
  }
  if (!SCALAR_FIELDS.has(field) && !(field.startsWith(METADATA_FIELD) && field.length > METADATA_FIELD.length)) {
    throw invalidField(`${at}/field`, `"${a.field}" is not a field an action can change (status, assignee, path, kickoff, deadline, tags, metadata.<key>, cf.<key>, app.<key>)`, 'field');
  }
  // a metadata key (and a set value) MongoDB could not store would fail every move into the column
  if (field.startsWith(METADATA_FIELD)) checkMetadataEntry(field.slice(METADATA_FIELD.length), a.operation === 'set' ? a.value : undefined, `${at}/field`, `${at}/value`);
  if (a.operation === 'clear') return [{ ...base, operation: 'clear' }];
  if (a.operation !== 'set') throw invalidField(`${at}/operation`, `"${a.field}" takes \`set\` or \`clear\``, 'operation');
  return [{ ...base, operation: 'set', value: setValue(field, typedValue(a.value, a.value_type, `${at}/value`), `${at}/value`) }];
}

function setValue(field: string, value: unknown, at: string): unknown {
  if (value === undefined || value === null) throw invalidField(at, 'a `set` action needs a value', 'required');
  if (field.startsWith(METADATA_FIELD)) return value;
  if (typeof value !== 'string') throw invalidField(at, `${field} must be a string`, 'type');
  if (field === 'kickoff' || field === 'deadline') return normalizeDate(at, value);
  if (field === 'path') return validatePath(at, value);
  if (value === '') throw invalidField(at, `${field} must not be empty`, 'required');
  if (field === 'status' && value.length > STATUS_MAX) throw invalidField(at, `status has at most ${STATUS_MAX} characters`, 'maxLength');
  return value;
}

/**
 * The stored columns of a board write (docs/architecture.md §7): ids backfilled against `previous`, each query
 * checked, `source: query` actions regenerated from the column query alone (not the board's
 * default_tags), manual actions checked and kept after them, one tag per tag action (client-sent
 * `query` actions are dropped), `wip_limit` kept, `wip_policy` kept (400 without a `wip_limit`).
 */
export function normalizeColumns(columns: readonly ColumnInput[], previous: readonly ColumnDef[] = []): ColumnDef[] {
  const ids = backfillColumnIds(columns, previous);
  return columns.map((c, i) => {
    const query = c.query ?? '';
    const manual = (c.actions ?? []).flatMap((a, j) => (a.source === 'query' ? [] : normalizeManualAction(a, `/columns/${i}/actions/${j}`)));
    const def: ColumnDef = { id: ids[i]!, name: c.name, query, actions: [...queryActions(query, `/columns/${i}/query`), ...manual] };
    if (c.wip_limit !== undefined) def.wip_limit = c.wip_limit;
    if (c.wip_policy !== undefined) {
      if (c.wip_limit === undefined) throw invalidField(`/columns/${i}/wip_policy`, 'wip_policy needs a wip_limit on the same column', 'required');
      def.wip_policy = c.wip_policy;
    }
    return def;
  });
}

/**
 * The create body of a card created in `column` (docs/boards.md "Card create on a board"; docs/architecture.md §7): start
 * from the column's enter actions (sets and added tags; clears and removals have nothing to act on
 * in a new card), explicitly sent fields win, tags are the union of sent tags, entered tags and
 * `defaultTags`, and `app.sprint` is stamped with `activeSprintId` unless the body's metadata
 * carries `app.sprint` (a value wins; `null` means no sprint). Without a column only default_tags
 * are merged and a `null` `app.sprint` is dropped. A `field = me()` action sets `creatorId` (the
 * card's creator plays the mover: a card created in "My work" is the creator's).
 */
export function cardCreateBody(
  body: Omit<BoardTaskCreateBody, 'column_id'>,
  column: ColumnDef | undefined,
  defaultTags: readonly string[],
  activeSprintId: string | undefined,
  creatorId: string,
): TaskCreateBody {
  const entered = mergeMoveActions({ actions: [] }, column ?? { actions: [] });
  const fromColumn: Record<string, unknown> = {};
  const metadata: Record<string, unknown> = {};
  for (const [field, set] of entered.set) {
    const value = isMoverValue(set) ? creatorId : set;
    if (field.startsWith(METADATA_FIELD)) metadata[field.slice(METADATA_FIELD.length)] = value;
    else fromColumn[field] = value;
  }
  if (column && activeSprintId !== undefined) metadata['app.sprint'] = activeSprintId;
  Object.assign(metadata, body.metadata);
  if (metadata['app.sprint'] === null) delete metadata['app.sprint'];
  return {
    ...fromColumn,
    ...body,
    tags: distinct([...(body.tags ?? []), ...entered.addTags, ...defaultTags]),
    metadata,
  } as TaskCreateBody;
}
