import { SELECT_TYPES, type CustomFieldOption, type CustomFieldType } from '../contracts/custom-fields.js';
import { AppError } from '../errors/index.js';
import type { Query } from '../query/ast.js';
import { namesCustomFields, type TypedField } from '../query/typed.js';
import { Collections } from '../store/collections.js';
import { escapeKey, metadataPath, unescapeKey } from '../store/keys.js';
import type { Collection, DocumentStore, IndexSpec, Session } from '../store/port.js';
import type { Principal } from './access.js';
import type { BoardDoc } from './board.js';
import type { TaskDoc } from './task.js';
import { normalizeDate } from './task-write.js';

/*
 * Custom fields (docs/custom-fields.md; docs/architecture.md §13): typed definitions of `cf.*`
 * metadata keys. A definition belongs to one owner scope: a user (`u:<user id>`, their private
 * tasks) or a group (`g:<group id>`, that group's tasks). This module holds the one value check
 * every task write path calls ({@link checkCustomFields}), the conversions of a type change and
 * the look-ups of the definitions in reach of a task, a board or a reader.
 */

/** A custom field definition as stored in `custom_fields`. */
export interface CustomFieldDoc {
  _id: string;
  /** The full metadata key (`cf.priority`), stable. */
  key: string;
  name: string;
  type: CustomFieldType;
  /** Select kinds only, in their order. */
  options?: CustomFieldOption[];
  required: boolean;
  default?: unknown;
  description?: string;
  /** `u:<user id>` or `g:<group id>`: whose tasks the definition types. */
  scope: string;
  group_id?: string;
  /** The owning user, for a user scope. */
  owner_id?: string;
  created_by: string;
  version: number;
  created_at: string;
  updated_at: string;
  [key: string]: unknown;
}

/** Keys are unique per owner scope: a unique index, so two racing creates cannot both win (on both stores). */
export const customFieldIndexes: IndexSpec[] = [
  { collection: Collections.customFields, keys: { scope: 1, key: 1 }, unique: true, name: 'custom_fields_scope_key' },
  { collection: Collections.customFields, keys: { scope: 1, created_at: 1 }, name: 'custom_fields_scope_created' },
];

/**
 * The index a defined key gets on the tasks (docs/custom-fields.md "Indexes"; docs/store.md): on
 * the embedded store a hash index (and sort index) on `metadata.<escaped key>`, built when the
 * field is defined and recorded like every index; on MongoDB none, the wildcard `metadata.$**`
 * serves it.
 */
export function customFieldIndex(key: string): IndexSpec {
  return { collection: Collections.tasks, keys: { [metadataPath(key)]: 1 }, embeddedOnly: true };
}

/** The `custom_fields` collection. */
export function customFieldsOf(store: DocumentStore): Collection<CustomFieldDoc> {
  return store.collection<CustomFieldDoc>(Collections.customFields);
}

/** The owner scope of a user's own definitions. */
export const userScope = (userId: string): string => `u:${userId}`;
/** The owner scope of a group's definitions. */
export const groupScope = (groupId: string): string => `g:${groupId}`;

/** The scope whose definitions type a task: its group's when it has one, else its creator's (private tasks). */
export function taskScope(task: Pick<TaskDoc, 'groupId' | 'created_by'>): string {
  return task.groupId !== undefined ? groupScope(task.groupId) : userScope(task.created_by);
}

/** The scope of a board: its group's when shared with one, else its owner's (docs/architecture.md §5). */
export function boardScope(board: Pick<BoardDoc, 'board_type' | 'groupId' | 'owner_id'>): string {
  return board.board_type === 'shared' && board.groupId !== undefined ? groupScope(board.groupId) : userScope(board.owner_id);
}

/**
 * The definitions of `scopes`, earlier scopes first (then oldest first); one per key: when two
 * scopes define the same key, the earlier scope's definition wins (docs/custom-fields.md "Reach").
 */
export async function definitionsOf(store: DocumentStore, scopes: readonly string[], session?: Session): Promise<CustomFieldDoc[]> {
  if (scopes.length === 0) return [];
  const docs = await customFieldsOf(store).find(scopes.length === 1 ? { scope: scopes[0] } : { scope: { $in: [...scopes] } }, {
    sort: { created_at: 1, _id: 1 },
    ...(session ? { session } : {}),
  });
  // one scope: its keys are unique (custom_fields_scope_key), the store's order is the answer
  if (scopes.length === 1 || docs.length === 0) return docs;
  const rank = new Map(scopes.map((s, i) => [s, i]));
  docs.sort((a, b) => rank.get(a.scope)! - rank.get(b.scope)!);
  const seen = new Set<string>();
  return docs.filter((d) => !seen.has(d.key) && seen.add(d.key));
}

