/**
 * Value helpers of the embedded store: path resolution like MongoDB (arrays of sub-documents are
 * traversed), hash keys for equality indexes, and MongoDB's sort order (docs/architecture.md §2).
 */
import type { Doc, Sort } from '../port.js';

type Obj = Record<string, unknown>;

function isObject(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * The values at a dotted path (`path` already split), descending into arrays of sub-documents
 * as MongoDB does (`members.user_id`). A leaf array is returned as one value; missing → none.
 */
export function valuesAt(doc: unknown, path: readonly string[]): unknown[] {
  const v = valueAt(doc, path);
  if (v === THROUGH_ARRAY) return valuesThroughArrays([doc], path);
  return v === undefined ? [] : [v];
}

/** What {@link valueAt} answers for a path that descends through an array (several values). */
export const THROUGH_ARRAY = Symbol('through an array');

/**
 * The one value at a dotted path when the walk crosses no array before its last segment (a leaf
 * array is the value; missing → `undefined`), else {@link THROUGH_ARRAY}: the common case of
 * {@link valuesAt} without building an array, for the store's per-document hot paths.
 */
export function valueAt(doc: unknown, path: readonly string[]): unknown {
  let v = doc;
  for (let i = 0; i < path.length; i++) {
    if (Array.isArray(v)) return THROUGH_ARRAY;
    if (!isObject(v)) return undefined;
    v = v[path[i]!];
    if (v === undefined) return undefined;
  }
  return v;
}

function valuesThroughArrays(start: unknown[], path: readonly string[]): unknown[] {
  let current = start;
  for (const seg of path) {
    const next: unknown[] = [];
    for (const v of current) {
      if (Array.isArray(v)) {
        if (/^\d+$/.test(seg) && v[Number(seg)] !== undefined) next.push(v[Number(seg)]);
        for (const el of v) if (isObject(el) && el[seg] !== undefined) next.push(el[seg]);
      } else if (isObject(v) && v[seg] !== undefined) {
        next.push(v[seg]);
      }
    }
    current = next;
  }
  return current;
}

/** True for the values {@link hashKey} keys (strings, numbers, booleans), without making the key. */
export function isHashable(v: unknown): v is string | number | boolean {
  const t = typeof v;
  return t === 'string' || t === 'number' || t === 'boolean';
}

/** Hash key of a string, number or boolean; `undefined` for any other value (not indexable). */
export function hashKey(v: unknown): string | undefined {
  switch (typeof v) {
    case 'string':
      return `s${v}`;
    case 'number':
      return `n${v}`;
    case 'boolean':
      return v ? 'T' : 'F';
    default:
      return undefined;
  }
}

/** Hash keys of every scalar at a path; elements of leaf arrays are keyed one by one. */
export function hashKeysAt(doc: unknown, path: readonly string[]): string[] {
  const one = valueAt(doc, path);
  if (one === undefined) return [];
  const k = hashKey(one);
  if (k !== undefined) return [k];
  const keys = new Set<string>();
  for (const v of valuesAt(doc, path)) {
    for (const el of Array.isArray(v) ? v : [v]) {
      const k = hashKey(el);
      if (k !== undefined) keys.add(k);
    }
  }
  return [...keys];
}

/** Sort key of an empty array: MongoDB orders it before null and missing fields. */
const EMPTY_ARRAY = Symbol('empty array');

/** BSON type order for the JSON types we store (MongoDB "Comparison/Sort Order"). */
function typeRank(v: unknown): number {
  if (v === EMPTY_ARRAY) return 0;
  if (v === null || v === undefined) return 1;
  if (typeof v === 'number') return 2;
  if (typeof v === 'string') return 3;
  if (Array.isArray(v)) return 5;
  if (typeof v === 'object') return 4;
  if (typeof v === 'boolean') return 8;
  return 9;
}

/** A unit at or past U+D800: a surrogate (half of a character past U+FFFF) or U+E000–U+FFFF. */
const HIGH_UNIT = /[\uD800-\uFFFF]/;

/**
 * A string's sort key: a string whose UTF-16 unit order (JavaScript's `<`) is the code point order
 * of the original, which is how MongoDB sorts strings without a collation (by their UTF-8 bytes).
 * The two orders differ only between surrogates (the halves of a character past U+FFFF, such as
 * '𝒜' or an emoji) and U+E000–U+FFFF, which code point order puts first: those units are moved
 * (U+E000–U+FFFF down by 0x800, surrogates up by 0x2000). A string without such a unit (nearly
 * every one) is its own key; the check runs once per key, not per comparison.
 */
export function codePointKey(s: string): string {
  if (!HIGH_UNIT.test(s)) return s;
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    out += String.fromCharCode(c < 0xd800 ? c : c >= 0xe000 ? c - 0x800 : c + 0x2000);
  }
  return out;
}

