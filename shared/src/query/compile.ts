import { metadataPath } from '../store/keys.js';
import type { Doc, Filter, Sort } from '../store/port.js';
import { compileFilter } from '../store/index.js';
import { isBuiltin, metadataKeyOf, valuesOf, type Expr, type Field, type OrderKey, type Pred, type Query, type Value } from './ast.js';
import { resolveDate } from './dates.js';
import { deepFreeze } from '../util/index.js';
import { unknownField } from './parse.js';
import { nor, on, predicateFilter, type Operand } from './filter-ops.js';
import { compileTypedPred, optionSort, typedFieldOf, usesTypedFields, type FieldTypes } from './typed.js';

/**
 * The stored path of an API field (docs/architecture.md §2, §6): `id` → `_id`, other builtins as they are,
 * metadata fields (`cf.x`, `app.x`, `ns.key`, `metadata.key`) → `metadata.<escaped key>`.
 * Throws `QUERY_UNKNOWN_FIELD` (position 0) for a bare name that is not a builtin, for an empty key
 * (`metadata.`: MongoDB refuses empty field names) and for the key `__proto__`.
 */
export function fieldPath(field: string): string {
  if (field === 'id') return '_id';
  if (isBuiltin(field)) return field;
  const key = metadataKeyOf(field)!;
  if (!field.includes('.') || key === '' || key === '__proto__') throw unknownField(field, 0);
  return metadataPath(key);
}


function operand(v: Value, now: Date): Operand {
  if (v.type === 'string' || v.type === 'number' || v.type === 'boolean') return { scalar: v.value };
  if (v.type === 'call') throw new Error(`${v.name}() reached the compiler unresolved: call resolveQuery first`);
  const d = resolveDate(v, now)!;
  return d.kind === 'day' ? { day: d } : { scalar: d.iso };
}

/** Missing or null; for `tags` also the empty list and for `path` the empty string (docs/query-language.md "Semantics": "" = no folder). */
function isNull(field: Field, path: string): Filter {
  if (field === 'tags') return { $or: [on(path, { $eq: null }), on(path, { $size: 0 })] };
  if (field === 'path') return on(path, { $in: [null, ''] });
  return on(path, { $eq: null });
}

function compilePred(p: Pred, now: Date, fields?: FieldTypes): Filter {
  const def = typedFieldOf(p, fields);
  if (def) return compileTypedPred(p, def, now);
  const path = fieldPath(p.field);
  return predicateFilter(p, path, (v: Value): Operand => operand(v, now), () => isNull(p.field, path));
}

function compileExpr(e: Expr, now: Date, fields?: FieldTypes): Filter {
  switch (e.type) {
    case 'and':
      return { $and: e.items.map((i) => compileExpr(i, now, fields)) };
    case 'or':
      return { $or: e.items.map((i) => compileExpr(i, now, fields)) };
    case 'not':
      return nor(compileExpr(e.expr, now, fields));
    default:
      return compilePred(e, now, fields);
  }
}

/** Sort keys, ending with the unique `_id` tie-breaker (docs/architecture.md §6); none → newest first. */
function compileSort(keys: OrderKey[]): Sort {
  if (keys.length === 0) return { created_at: -1, _id: 1 };
  const sort: Sort = {};
  for (const k of keys) {
    const path = fieldPath(k.field);
    if (!Object.hasOwn(sort, path)) sort[path] = k.dir === 'asc' ? 1 : -1;
    if (path === '_id') return sort; // already unique: later keys could never decide anything
  }
  sort._id = 1;
  return sort;
}

/**
 * Compiles a query to a store filter and sort (docs/architecture.md §6). Function calls must have been replaced
 * by `resolveQuery` first (an unresolved call is a programming error, thrown as such). Dates resolve against `opts.now`
 * (UTC). Every key of the filter is an operator of the store port's subset or a field path from
 * {@link fieldPath}; every value is a literal from the query (text reaches `$regex` escaped).
 * The sort always ends with `_id` (ascending, unless the query itself orders by `id`).
 * A shared (frozen) query without date words or relative dates is compiled once; its result is
 * frozen too, so callers must wrap, never change, the filter.
 * `opts.fields` types the predicates on defined custom fields (docs/custom-fields.md "In queries",
 * `typed.ts`): their comparisons follow the field type, and an operator or value the type lacks
 * is 400 `QUERY_OPERATOR_NOT_FOR_TYPE` at its position; `byOption` is set when the first ORDER BY
 * key is a select field (its reads page option by option, `findPageByOption`). A query naming a
 * defined field is compiled every time (its form depends on the definitions).
 */
export function compileQuery(q: Query, opts: { now: Date; fields?: FieldTypes }): CompiledQuery {
  const typed = usesTypedFields(q, opts.fields);
  const hit = typed ? undefined : compiled.get(q);
  if (hit) return hit;
  const reusable = !typed && Object.isFrozen(q) && !dependsOnNow(q.where);
  const result: CompiledQuery = { filter: q.where ? compileExpr(q.where, opts.now, typed ? opts.fields : undefined) : {}, sort: compileSort(q.orderBy) };
  const byOption = typed ? optionSort(q, opts.fields) : undefined;
  if (byOption) result.byOption = byOption;
  if (reusable) compiled.set(q, deepFreeze(result));
  return result;
}

/** A compiled query: the store filter and sort, and for a sort on a select field its option order. */
export interface CompiledQuery {
  filter: Filter;
  sort: Sort;
  byOption?: { path: string; ids: string[]; dir: 1 | -1 };
}

/**
 * True when the stored task (a `TaskDoc`, domain/task.ts) matches the query's condition at `now`,
 * evaluated in memory with the store's matcher (`compileFilter`, which compiles a shared query's
 * frozen filter once).
 */
export function queryMatches(q: Query, taskDoc: Doc, now: Date, fields?: FieldTypes): boolean {
  return compileFilter(compileQuery(q, { now, ...(fields ? { fields } : {}) }).filter)(taskDoc);
}

/** Compiled forms of shared queries (parse cache, effective-query memo) that do not depend on `now`. */
const compiled = new WeakMap<Query, CompiledQuery>();

/** True when an expression holds a value that resolves against `now` (see {@link resolvesAtNow}). */
function dependsOnNow(e: Expr | undefined): boolean {
  if (!e) return false;
  switch (e.type) {
    case 'and':
    case 'or':
      return e.items.some(dependsOnNow);
    case 'not':
      return dependsOnNow(e.expr);
    default:
      return valuesOf(e).some(resolvesAtNow);
  }
}

/**
 * True for a date word (`today`, `now`…), a relative date (`-7d`) or a function call (resolved
 * per request, `startOfWeek()` against the clock): a compiled form holding one is not reusable.
 */
function resolvesAtNow(v: Value): boolean {
  return v.type === 'dateword' || v.type === 'relative' || v.type === 'call';
}