/** The definitions read by the task creates of one transaction, by scope ({@link createDefinitions}), once it has made two. */
const definitionsBySession = new WeakMap<Session, Map<string, Promise<CustomFieldDoc[]>>>();
/**
 * The first read of the last transaction that created a task: a single create (most writes) makes
 * no entry in {@link definitionsBySession}, whose every new key is costly (a weak table's entry:
 * about 1.5 µs with its collection, more than the read itself); the second create of the same
 * transaction (a batch) moves it there.
 */
let recent: { session: Session; scope: string; defs: Promise<CustomFieldDoc[]> } | undefined;

/**
 * {@link definitionsOf} one scope for the task creates of the transaction `session`, read once:
 * a batch of 100 creates in one scope reads them once, not 100 times. Definitions are never
 * written in a transaction that creates tasks (their own writes run alone), so what the first
 * create read holds for the rest; a retried transaction is a new session and reads them again.
 */
function createDefinitions(store: DocumentStore, scope: string, session: Session): Promise<CustomFieldDoc[]> {
  let byScope = definitionsBySession.get(session);
  if (!byScope && recent?.session === session) {
    definitionsBySession.set(session, (byScope = new Map([[recent.scope, recent.defs]])));
    recent = undefined;
  }
  const kept = byScope?.get(scope);
  if (kept) return kept;
  const defs = definitionsOf(store, [scope], session);
  if (byScope) byScope.set(scope, defs);
  else recent = { session, scope, defs };
  // a failed read is not kept: the caller hears it, and a later call reads again
  defs.catch(() => {
    const kept = definitionsBySession.get(session);
    if (kept?.get(scope) === defs) kept.delete(scope);
    if (recent?.defs === defs) recent = undefined;
  });
  return defs;
}

/**
 * The definitions a query of `principal` is typed by (docs/custom-fields.md "In queries"): on a
 * board, its scope's; elsewhere the caller's own, then its groups'. With `query`, none are read
 * when it names no `cf.*` field (an empty map: nothing to type).
 */
export async function fieldTypesFor(
  store: DocumentStore,
  principal: Principal,
  opts: { board?: BoardDoc; session?: Session; query?: Query } = {},
): Promise<ReadonlyMap<string, TypedField>> {
  if (opts.query && !namesCustomFields(opts.query)) return new Map();
  const scopes = opts.board ? [boardScope(opts.board)] : [userScope(principal.userId), ...principal.groupIds.map(groupScope)];
  const defs = await definitionsOf(store, scopes, opts.session);
  return new Map(defs.map((d) => [d.key, d]));
}

/** One value's fault against a definition, or its stored form. */
export type FieldValueCheck = { ok: true; value: unknown } | { ok: false; reason: string };

const DAY = /^(\d{4})-(\d{2})-(\d{2})$/;

function isCalendarDay(text: string): boolean {
  const m = DAY.exec(text);
  if (!m) return false;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const day = new Date(Date.UTC(y, mo - 1, d));
  return day.getUTCFullYear() === y && day.getUTCMonth() === mo - 1 && day.getUTCDate() === d;
}

function optionId(def: Pick<CustomFieldDoc, 'options'>, v: unknown): string | undefined {
  return typeof v === 'string' && (def.options ?? []).some((o) => o.id === v) ? v : undefined;
}

const optionList = (def: Pick<CustomFieldDoc, 'options'>): string => (def.options ?? []).map((o) => o.id).join(', ');

/**
 * Checks one value against a definition and gives its stored form (docs/custom-fields.md
 * "Values"): text a string; number a finite JSON number; date `YYYY-MM-DD`; datetime RFC 3339
 * with offset (or a day), stored as UTC `toISOString()`; boolean a JSON boolean; select one option
 * id; multi_select a list of option ids (repeats dropped); user a user id (its existence is
 * checked by {@link checkCustomFields}); url an absolute `http(s)` URL. Pure; never throws.
 */