/**
 * Compares two stored values in MongoDB order (no collation). Strings compare by UTF-16 unit here:
 * sort keys ({@link sortKey}) are {@link codePointKey}s, which makes that MongoDB's code point order.
 */
export function compareValues(a: unknown, b: unknown): number {
  if (typeof a === typeof b && (typeof a === 'number' || typeof a === 'string')) return a < (b as typeof a) ? -1 : a > (b as typeof a) ? 1 : 0;
  const rank = typeRank(a) - typeRank(b);
  if (rank !== 0) return Math.sign(rank);
  if (typeof a === 'number' || typeof a === 'string' || typeof a === 'boolean') {
    return a < (b as typeof a) ? -1 : a > (b as typeof a) ? 1 : 0;
  }
  if (Array.isArray(a)) return compareSequences(a, b as unknown[], compareValues);
  if (isObject(a)) {
    const pair = (x: [string, unknown], y: [string, unknown]) =>
      Math.sign(typeRank(x[1]) - typeRank(y[1])) || (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0) || compareValues(x[1], y[1]);
    return compareSequences(Object.entries(a), Object.entries(b as Obj), pair);
  }
  return 0;
}

function compareSequences<T>(a: T[], b: T[], cmp: (x: T, y: T) => number): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    const c = cmp(a[i]!, b[i]!);
    if (c !== 0) return c;
  }
  return Math.sign(a.length - b.length);
}

/**
 * The value a document sorts by on one path: an array sorts by its smallest element ascending
 * and its largest descending; an empty array before null; a missing field like null; a string as
 * its {@link codePointKey} (compare keys only with each other).
 */
export function sortKey(doc: Doc, path: readonly string[], dir: 1 | -1): unknown {
  const one = valueAt(doc, path);
  if (one !== THROUGH_ARRAY && one !== undefined && !Array.isArray(one)) return typeof one === 'string' ? codePointKey(one) : one;
  const values = valuesAt(doc, path);
  const flat = values.flatMap((v) => (Array.isArray(v) ? (v.length > 0 ? v.map(keyOf) : [EMPTY_ARRAY]) : [keyOf(v)]));
  if (flat.length === 0) return null;
  return flat.reduce((best, v) => (compareValues(v, best) * dir < 0 ? v : best));
}

/** A value as a sort key: a string as its {@link codePointKey}. */
const keyOf = (v: unknown): unknown => (typeof v === 'string' ? codePointKey(v) : v);

/**
 * Sorts documents by a MongoDB sort spec (key order significant; ties keep their input order) and
 * returns the first `limit` of them (default all) in a new array. A small `limit` keeps only the
 * best so far instead of sorting everything (a page of a large match). Sort keys are computed once
 * per document.
 */
export function sortDocs<T extends Doc>(docs: readonly T[], sort: Sort, limit = docs.length): T[] {
  if (limit <= 0 || docs.length === 0) return [];
  if (docs.length === 1) return [docs[0]!];
  const specs = Object.entries(sort).map(([field, dir]) => ({ path: field.split('.'), dir }));
  // One key column per sort field; comparisons read them by document index. The first column is
  // computed for every document, the others only for documents whose earlier keys tie.
  const first = specs[0]!;
  const firstKeys = docs.map((doc) => sortKey(doc, first.path, first.dir));
  const rest = specs.slice(1).map((spec) => ({ ...spec, keys: new Map<number, unknown>() }));
  const keyOf = (col: (typeof rest)[number], i: number): unknown => {
    let k = col.keys.get(i);
    if (k === undefined && !col.keys.has(i)) col.keys.set(i, (k = sortKey(docs[i]!, col.path, col.dir)));
    return k;
  };
  const cmp = (x: number, y: number): number => {
    const c = compareValues(firstKeys[x], firstKeys[y]) * first.dir;
    if (c !== 0) return c;
    for (let j = 0; j < rest.length; j++) {
      const col = rest[j]!;
      const d = compareValues(keyOf(col, x), keyOf(col, y)) * col.dir;
      if (d !== 0) return d;
    }
    return x - y;
  };
  if (limit * 4 >= docs.length) {
    const order = Array.from(docs, (_, i) => i).sort(cmp);
    return order.slice(0, limit).map((i) => docs[i]!);
  }
  const best: number[] = [];
  for (let i = 0; i < docs.length; i++) {
    if (best.length === limit && cmp(i, best[limit - 1]!) >= 0) continue;
    let lo = 0;
    let hi = best.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cmp(i, best[mid]!) < 0) hi = mid;
      else lo = mid + 1;
    }
    best.splice(lo, 0, i);
    if (best.length > limit) best.pop();
  }
  return best.map((i) => docs[i]!);
}

