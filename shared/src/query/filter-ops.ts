import type { Filter } from '../store/port.js';
import type { CmpOp, Pred, Value } from './ast.js';
import { escapeRegex, likeToRegex } from './patterns.js';

/**
 * The store filters of comparisons, shared by the untyped compiler (compile.ts) and the typed one
 * of custom fields (typed.ts): an operand is a literal, or a UTC day as the half-open ISO range
 * [start, end) (docs/query-language.md "Semantics").
 */
export type Operand = { scalar: string | number | boolean } | { day: { start: string; end: string } };

/** `{[path]: cond}`. */
export const on = (path: string, cond: Record<string, unknown>): Filter => ({ [path]: cond });
/** The negation of one filter. */
export const nor = (f: Filter): Filter => ({ $nor: [f] });

/** Equal to a literal, or within a day. */
export function eq(path: string, o: Operand): Filter {
  return 'scalar' in o ? on(path, { $eq: o.scalar }) : on(path, { $gte: o.day.start, $lt: o.day.end });
}

/** `= != < <= > >=`; a day compares by its boundaries (`<= D` = before the end of D, `> D` = from the next day). */
export function compare(path: string, op: CmpOp, o: Operand): Filter {
  if (op === '=') return eq(path, o);
  if (op === '!=') return 'scalar' in o ? on(path, { $ne: o.scalar }) : nor(eq(path, o));
  if ('scalar' in o) return on(path, { [{ '<': '$lt', '<=': '$lte', '>': '$gt', '>=': '$gte' }[op]]: o.scalar });
  const { start, end } = o.day;
  return on(path, { '<': { $lt: start }, '<=': { $lt: end }, '>': { $gte: end }, '>=': { $gte: start } }[op]);
}

/** Any of (`$in`) or all of (`$all`) the operands; days fall back to `$or`/`$and` of day ranges. */
export function anyOrAll(path: string, os: Operand[], mode: 'any' | 'all'): Filter {
  if (os.every((o) => 'scalar' in o)) return on(path, { [mode === 'any' ? '$in' : '$all']: os.map((o) => (o as { scalar: unknown }).scalar) });
  return { [mode === 'any' ? '$or' : '$and']: os.map((o) => eq(path, o)) };
}

/**
 * The store filter of one predicate on `path`, its values read by `op` (untyped in compile.ts,
 * by the field's type in typed.ts, which throws its 400 there) and `IS NULL` by `isNull` (which
 * differs per field kind). Shapes per operator: docs/query-language.md "Semantics".
 */
export function predicateFilter(p: Pred, path: string, op: (v: Value) => Operand, isNull: () => Filter): Filter {
  const negate = (flag: boolean, f: Filter): Filter => (flag ? nor(f) : f);
  switch (p.type) {
    case 'cmp':
      return compare(path, p.op, op(p.value));
    case 'in': {
      const os = p.values.map(op);
      if (p.not && os.every((o) => 'scalar' in o)) return on(path, { $nin: os.map((o) => (o as { scalar: unknown }).scalar) });
      return negate(p.not, anyOrAll(path, os, 'any'));
    }
    case 'has':
    case 'contains':
      return eq(path, op(p.value));
    case 'containsAll':
      return anyOrAll(path, p.values.map(op), 'all');
    case 'like':
      return negate(p.not, on(path, { $regex: likeToRegex(p.pattern), ...(p.caseInsensitive ? { $options: 'i' } : {}) }));
    case 'match':
      return negate(p.not, on(path, { $regex: escapeRegex(p.text), $options: 'i' }));
    case 'null':
      return negate(p.not, isNull());
    case 'between': {
      const [low, high] = [op(p.low), op(p.high)];
      const lower = 'scalar' in low ? low.scalar : low.day.start;
      const upper = 'scalar' in high ? { $lte: high.scalar } : { $lt: high.day.end };
      return on(path, { $gte: lower, ...upper });
    }
  }
}