export function checkFieldValue(def: Pick<CustomFieldDoc, 'type' | 'options'>, value: unknown): FieldValueCheck {
  const bad = (reason: string): FieldValueCheck => ({ ok: false, reason });
  switch (def.type) {
    case 'text':
      return typeof value === 'string' ? { ok: true, value } : bad('a text field holds a string');
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) ? { ok: true, value } : bad('a number field holds a JSON number');
    case 'boolean':
      return typeof value === 'boolean' ? { ok: true, value } : bad('a boolean field holds true or false');
    case 'date':
      return typeof value === 'string' && isCalendarDay(value) ? { ok: true, value } : bad('a date field holds a day, YYYY-MM-DD');
    case 'datetime':
      if (typeof value !== 'string') return bad('a datetime field holds an RFC 3339 date-time with offset');
      try {
        return { ok: true, value: normalizeDate('/value', value) };
      } catch {
        return bad('a datetime field holds an RFC 3339 date-time with offset (or a day, YYYY-MM-DD)');
      }
    case 'select':
      return optionId(def, value) !== undefined ? { ok: true, value } : bad(`a select field holds one option id (${optionList(def)})`);
    case 'multi_select': {
      if (!Array.isArray(value)) return bad(`a multi_select field holds a list of option ids (${optionList(def)})`);
      const bad1 = value.find((v) => optionId(def, v) === undefined);
      if (bad1 !== undefined) return bad(`${JSON.stringify(bad1)} is not an option (${optionList(def)})`);
      return { ok: true, value: [...new Set(value as string[])] };
    }
    case 'user':
      return typeof value === 'string' && value.length > 0 ? { ok: true, value } : bad('a user field holds a user id');
    case 'url': {
      if (typeof value !== 'string') return bad('a url field holds an absolute http(s) URL');
      let url: URL;
      try {
        url = new URL(value);
      } catch {
        return bad('a url field holds an absolute http(s) URL');
      }
      return url.protocol === 'http:' || url.protocol === 'https:' ? { ok: true, value } : bad('a url field holds an absolute http(s) URL');
    }
  }
}

/**
 * The value converted to a new definition when a field's type or options change
 * (docs/custom-fields.md "Changing a type"), or undefined when it cannot be: a value that already
 * fits stays; a number or boolean becomes text; text that reads as a number, boolean, day or
 * instant becomes one; an option label (any case) becomes its id; a day becomes a datetime at
 * midnight UTC and a datetime its UTC day; one option becomes a one-item list and a one-item list
 * its option; options become text as their labels joined by ", ".
 */
export function convertFieldValue(value: unknown, to: Pick<CustomFieldDoc, 'type' | 'options'>, from?: Pick<CustomFieldDoc, 'options'>): unknown {
  const fits = checkFieldValue(to, value);
  if (fits.ok) return fits.value;
  const byLabel = (v: unknown): string | undefined => {
    if (typeof v !== 'string') return undefined;
    const label = from?.options?.find((o) => o.id === v)?.label ?? v;
    return (to.options ?? []).find((o) => o.id === v || o.label.toLowerCase() === label.toLowerCase())?.id;
  };
  const labelOf = (v: unknown) => (typeof v === 'string' ? from?.options?.find((o) => o.id === v)?.label ?? v : String(v));
  const tryAs = (v: unknown) => {
    const r = checkFieldValue(to, v);
    return r.ok ? r.value : undefined;
  };
  switch (to.type) {
    case 'text':
      if (typeof value === 'number' || typeof value === 'boolean') return String(value);
      if (Array.isArray(value) && value.every((v) => typeof v === 'string')) return value.map(labelOf).join(', ');
      return undefined;
    case 'number':
      return typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value)) ? Number(value) : undefined;
    case 'boolean':
      return value === 'true' ? true : value === 'false' ? false : undefined;
    case 'date':
      return typeof value === 'string' ? tryAs(dayOf(value)) : undefined;
    case 'datetime':
      return undefined; // a day already fits (checkFieldValue reads it as midnight UTC)
    case 'select':
      if (Array.isArray(value)) return value.length === 1 ? byLabel(value[0]) : undefined;
      return byLabel(value);
    case 'multi_select': {
      const items = Array.isArray(value) ? value : [value];
      const ids = items.map(byLabel);
      return ids.every((i) => i !== undefined) ? [...new Set(ids as string[])] : undefined;
    }
    case 'user':
    case 'url':
      return undefined;
  }
}