/** Marks a value {@link jsonCopy} leaves out (`undefined`, functions, symbols: JSON drops them). */
const OMIT = Symbol('omit');
/** Nesting past which {@link jsonCopy} hands the value to JSON itself (which reports cycles). */
const MAX_DEPTH = 64;

/**
 * The value `JSON.parse(JSON.stringify(v))` gives, built in one pass for plain data (objects,
 * arrays, strings, finite numbers, booleans, null); anything else (a Date, a class instance, an
 * object with `toJSON`, a `__proto__` key, deep nesting) goes through JSON itself, so the result
 * is always the same. Every write copies its documents (and every event its task), so this runs
 * on every write: one pass and no intermediate string. With `freeze`, every object and array of
 * the copy is frozen as it is made (a stored document: `deepFreeze` then has nothing left to walk).
 */
function jsonCopy(v: unknown, depth: number, freeze: boolean): unknown {
  switch (typeof v) {
    case 'string':
    case 'boolean':
      return v;
    case 'number':
      return Number.isFinite(v) ? (v === 0 ? 0 : v) : null; // -0 is written as 0
    case 'undefined':
    case 'function':
    case 'symbol':
      return OMIT;
    case 'object':
      break;
    default:
      return viaJson(v, freeze); // bigint: JSON throws, as before
  }
  if (v === null) return null;
  if (depth > MAX_DEPTH) return viaJson(v, freeze);
  if (Array.isArray(v)) {
    const out: unknown[] = new Array(v.length);
    for (let i = 0; i < v.length; i++) {
      const x = jsonCopy(v[i], depth + 1, freeze);
      out[i] = x === OMIT ? null : x;
    }
    return freeze ? Object.freeze(out) : out;
  }
  const proto = Object.getPrototypeOf(v) as unknown;
  if ((proto !== Object.prototype && proto !== null) || typeof (v as { toJSON?: unknown }).toJSON === 'function') {
    return viaJson(v, freeze);
  }
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(v)) {
    if (key === '__proto__') return viaJson(v, freeze);
    const x = jsonCopy((v as Record<string, unknown>)[key], depth + 1, freeze);
    if (x !== OMIT) out[key] = x;
  }
  return freeze ? Object.freeze(out) : out;
}

/** `JSON.parse(JSON.stringify(v))`, deep-frozen with `freeze`. */
function viaJson(v: unknown, freeze: boolean): unknown {
  const out = JSON.parse(JSON.stringify(v) ?? 'null') as unknown;
  if (freeze) freezeParsed(out);
  return out;
}

/**
 * `deepFreeze` for a value fresh from `JSON.parse` (nothing in it is frozen or shared yet, and it
 * holds only plain objects, arrays and primitives): no frozen-checks, no key arrays. Used for the
 * documents loaded at open and for {@link toStored}'s JSON fallback.
 */
export function freezeParsed(value: unknown): void {
  if (typeof value !== 'object' || value === null) return;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) freezeParsed(value[i]);
  } else {
    for (const key in value) freezeParsed((value as Record<string, unknown>)[key]);
  }
  Object.freeze(value);
}

/**
 * A stored form of a document: a deep copy with JSON's semantics ({@link jsonCopy}), so what
 * memory holds equals what the journal holds (undefined fields dropped, dates as ISO strings —
 * see docs/store.md). `freeze`: the copy is deep-frozen as it is made (an inserted document,
 * which the store freezes anyway); without it the copy may be changed (an update applied to it).
 */
export function toStored<T>(doc: T, freeze = false): T {
  const out = jsonCopy(doc, 0, freeze);
  return (out === OMIT ? viaJson(doc, freeze) : out) as T;
}

/** The stored (JSON) form of a string, boolean, number or null; `undefined` for anything else. */
function storedScalar(value: unknown): unknown {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      return Number.isFinite(value) ? value : null;
    default:
      return value === null ? null : undefined;
  }
}

/**
 * The stored form of one value ({@link toStored}): scalars and arrays of scalars (a tag list)
 * without the JSON round trip.
 */
export function storedValue(value: unknown): unknown {
  const scalar = storedScalar(value);
  if (scalar !== undefined) return scalar;
  if (Array.isArray(value)) {
    const out: unknown[] = new Array(value.length);
    for (let i = 0; i < value.length; i++) {
      const v = storedScalar(value[i]);
      if (v === undefined) return toStored(value);
      out[i] = v;
    }
    return out;
  }
  return toStored(value);
}
