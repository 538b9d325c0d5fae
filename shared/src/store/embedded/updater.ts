import { Context } from 'mingo';
import { update as mingoUpdate, type Modifier } from 'mingo/updater';
import type { Doc, Update } from '../port.js';
import { storedValue, toStored } from './values.js';

type Obj = Record<string, unknown>;

const isPlainObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * mingo's updater with an empty base context: it adds the query, comparison and boolean operators
 * an update needs by itself, while the default full context (every operator) would be copied on
 * every call. Returns the modified paths, like mingo's `update`.
 */
const UPDATE_OPTIONS = { queryOptions: { scriptEnabled: false, context: Context.init() } };

/** Applies `spec` to `doc` in place with mingo; true when something changed. */
export function applyWithMingo(doc: Doc, spec: Update): boolean {
  return mingoUpdate(doc, spec as Modifier<Doc>, undefined, undefined, UPDATE_OPTIONS).length > 0;
}

/** True for a path segment MongoDB reads as an array position (all digits). */
function isPosition(seg: string): boolean {
  for (let i = 0; i < seg.length; i++) {
    const c = seg.charCodeAt(i);
    if (c < 48 || c > 57) return false;
  }
  return seg.length > 0;
}

/** One `$set`/`$unset`/`$inc` of the fast path: the dotted field, its segments and the value. */
interface SimplePath {
  op: '$set' | '$unset' | '$inc';
  field: string;
  path: string[];
  value: unknown;
}

/**
 * Dotted paths of `$set`/`$unset`/`$inc`, split, when the fast path may apply them (no array
 * positions, no operators, no `__proto__`, no path inside another; `$inc` by a finite number).
 */
function simplePaths(spec: Update): SimplePath[] | undefined {
  const out: SimplePath[] = [];
  for (const op of Object.keys(spec)) {
    if (op !== '$set' && op !== '$unset' && op !== '$inc') return undefined;
    const fields = spec[op];
    if (!isPlainObject(fields)) return undefined;
    for (const field of Object.keys(fields)) {
      if (op === '$inc' && !(typeof fields[field] === 'number' && Number.isFinite(fields[field]))) return undefined;
      const path = field.split('.');
      for (const seg of path) if (seg === '' || seg === '__proto__' || seg.charCodeAt(0) === 36 || isPosition(seg)) return undefined;
      out.push({ op, field, path, value: fields[field] });
    }
  }
  // a path inside another (`a` and `a.b`), or one path twice, is a MongoDB error: left to mingo
  for (let i = 0; i < out.length; i++) {
    for (let j = 0; j < out.length; j++) {
      const a = out[i]!.field;
      const b = out[j]!.field;
      if (i !== j && (a === b || (b.length > a.length && b.charCodeAt(a.length) === 46 && b.startsWith(a)))) return undefined;
    }
  }
  return out;
}

/** Structural equality of stored (JSON) values, key order included, as MongoDB compares them. */
function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  // arrays of different lengths differ: no text of either is made (a list that grew by one)
  if (Array.isArray(a) !== Array.isArray(b) || (Array.isArray(a) && a.length !== (b as unknown[]).length)) return false;
  return JSON.stringify(a) === JSON.stringify(b);
}

/**
 * The document `doc` becomes under `spec` (port operators, MongoDB semantics), as a new stored
 * document, and whether anything changed; `doc` is not mutated. `$set`/`$unset` of plain (dotted)
 * paths through sub-documents are applied here; anything else (`$inc $push $addToSet $pull`, array
 * positions, paths through arrays or scalars) by mingo. Values are stored in their JSON form.
 */
export function applyUpdate(doc: Doc, spec: Update): { after: Doc; modified: boolean } {
  const paths = simplePaths(spec);
  if (paths && paths.every(({ op, path }) => traversable(doc, path) && (op !== '$inc' || incrementable(doc, path)))) {
    // Copy on write: the top level and the sub-documents on the written paths are new objects,
    // everything else is shared with `doc` (stored documents are never changed, see deepFreeze).
    const after: Obj = { ...doc };
    const copies = new Set<Obj>([after]);
    let modified = false;
    next: for (const { op, path, value } of paths) {
      let parent: Obj = after;
      for (let i = 0; i < path.length - 1; i++) {
        const seg = path[i]!;
        const child = parent[seg] as Obj | undefined;
        if (child === undefined) {
          if (op === '$unset') continue next;
          const made: Obj = {};
          copies.add(made);
          parent = parent[seg] = made;
        } else if (copies.has(child)) {
          parent = child;
        } else {
          const copy = { ...child };
          copies.add(copy);
          parent = parent[seg] = copy;
        }
      }
      const last = path[path.length - 1]!;
      if (op === '$inc') {
        // the event counter's `$inc` on every write: MongoDB semantics, missing = 0
        const next = ((parent[last] as number | undefined) ?? 0) + (value as number);
        if (parent[last] !== next) {
          parent[last] = next;
          modified = true;
        }
        continue;
      }
      if (op === '$unset') {
        if (isPlainObject(parent) && last in parent && parent[last] !== undefined) {
          delete parent[last];
          modified = true;
        }
        continue;
      }
      const stored = value === undefined ? undefined : storedValue(value);
      if (stored === undefined) continue;
      if (!sameValue(parent[last], stored)) {
        parent[last] = stored;
        modified = true;
      }
    }
    return { after: after as Doc, modified };
  }
  const after = toStored(doc);
  if (!applyWithMingo(after, spec)) return { after, modified: false };
  const stored = toStored(after);
  // mingo also reports paths it could not or did not really change (MongoDB counts changed documents)
  return { after: stored, modified: JSON.stringify(stored) !== JSON.stringify(doc) };
}

/** True when the value at `path` in `doc` is a number or missing (an `$inc` the fast path may apply). */
function incrementable(doc: Doc, path: readonly string[]): boolean {
  let v: unknown = doc;
  for (const seg of path) {
    if (!isPlainObject(v)) return v === undefined;
    v = v[seg];
  }
  return v === undefined || typeof v === 'number';
}

/** True when every prefix of `path` in `doc` is a sub-document or missing (never an array or scalar). */
function traversable(doc: Doc, path: readonly string[]): boolean {
  let v: unknown = doc;
  for (let i = 0; i < path.length - 1; i++) {
    v = (v as Obj)[path[i]!];
    if (v === undefined) return true;
    if (!isPlainObject(v)) return false;
  }
  return true;
}