/** The UTC day of an instant text, or undefined. */
function dayOf(text: string): string | undefined {
  try {
    return normalizeDate('/value', text).slice(0, 10);
  } catch {
    return undefined;
  }
}

/** The 400 for a value a defined field cannot hold (docs/errors.md `CUSTOM_FIELD_VALUE_INVALID`). */
export function customValueInvalid(key: string, def: Pick<CustomFieldDoc, 'type' | 'name'>, value: unknown, reason: string): AppError {
  const field = `metadata.${key}`;
  const shown = value === undefined ? 'no value' : JSON.stringify(value);
  return new AppError('CUSTOM_FIELD_VALUE_INVALID', {
    message: `${field} ("${def.name}") is a ${def.type} field; ${shown} does not fit: ${reason}`,
    details: { field, key, type: def.type, name: def.name, value: value === undefined ? null : value },
    validationErrors: [{ field: `/metadata/${key}`, code: def.type, message: reason }],
  });
}

/**
 * THE value check of every task write (docs/custom-fields.md "On write"; docs/architecture.md
 * §13): tasks create, PATCH, metadata PATCH, the batches and upsert, card create on a board, and
 * imports call it. `target` is the task as it will be stored (its scope decides which definitions
 * apply: its group's, else its creator's); `entries` are the metadata keys the write sets (API
 * keys → values). Returns the entries in their stored form (dates normalized, repeated options
 * dropped); keys without a definition pass unchanged. With `create` true, a required key that is
 * not sent takes the definition's default, or is refused. A `user` value must be a user id.
 * Throws 400 `CUSTOM_FIELD_VALUE_INVALID` naming `metadata.<key>`, the type and the value; the
 * caller writes nothing then. Reads the definitions once (none defined: no further read).
 */
export async function checkCustomFields(
  store: DocumentStore,
  target: Pick<TaskDoc, 'groupId' | 'created_by'>,
  entries: Readonly<Record<string, unknown>>,
  opts: { session?: Session; create?: boolean } = {},
): Promise<Record<string, unknown>> {
  const keys = Object.keys(entries);
  if (!opts.create && !keys.some((k) => k.startsWith('cf.'))) return { ...entries };
  const defs = opts.create && opts.session ? await createDefinitions(store, taskScope(target), opts.session) : await definitionsOf(store, [taskScope(target)], opts.session);
  return checkAgainst(store, defs, entries, opts);
}

/** {@link checkCustomFields} once the definitions `defs` of the target's scope are read. */
async function checkAgainst(
  store: DocumentStore,
  defs: readonly CustomFieldDoc[],
  entries: Readonly<Record<string, unknown>>,
  opts: { session?: Session; create?: boolean },
): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = { ...entries };
  if (defs.length === 0) return out;
  const users = new Set<string>();
  for (const def of defs) {
    if (!Object.hasOwn(entries, def.key)) {
      if (opts.create && def.default !== undefined) out[def.key] = def.default;
      else if (opts.create && def.required) throw customValueInvalid(def.key, def, undefined, 'the field is required and has no default');
      else continue;
    }
    const r = checkFieldValue(def, out[def.key]);
    if (!r.ok) throw customValueInvalid(def.key, def, out[def.key], r.reason);
    out[def.key] = r.value;
    if (def.type === 'user') users.add(r.value as string);
  }
  if (users.size > 0) {
    const found = await store.collection<{ _id: string }>(Collections.users).find({ _id: { $in: [...users] } }, { projection: { _id: 1 }, ...(opts.session ? { session: opts.session } : {}) });
    const known = new Set(found.map((u) => u._id));
    const def = defs.find((d) => d.type === 'user' && !known.has(out[d.key] as string));
    if (def) throw customValueInvalid(def.key, def, out[def.key], 'no user has this id');
  }
  return out;
}

/**
 * {@link checkCustomFields} for a new stored task (`doc.metadata` holds escaped keys): its
 * metadata is replaced by the checked, normalized entries (defaults of required keys added).
 */
export async function checkNewTaskFields(store: DocumentStore, doc: TaskDoc, session?: Session): Promise<void> {
  const defs = session ? await createDefinitions(store, taskScope(doc), session) : await definitionsOf(store, [taskScope(doc)]);
  // no definition in the task's scope: nothing to check and no default to add, the metadata stays as it is
  if (defs.length === 0) return;
  const api = Object.fromEntries(Object.entries(doc.metadata).map(([k, v]) => [unescapeKey(k), v]));
  const checked = await checkAgainst(store, defs, api, { create: true, ...(session ? { session } : {}) });
  doc.metadata = Object.fromEntries(Object.entries(checked).map(([k, v]) => [escapeKey(k), v]));
}

