import { AppError } from '../errors/index.js';
import { metadataPath } from '../store/keys.js';
import type { Filter } from '../store/port.js';
import { metadataKeyOf, type Expr, type Pred, type Query, type Value } from './ast.js';
import { readIso, resolveDate, type ResolvedDate } from './dates.js';
import { on, predicateFilter, type Operand } from './filter-ops.js';

/*
 * The typing stage of the query compiler (docs/custom-fields.md "In queries"): predicates on a
 * defined custom field compare by the field's type, each type has its operator set, and values
 * are read as the type's values (option labels → ids, quoted dates → dates, numeric text →
 * numbers). Runs after parsing and function resolution, before the store filter is built.
 */

/** What the compiler needs of a custom field definition (`CustomFieldDoc` in the domain package fits). */
export interface TypedField {
  key: string;
  name: string;
  type: 'text' | 'number' | 'date' | 'datetime' | 'boolean' | 'select' | 'multi_select' | 'user' | 'url';
  options?: ReadonlyArray<{ id: string; label: string; color?: string }>;
}

/** Definitions by metadata key (`cf.priority` → its definition). */
export type FieldTypes = ReadonlyMap<string, TypedField>;

/** The operator forms a predicate can take, as the docs name them. */
type OpName = '=' | '!=' | '<' | '<=' | '>' | '>=' | 'IN' | 'NOT IN' | 'BETWEEN' | 'LIKE' | 'ILIKE' | '~' | 'CONTAINS' | 'CONTAINS_ALL' | 'IS NULL';

const ORDERED: OpName[] = ['=', '!=', '<', '<=', '>', '>=', 'IN', 'NOT IN', 'BETWEEN', 'IS NULL'];

/** The operators of each type (docs/custom-fields.md "Operators by type"). */
export const TYPE_OPERATORS: Readonly<Record<TypedField['type'], readonly OpName[]>> = {
  number: ORDERED,
  date: ORDERED,
  datetime: ORDERED,
  text: [...ORDERED, 'LIKE', 'ILIKE', '~'],
  url: ['=', '!=', 'IN', 'NOT IN', 'LIKE', 'ILIKE', '~', 'IS NULL'],
  select: ['=', '!=', 'IN', 'NOT IN', 'IS NULL'],
  user: ['=', '!=', 'IN', 'NOT IN', 'IS NULL'],
  boolean: ['=', '!=', 'IS NULL'],
  multi_select: ['=', '!=', 'IN', 'NOT IN', 'CONTAINS', 'CONTAINS_ALL', 'IS NULL'],
};

function opName(p: Pred): OpName {
  switch (p.type) {
    case 'cmp':
      return p.op;
    case 'in':
      return p.not ? 'NOT IN' : 'IN';
    case 'has':
    case 'contains':
      return 'CONTAINS';
    case 'containsAll':
      return 'CONTAINS_ALL';
    case 'like':
      return p.caseInsensitive ? 'ILIKE' : 'LIKE';
    case 'match':
      return '~';
    case 'null':
      return 'IS NULL';
    case 'between':
      return 'BETWEEN';
  }
}

/** The query position of a predicate (its field) and of its operator, as the parser recorded them. */
function positionsOf(p: Pred): { at: number; opAt: number } {
  const rec = p as Pred & { at?: number; opAt?: number };
  return { at: rec.at ?? 0, opAt: rec.opAt ?? rec.at ?? 0 };
}

function typeFault(p: Pred, def: TypedField, message: string, position: number): AppError {
  return new AppError('QUERY_OPERATOR_NOT_FOR_TYPE', {
    message: `${message} at position ${position}`,
    details: { position, field: p.field, type: def.type, name: def.name, operators: TYPE_OPERATORS[def.type] },
  });
}

/** The definition a predicate's field has, if any. */
function defOf(p: { field: string }, fields: FieldTypes): TypedField | undefined {
  const key = metadataKeyOf(p.field);
  return key === undefined ? undefined : fields.get(key);
}


const RELATIVE = /^([+-])(\d{1,6})([dwmy])$/;

