import { metadataKeyOf, type Expr, type Field, type Query, type Value } from './ast.js';

/**
 * One enter or exit action of a column (docs/architecture.md §7).
 * `field` is an API field name: `status`, `assignee`, `path`, `tags`, `kickoff`, `deadline`, or
 * `metadata.<key>` for a metadata key (`metadata.cf.priority`, `metadata.app.sprint`, `metadata.order`).
 * `operation`: `set` (value), `add`/`remove` (value: ONE tag, a string), `clear` (no value).
 * Boards stored before tag actions carried one tag may hold a list of tags in `value`; reads split
 * them (`columnsAsRead`, domain/columns.ts) and the next board write stores them split.
 * `source`: `query` actions are regenerated from the column query on every board write;
 * `manual` actions are kept as the client sent them.
 */
export interface ColumnAction {
  trigger: 'enter' | 'exit';
  field: string;
  operation: 'set' | 'add' | 'remove' | 'clear';
  value?: unknown;
  source: 'query' | 'manual';
}

/** Builtins an enter action may `set` from `field = value`. */
const SETTABLE: ReadonlySet<Field> = new Set(['status', 'assignee', 'path']);
/** Builtins an enter action may `clear` from `field IS NULL`. */
const CLEARABLE: ReadonlySet<Field> = new Set(['assignee', 'kickoff', 'deadline', 'path']);

/** The action field for a query field: a settable builtin as is, a metadata key as `metadata.<key>`. */
function actionField(field: Field, builtins: ReadonlySet<Field>): string | undefined {
  if (builtins.has(field)) return field;
  const key = metadataKeyOf(field);
  return key === undefined ? undefined : `metadata.${key}`;
}

/**
 * The stored value of a `set` action from `field = me()`: the mover becomes the value when the
 * move is applied (`planMove`), so a "My work" column assigns the card to whoever drags it there.
 */
export const MOVER_VALUE: Readonly<{ fn: 'me' }> = Object.freeze({ fn: 'me' });

/** True for {@link MOVER_VALUE} (as stored, or read back from the store). */
export function isMoverValue(v: unknown): v is { fn: 'me' } {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length === 1 && (v as { fn?: unknown }).fn === 'me';
}

/** A plain literal a write can store (dates are relative to the clock, so they yield no action). */
function literal(v: Value): string | number | boolean | undefined {
  return v.type === 'string' || v.type === 'number' || v.type === 'boolean' ? v.value : undefined;
}

/** One tag per action (ud's `ColumnActionDTO.value` is a string): enter add + exit remove of each tag, in order. */
function tagActions(values: Value[]): ColumnAction[] {
  const tags = values.map(literal);
  if (!tags.every((t): t is string => typeof t === 'string')) return [];
  return [...new Set(tags)].flatMap((tag): ColumnAction[] => [
    { trigger: 'enter', field: 'tags', operation: 'add', value: tag, source: 'query' },
    { trigger: 'exit', field: 'tags', operation: 'remove', value: tag, source: 'query' },
  ]);
}

function actionsOf(e: Expr): ColumnAction[] {
  switch (e.type) {
    case 'cmp': {
      if (e.op !== '=') return [];
      if (e.field === 'tags') return tagActions([e.value]);
      const field = actionField(e.field, SETTABLE);
      if (field !== undefined && e.value.type === 'call' && e.value.name === 'me') {
        return [{ trigger: 'enter', field, operation: 'set', value: { ...MOVER_VALUE }, source: 'query' }];
      }
      const value = literal(e.value);
      if (field === undefined || value === undefined || (!field.startsWith('metadata.') && typeof value !== 'string')) return [];
      return [{ trigger: 'enter', field, operation: 'set', value, source: 'query' }];
    }
    case 'has':
    case 'contains':
      return e.field === 'tags' ? tagActions([e.value]) : [];
    case 'containsAll':
      return e.field === 'tags' ? tagActions(e.values) : [];
    case 'null': {
      const field = actionField(e.field, CLEARABLE);
      return e.not || field === undefined ? [] : [{ trigger: 'enter', field, operation: 'clear', source: 'query' }];
    }
    default:
      return [];
  }
}

/**
 * The `source: 'query'` actions a column query implies (docs/architecture.md §7), in query order. Walks the
 * top-level AND: `status|assignee|path = 'v'` → enter set; `assignee = me()` (or a metadata
 * field) → enter set to the mover ({@link MOVER_VALUE}); `<metadata field> = literal` → enter
 * set on `metadata.<key>`; `tags = 'x'`, `'x' IN tags`, `tags CONTAINS 'x'`,
 * `tags CONTAINS_ALL ('x', …)` → enter add + exit remove of each tag, one tag per action; `IS NULL` on assignee, kickoff,
 * deadline, path or a metadata key → enter clear. Everything else (OR, NOT, ranges, LIKE, `~`,
 * dates, ORDER BY) yields nothing.
 */
export function materializeActions(q: Query): ColumnAction[] {
  if (!q.where) return [];
  const conjuncts = q.where.type === 'and' ? q.where.items : [q.where];
  return conjuncts.flatMap(actionsOf);
}