/**
 * {@link checkCustomFields} for an update of stored task `task`: the `metadata.<escaped key>`
 * entries of `$set` are checked and replaced by their stored forms, in place.
 */
export async function checkTaskUpdateFields(store: DocumentStore, task: TaskDoc, $set: Record<string, unknown>, session?: Session): Promise<void> {
  const paths = Object.keys($set).filter((p) => p.startsWith('metadata.'));
  if (paths.length === 0) return;
  const api = Object.fromEntries(paths.map((p) => [unescapeKey(p.slice('metadata.'.length)), $set[p]]));
  const checked = await checkCustomFields(store, task, api, session ? { session } : {});
  for (const [k, v] of Object.entries(checked)) $set[metadataPath(k)] = v;
}

/** True when a definition's type has options. */
export function hasOptions(type: CustomFieldType): boolean {
  return SELECT_TYPES.has(type);
}

/**
 * The values column actions set on custom fields (`cf.x = v` in a column query, or a manual
 * action), checked against the definitions of `scope` (the board's; docs/custom-fields.md
 * "Column actions") as a board is saved: a value must fit its field, or read as one of its values
 * (an option label names its option, `'3'` is 3 on a number field); else 400 `VALIDATION_FAILED`
 * naming `/columns/<i>/actions/<j>/value`. The stored actions keep the value as written;
 * {@link typedColumns} gives the field's form where actions are applied.
 */
export async function checkColumnActions(
  store: DocumentStore,
  scope: string,
  columns: ReadonlyArray<{ actions: ReadonlyArray<{ field: string; operation: string; value?: unknown }> }>,
  session?: Session,
): Promise<void> {
  await convertActions(store, scope, columns, (i, j) => `/columns/${i}/actions/${j}/value`, session);
}

/**
 * Copies of `columns` whose custom field action values are in their field's stored form (an
 * option label → its id), for card create into a column and moves (docs/custom-fields.md "Column
 * actions"). A value that cannot be read as its field (a column saved before the definition) is
 * 400 `VALIDATION_FAILED` naming the column and action.
 */
export async function typedColumns<C extends { id: string; actions: ReadonlyArray<{ field: string; operation: string; value?: unknown }> }>(
  store: DocumentStore,
  scope: string,
  columns: readonly C[],
  session?: Session,
): Promise<C[]> {
  return convertActions(store, scope, columns, (i, j) => `/columns/${columns[i]!.id}/actions/${j}/value`, session);
}

async function convertActions<C extends { actions: ReadonlyArray<{ field: string; operation: string; value?: unknown }> }>(
  store: DocumentStore,
  scope: string,
  columns: readonly C[],
  at: (i: number, j: number) => string,
  session?: Session,
): Promise<C[]> {
  const uses = columns.some((c) => c.actions.some((a) => a.field.startsWith('metadata.cf.') && a.operation !== 'clear'));
  if (!uses) return [...columns];
  const defs = new Map((await definitionsOf(store, [scope], session)).map((d) => [d.key, d]));
  return columns.map((c, i) => {
    let changed = false;
    const actions = c.actions.map((a, j) => {
      const def = defs.get(a.field.slice('metadata.'.length));
      if (!def || a.operation === 'clear' || a.value === undefined) return a;
      const converted = convertFieldValue(a.value, def);
      if (converted === undefined) throw invalidFieldValue(at(i, j), def, a.value, (checkFieldValue(def, a.value) as { reason: string }).reason);
      if (JSON.stringify(converted) === JSON.stringify(a.value)) return a;
      changed = true;
      return { ...a, value: converted };
    });
    return changed ? { ...c, actions } : c;
  });
}

function invalidFieldValue(at: string, def: CustomFieldDoc, value: unknown, reason: string): AppError {
  return new AppError('VALIDATION_FAILED', {
    message: `${at.slice(1)}: ${def.key} ("${def.name}") is a ${def.type} field; ${JSON.stringify(value)} does not fit: ${reason}`,
    details: { field: `metadata.${def.key}`, type: def.type, value },
    validationErrors: [{ field: at, code: def.type, message: reason }],
  });
}
