import { LIST_FUNCTIONS, type Expr, type OrderKey, type Pred, type Query, type Value } from './ast.js';

/**
 * Prints a query in canonical form (docs/architecture.md §6; used for `effective_query`): upper-case
 * keywords, single-quoted strings, parentheses only where precedence needs them, every ORDER BY
 * key with its direction. `parseQuery(printQuery(q))` deep-equals `q` for any normal-form AST.
 */
export function printQuery(q: Query): string {
  const parts: string[] = [];
  if (q.where) parts.push(printExpr(q.where));
  if (q.orderBy.length > 0) parts.push(`ORDER BY ${q.orderBy.map(printKey).join(', ')}`);
  return parts.join(' ');
}

function printKey(k: OrderKey): string {
  return `${k.field} ${k.dir.toUpperCase()}`;
}

function printExpr(e: Expr): string {
  switch (e.type) {
    case 'or':
      return e.items.map(printExpr).join(' OR ');
    case 'and':
      return e.items.map((i) => (i.type === 'or' ? `(${printExpr(i)})` : printExpr(i))).join(' AND ');
    case 'not':
      return `NOT ${e.expr.type === 'and' || e.expr.type === 'or' ? `(${printExpr(e.expr)})` : printExpr(e.expr)}`;
    default:
      return printPred(e);
  }
}

function printPred(p: Pred): string {
  const not = (flag: boolean): string => (flag ? 'NOT ' : '');
  switch (p.type) {
    case 'cmp':
      return `${p.field} ${p.op} ${printValue(p.value)}`;
    case 'in':
      // a list function alone is written without parentheses: `app.sprint IN openSprints()`
      return p.values.length === 1 && p.values[0]!.type === 'call' && LIST_FUNCTIONS.has(p.values[0]!.name)
        ? `${p.field} ${not(p.not)}IN ${printValue(p.values[0]!)}`
        : `${p.field} ${not(p.not)}IN ${printList(p.values)}`;
    case 'has':
      return `${printValue(p.value)} IN ${p.field}`;
    case 'contains':
      return `${p.field} CONTAINS ${printValue(p.value)}`;
    case 'containsAll':
      return `${p.field} CONTAINS_ALL ${printList(p.values)}`;
    case 'like':
      return `${p.field} ${not(p.not)}${p.caseInsensitive ? 'ILIKE' : 'LIKE'} ${printString(p.pattern)}`;
    case 'match':
      return `${p.field} ${p.not ? '!~' : '~'} ${printString(p.text)}`;
    case 'null':
      return `${p.field} IS ${not(p.not)}NULL`;
    case 'between':
      return `${p.field} BETWEEN ${printValue(p.low)} AND ${printValue(p.high)}`;
  }
}

function printList(values: Value[]): string {
  return `(${values.map(printValue).join(', ')})`;
}

/** A value as query text; strings are single-quoted with `\` and `'` backslash-escaped. */
function printValue(v: Value): string {
  switch (v.type) {
    case 'string':
      return printString(v.value);
    case 'number':
    case 'boolean':
    case 'date':
    case 'dateword':
      return String(v.value);
    case 'relative':
      return `${v.amount < 0 ? '-' : '+'}${Math.abs(v.amount)}${v.unit}`;
    case 'call':
      return `${v.name}(${v.args.map(printValue).join(', ')})`;
  }
}

function printString(s: string): string {
  return `'${s.replace(/[\\']/g, (c) => `\\${c}`)}'`;
}