/** A query value read as a date (quoted text too: `'2026-03-01'`, `'-7d'`, `'today'`), or undefined. */
function asDate(v: Value, now: Date): ResolvedDate | undefined {
  if (v.type !== 'string') return resolveDate(v, now);
  const t = v.value.trim();
  const word = t.toLowerCase();
  if (word === 'today' || word === 'yesterday' || word === 'tomorrow' || word === 'now') return resolveDate({ type: 'dateword', value: word }, now);
  const rel = RELATIVE.exec(word);
  if (rel) return resolveDate({ type: 'relative', amount: Number(rel[2]) * (rel[1] === '-' ? -1 : 1), unit: rel[3] as 'd' }, now);
  return readIso(t.toUpperCase());
}

function optionIdOf(def: TypedField, v: Value): string | undefined {
  if (v.type !== 'string') return undefined;
  const opts = def.options ?? [];
  return opts.find((o) => o.id === v.value)?.id ?? opts.find((o) => o.label.toLowerCase() === v.value.toLowerCase())?.id;
}

/**
 * One value of predicate `p` read as the type of `def`; throws `QUERY_OPERATOR_NOT_FOR_TYPE` at
 * its position for a value the type cannot hold (text on a number field, an unknown option).
 */
function operandOf(p: Pred, def: TypedField, v: Value, now: Date, position: number): Operand {
  const bad = (what: string) => typeFault(p, def, `${p.field} ("${def.name}") is a ${def.type} field; ${what}`, position);
  switch (def.type) {
    case 'number': {
      if (v.type === 'number') return { scalar: v.value };
      if (v.type === 'string' && v.value.trim() !== '' && Number.isFinite(Number(v.value))) return { scalar: Number(v.value) };
      throw bad('compare it with a number');
    }
    case 'boolean': {
      if (v.type === 'boolean') return { scalar: v.value };
      if (v.type === 'string' && (v.value === 'true' || v.value === 'false')) return { scalar: v.value === 'true' };
      throw bad('compare it with true or false');
    }
    case 'select':
    case 'multi_select': {
      const id = optionIdOf(def, v);
      if (id === undefined) throw bad(`${JSON.stringify(v.type === 'string' ? v.value : v)} is not one of its options (${(def.options ?? []).map((o) => `${o.id} "${o.label}"`).join(', ')})`);
      return { scalar: id };
    }
    case 'date': {
      const d = asDate(v, now);
      if (!d) throw bad('compare it with a date (2026-03-15, today, -7d)');
      // stored as YYYY-MM-DD: a day is that text; an instant stands for its UTC day
      return { scalar: (d.kind === 'day' ? d.start : d.iso).slice(0, 10) };
    }
    case 'datetime': {
      const d = asDate(v, now);
      if (!d) throw bad('compare it with a date or an instant (2026-03-15, 2026-03-15T10:00Z, now, -7d)');
      return d.kind === 'day' ? { day: { start: d.start, end: d.end } } : { scalar: d.iso };
    }
    case 'text':
    case 'url':
    case 'user':
      if (v.type === 'string') return { scalar: v.value };
      throw bad('compare it with text');
  }
}

/**
 * The store filter of a predicate on a defined custom field (docs/custom-fields.md "In queries"):
 * the operator must be in the type's set ({@link TYPE_OPERATORS}; else 400
 * `QUERY_OPERATOR_NOT_FOR_TYPE` at the operator's position) and each value must read as the type
 * (else the same 400 at the predicate's position). Numbers compare numerically; dates as stored
 * days (`date`, `YYYY-MM-DD` text) or instants (`datetime`, UTC ISO text, a day as its range);
 * selects by option id (a label, any case, names its option); on a multi_select `=` and `IN` mean
 * "has" / "has any", `CONTAINS_ALL` "has all". Missing values behave as on untyped fields (`!=`,
 * `NOT IN` match tasks without the field).
 */
export function compileTypedPred(p: Pred, def: TypedField, now: Date): Filter {
  const { at, opAt } = positionsOf(p);
  const name = opName(p);
  if (!TYPE_OPERATORS[def.type].includes(name)) {
    throw typeFault(p, def, `${name} does not apply to ${p.field} ("${def.name}"), a ${def.type} field; use ${TYPE_OPERATORS[def.type].join(', ')}`, p.type === 'has' ? at : opAt);
  }
  const path = metadataPath(metadataKeyOf(p.field)!);
  const op = (v: Value) => operandOf(p, def, v, now, at);
  return predicateFilter(p, path, op, () => (def.type === 'multi_select' ? { $or: [on(path, { $eq: null }), on(path, { $size: 0 })] } : on(path, { $eq: null })));
}

