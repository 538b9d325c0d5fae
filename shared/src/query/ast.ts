/**
 * The query AST (docs/architecture.md §6). Produced by `parseQuery`, printed by `printQuery`, compiled by
 * `compileQuery`. It carries no positions, so `parseQuery(printQuery(q))` deep-equals `q`.
 * Normal form: `and`/`or` have at least two items and never directly contain their own kind.
 */

/**
 * A field in canonical API form: a builtin (`status`), or a metadata key written as
 * `<key>` when the key has a dot (`cf.priority`, `app.sprint`) and as `metadata.<key>`
 * otherwise (`metadata.order`) or when the key itself starts with `metadata.`.
 */
export type Field = string;

/** A literal. Dates stay symbolic here and are resolved against the clock only when compiled. */
export type Value =
  | { type: 'string'; value: string }
  | { type: 'number'; value: number }
  | { type: 'boolean'; value: boolean }
  /** ISO 8601 text as written: a day `2024-01-15` or an instant with offset `2024-01-15T10:00:00+02:00`. */
  | { type: 'date'; value: string }
  | { type: 'dateword'; value: 'today' | 'yesterday' | 'tomorrow' | 'now' }
  /** `now` shifted by `amount` (signed) days, weeks, months or years. */
  | { type: 'relative'; amount: number; unit: 'd' | 'w' | 'm' | 'y' }
  /**
   * A function call (`me()`, `activeSprint('b1')`, `startOfWeek(-1w)`), kept symbolic in the AST
   * and in every stored or echoed form; `resolveQuery` replaces it by literals per request.
   */
  | { type: 'call'; name: FunctionName; args: Value[] };

/** The query functions (docs/query-language.md "Functions"), in canonical spelling. */
export const FUNCTION_NAMES = [
  'me', 'activeSprint', 'openSprints', 'closedSprints',
  'startOfDay', 'startOfWeek', 'startOfMonth', 'endOfDay', 'endOfWeek', 'endOfMonth',
] as const;
/** A query function name. */
export type FunctionName = (typeof FUNCTION_NAMES)[number];
/** Functions whose value is a list of ids (only after `IN`). */
export const LIST_FUNCTIONS: ReadonlySet<FunctionName> = new Set(['openSprints', 'closedSprints']);

/** Comparison operators of `field <op> value`. */
export type CmpOp = '=' | '!=' | '<' | '<=' | '>' | '>=';

/** One condition. */
export type Pred =
  | { type: 'cmp'; field: Field; op: CmpOp; value: Value }
  | { type: 'in'; field: Field; not: boolean; values: Value[] }
  /** `value IN field` (`'q4' IN tags`). */
  | { type: 'has'; value: Value; field: Field }
  | { type: 'contains'; field: Field; value: Value }
  | { type: 'containsAll'; field: Field; values: Value[] }
  | { type: 'like'; field: Field; not: boolean; caseInsensitive: boolean; pattern: string }
  /** `~` / `!~`: case-insensitive substring. */
  | { type: 'match'; field: Field; not: boolean; text: string }
  | { type: 'null'; field: Field; not: boolean }
  | { type: 'between'; field: Field; low: Value; high: Value };

/** A condition tree: `and`/`or` lists, `not`, or a predicate. */
export type Expr = { type: 'and'; items: Expr[] } | { type: 'or'; items: Expr[] } | { type: 'not'; expr: Expr } | Pred;

/** One `ORDER BY` key; a key written without a direction is `desc` (docs/architecture.md §6). */
export interface OrderKey {
  field: Field;
  dir: 'asc' | 'desc';
}

/** A whole query: an optional condition and sort keys (empty = the reader's default order). */
export type Query = { where?: Expr; orderBy: OrderKey[] };

/** The builtin fields (docs/architecture.md §6), in the order used for suggestions. */
export const BUILTIN_FIELDS = [
  'id', 'title', 'description', 'status', 'path', 'tags', 'assignee', 'kickoff', 'deadline', 'checkInCount',
  'derivedFromId', 'created_at', 'created_by', 'updated_at', 'updated_by',
] as const;
/** A builtin field name. */
export type BuiltinField = (typeof BUILTIN_FIELDS)[number];

/** Builtin fields holding ISO 8601 UTC timestamps; a quoted string compared with them is read as a date. */
export const DATE_FIELDS: ReadonlySet<Field> = new Set(['kickoff', 'deadline', 'created_at', 'updated_at']);

const BUILTINS: ReadonlySet<string> = new Set(BUILTIN_FIELDS);

/** True for a builtin field name (case-sensitive). */
export function isBuiltin(name: string): name is BuiltinField {
  return BUILTINS.has(name);
}

/** The metadata key a field names, or undefined for a builtin. */
export function metadataKeyOf(field: Field): string | undefined {
  if (isBuiltin(field)) return undefined;
  return field.startsWith('metadata.') ? field.slice('metadata.'.length) : field;
}

/** The canonical field of a metadata key (see {@link Field}). */
export function metadataField(key: string): Field {
  const bareOk = /^[A-Za-z_][A-Za-z0-9_]*\./.test(key) && !key.startsWith('metadata.');
  return bareOk ? key : `metadata.${key}`;
}

/** The values a predicate compares with (none for patterns, text matches and null checks). */
export function valuesOf(p: Pred): readonly Value[] {
  switch (p.type) {
    case 'cmp':
    case 'has':
    case 'contains':
      return [p.value];
    case 'in':
    case 'containsAll':
      return p.values;
    case 'between':
      return [p.low, p.high];
    case 'like':
    case 'match':
    case 'null':
      return [];
  }
}
