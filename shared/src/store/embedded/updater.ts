import { Context } from 'mingo';
import { update as mingoUpdate, type Modifier } from 'mingo/updater';
import type { Doc, Update } from '../port.js';
import { cloneJson, toStored } from './values.js';

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

/** Dotted paths of `$set`/`$unset`, split, when the fast path may apply them (no array positions, no operators). */
function simplePaths(spec: Update): Array<{ op: '$set' | '$unset'; path: string[]; value: unknown }> | undefined {
  const out: Array<{ op: '$set' | '$unset'; path: string[]; value: unknown }> = [];
  for (const op of Object.keys(spec)) {
    if (op !== '$set' && op !== '$unset') return undefined;
    const fields = spec[op];
    if (!isPlainObject(fields)) return undefined;
    for (const [field, value] of Object.entries(fields)) {
      const path = field.split('.');
      if (path.some((seg) => seg === '' || seg.startsWith('$') || /^\d+$/.test(seg))) return undefined;
      out.push({ op, path, value });
    }
  }
  // a path inside another (`a` and `a.b`) is a MongoDB error: left to mingo
  const joined = out.map((p) => p.path.join('.'));
  if (joined.some((a, i) => joined.some((b, j) => i !== j && (a === b || b.startsWith(`${a}.`))))) return undefined;
  return out;
}

/** Structural equality of stored (JSON) values, key order included, as MongoDB compares them. */
function sameValue(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
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
  if (paths && paths.every(({ path }) => traversable(doc, path))) {
    const after = cloneJson(doc);
    let modified = false;
    next: for (const { op, path, value } of paths) {
      let parent: Obj = after;
      for (let i = 0; i < path.length - 1; i++) {
        const seg = path[i]!;
        if (parent[seg] === undefined) {
          if (op === '$unset') continue next;
          parent[seg] = {};
        }
        parent = parent[seg] as Obj;
      }
      const last = path[path.length - 1]!;
      if (op === '$unset') {
        if (isPlainObject(parent) && last in parent && parent[last] !== undefined) {
          delete parent[last];
          modified = true;
        }
        continue;
      }
      const stored = value === undefined ? undefined : toStored(value);
      if (stored === undefined) continue;
      if (!sameValue(parent[last], stored)) {
        parent[last] = stored;
        modified = true;
      }
    }
    return { after, modified };
  }
  const after = toStored(doc);
  if (!applyWithMingo(after, spec)) return { after, modified: false };
  const stored = toStored(after);
  // mingo also reports paths it could not or did not really change (MongoDB counts changed documents)
  return { after: stored, modified: JSON.stringify(stored) !== JSON.stringify(doc) };
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