/** The typed predicate compiler when `p`'s field is defined in `fields`, else undefined (untyped, as before). */
export function typedFieldOf(p: Pred, fields: FieldTypes | undefined): TypedField | undefined {
  return fields && fields.size > 0 ? defOf(p, fields) : undefined;
}

/** True when `test` holds for a field the query filters or sorts on. */
function anyField(q: Query, test: (field: string) => boolean): boolean {
  const inExpr = (e: Expr): boolean => {
    switch (e.type) {
      case 'and':
      case 'or':
        return e.items.some(inExpr);
      case 'not':
        return inExpr(e.expr);
      default:
        return test(e.field);
    }
  };
  return (q.where !== undefined && inExpr(q.where)) || q.orderBy.some((k) => test(k.field));
}

/** True when the query names a field defined in `fields` (its compiled form then depends on them). */
export function usesTypedFields(q: Query, fields: FieldTypes | undefined): boolean {
  return fields !== undefined && fields.size > 0 && anyField(q, (field) => defOf({ field }, fields) !== undefined);
}

/**
 * Checks a query against the field types without compiling it (validation as you type): the
 * first operator or value a type cannot take throws its `QUERY_OPERATOR_NOT_FOR_TYPE`.
 */
export function checkQueryTypes(q: Query, fields: FieldTypes | undefined, now: Date): void {
  if (!q.where || !fields || fields.size === 0) return;
  const walk = (e: Expr): void => {
    if (e.type === 'and' || e.type === 'or') e.items.forEach(walk);
    else if (e.type === 'not') walk(e.expr);
    else {
      const def = defOf(e, fields);
      if (def && !valuesHaveCalls(e)) compileTypedPred(e, def, now);
    }
  };
  walk(q.where);
}

function valuesHaveCalls(p: Pred): boolean {
  const vs = p.type === 'cmp' || p.type === 'has' || p.type === 'contains' ? [p.value] : p.type === 'in' || p.type === 'containsAll' ? p.values : p.type === 'between' ? [p.low, p.high] : [];
  return vs.some((v) => v.type === 'call');
}

/**
 * A select field's sort (docs/custom-fields.md "ORDER BY"): when the first ORDER BY key is a
 * `select` field, its option ids in the option order, for reads that page option by option.
 */
export function optionSort(q: Query, fields: FieldTypes | undefined): { path: string; ids: string[]; dir: 1 | -1 } | undefined {
  const first = q.orderBy[0];
  if (!first || !fields) return undefined;
  const def = defOf(first, fields);
  if (!def || def.type !== 'select') return undefined;
  return { path: metadataPath(def.key), ids: (def.options ?? []).map((o) => o.id), dir: first.dir === 'asc' ? 1 : -1 };
}

/**
 * A validation fault for an unknown bare word rewritten to suggest the defined custom field it
 * names (`priority` or `Priority` → `cf.priority`), when one matches; other faults unchanged.
 */
export function suggestDefinedField<F extends { code: string; message: string; suggestion?: string; position: number; length: number }>(
  fault: F,
  fields: FieldTypes | undefined,
): F {
  if (fault.code !== 'QUERY_UNKNOWN_FIELD' || !fields || fields.size === 0) return fault;
  const word = /"([^"]*)"/.exec(fault.message)?.[1];
  if (word === undefined) return fault;
  const lower = word.toLowerCase();
  const def = [...fields.values()].find((d) => d.key.slice(d.key.indexOf('.') + 1).toLowerCase() === lower || d.name.toLowerCase() === lower);
  if (!def) return fault;
  return { ...fault, suggestion: def.key, message: `Unknown field "${word}" at position ${fault.position}; did you mean "${def.key}" (${def.name}, a ${def.type} field)?` };
}

/** True when the query names a `cf.*` field (only those can be defined, so only then are definitions read). */
export function namesCustomFields(q: Query): boolean {
  return anyField(q, (f) => metadataKeyOf(f)?.startsWith('cf.') === true);
}
