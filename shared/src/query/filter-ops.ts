import type { Filter } from '../store/port.js';
import type { CmpOp } from './ast.js';

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
