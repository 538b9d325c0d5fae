import { Query } from 'mingo';
import type { Doc, Filter, Projection } from '../port.js';
import { isHashable, THROUGH_ARRAY, valueAt, valuesAt } from './values.js';
import { parseWildcard, wildcardMatcher } from './wildcard.js';

/** mingo options: no `$where`/`$function` scripts from filters. */
export const QUERY_OPTIONS = { scriptEnabled: false } as const;

/** A compiled filter: true when the document matches. */
export type Matcher = (doc: Doc) => boolean;

type Obj = Record<string, unknown>;

const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof RegExp);

/**
 * Compiles a filter once for testing many documents (the embedded store's hot path). `$and`,
 * `$or`, `$nor` and field conditions that are a string/number/boolean (or, on a top-level
 * field, an array of them), `$eq`/`$ne` (of either), `$in`/`$nin` (of such scalars), `$regex` (string, `$options` of
 * `i`/`m`/`s`; the shapes LIKE, ILIKE and `~` compile to run on the linear wildcard matcher,
 * wildcard.ts, never on a regular expression), `$not` of such a condition or, on a top-level
 * field, `$exists` (a boolean: the version pin of a document written before versions existed)
 * compile to plain functions with MongoDB semantics (an array field matches when an element does; paths descend
 * into arrays of sub-documents, as {@link valuesAt}); any other field condition (or a whole
 * filter of another shape) is tested by mingo, which defines the semantics (the two agree, `shared/test/unit/store-matcher.test.ts`).
 */
export function compileFilter(filter: Filter): Matcher {
  const fast = compileFast(filter);
  if (fast) return fast;
  if (!Object.isFrozen(filter)) return mingoByValue(filter);
  let known = frozenMingo.get(filter);
  if (!known) frozenMingo.set(filter, (known = mingoMatcher(filter)));
  return known;
}

function mingoMatcher(filter: Filter): Matcher {
  const query = new Query(withCodePointRegex(filter) as Filter, QUERY_OPTIONS);
  return (doc) => query.test(doc);
}

/**
 * mingo matchers of filters by value: the filter's JSON text → its matcher, least recently used
 * dropped past {@link MAX_BY_VALUE}. A filter mingo tests (ranges, `$not`, `$elemMatch`…) costs
 * a `Query` to compile; the same filter built again by each request (a column read, a move's
 * source check and its write) is compiled once, whoever built it and whether or not it is frozen.
 * Only filters of plain JSON data of at most {@link MAX_KEYED_VALUES} values are keyed (a RegExp,
 * a Date or `undefined` would not survive JSON, and a long `$in` would cost more to key than to
 * compile).
 */
const byValue = new Map<string, Matcher>();
const MAX_BY_VALUE = 512;
const MAX_KEYED_VALUES = 256;

function mingoByValue(filter: Filter): Matcher {
  const key = plainJson(filter, { left: MAX_KEYED_VALUES }, 0) ? JSON.stringify(filter) : undefined;
  if (key === undefined) return mingoMatcher(filter);
  let known = byValue.get(key);
  if (known) {
    byValue.delete(key); // most recently used last
  } else {
    known = mingoMatcher(filter);
    if (byValue.size >= MAX_BY_VALUE) byValue.delete(byValue.keys().next().value!);
  }
  byValue.set(key, known);
  return known;
}

/**
 * True for plain JSON data (objects, arrays, strings, finite numbers, booleans, null) of at most
 * `budget.left` values, 32 levels deep; `budget.left` counts them down. Filters that pass have a
 * JSON text that identifies them (compiled-filter and kept-page keys); a RegExp, a Date or
 * `undefined` would not.
 */
export function plainJson(v: unknown, budget: { left: number }, depth = 0): boolean {
  if (--budget.left < 0) return false;
  switch (typeof v) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(v);
    case 'object':
      break;
    default:
      return false;
  }
  if (v === null) return true;
  if (depth > 32) return false;
  if (Array.isArray(v)) return v.every((x) => plainJson(x, budget, depth + 1));
  const proto = Object.getPrototypeOf(v) as unknown;
  if (proto !== Object.prototype && proto !== null) return false;
  for (const key in v) if (!plainJson((v as Record<string, unknown>)[key], budget, depth + 1)) return false;
  return true;
}

/**
 * Matchers of frozen filters, such as the compiled shared queries of `compileQuery`: a frozen
 * filter cannot change, so it is compiled once however many filters wrap it and however often it
 * is asked for. `frozenFast` holds the fast matcher (`null`: not compilable), `frozenMingo` the
 * mingo one of a frozen filter that is not.
 */
const frozenFast = new WeakMap<Filter, Matcher | null>();
const frozenMingo = new WeakMap<Filter, Matcher>();

function compileFast(filter: Filter): Matcher | undefined {
  if (!Object.isFrozen(filter)) return compileFastNow(filter);
  let known = frozenFast.get(filter);
  if (known === undefined) frozenFast.set(filter, (known = compileFastNow(filter) ?? null));
  return known ?? undefined;
}

function compileFastNow(filter: Filter): Matcher | undefined {
  const parts: Matcher[] = [];
  for (const [key, cond] of Object.entries(filter)) {
    let part: Matcher | undefined;
    if (key === '$and' || key === '$or' || key === '$nor') {
      if (!Array.isArray(cond) || cond.length === 0 || !cond.every(isObject)) return undefined;
      // each branch on its own: a branch mingo must test does not take the others (nor a text
      // pattern beside it: those are always matched here, wildcard.ts) with it
      const all = cond.map((c) => compileFilter(c as Filter));
      part = key === '$and' ? (d) => all.every((s) => s(d)) : key === '$or' ? (d) => all.some((s) => s(d)) : (d) => !all.some((s) => s(d));
    } else if (!key.startsWith('$')) {
      part = compileField(key.split('.'), cond) ?? mingoByValue({ [key]: cond });
    }
    if (!part) return undefined;
    parts.push(part);
  }
  if (parts.length === 1) return parts[0];
  return (d) => parts.every((p) => p(d));
}

/** True when some value at `path` (elements of a leaf array one by one) satisfies `test`. */
function someAt(doc: Doc, path: readonly string[], test: (v: unknown) => boolean): boolean {
  const one = valueAt(doc, path);
  if (one !== THROUGH_ARRAY) return one !== undefined && (Array.isArray(one) ? one.some(test) : test(one));
  for (const v of valuesAt(doc, path)) {
    if (Array.isArray(v) ? v.some(test) : test(v)) return true;
  }
  return false;
}

/**
 * A test for equality with any of `values`, or undefined unless all are strings, numbers or
 * booleans. `===` and Set membership (SameValueZero) equal MongoDB's equality on these types.
 */
function equalsAny(values: unknown): ((v: unknown) => boolean) | undefined {
  if (!Array.isArray(values) || !values.every(isHashable)) return undefined;
  if (values.length === 1) {
    const only: unknown = values[0];
    return (v) => v === only;
  }
  const set = new Set<unknown>(values);
  return (v) => set.has(v);
}

/**
 * Tests `doc` against `filter` without compiling it, or answers undefined when the filter is not of
 * the simplest shape: top-level keys that are field paths, each a string, number or boolean, or
 * `{$eq | $ne: such a scalar}`, `{$in | $nin: [such scalars]}`, or, on a top-level field,
 * `{$exists: boolean}`; and `$and` / `$or` of non-empty arrays of such filters (a frozen one
 * already compiled is tested by its compiled matcher). The semantics are the compiled matcher's
 * ({@link compileFilter}). A write's conditional lookup by `_id` (`{_id, version}`, a claim's
 * `{_id, request_id, state}`, a card move's source check: `{$and: [{_id, deleted}, board scope,
 * column query]}`) tests one document: building the closures of a compiled matcher for it costs
 * more than the test.
 */
export function testDirect(filter: Filter, doc: Doc): boolean | undefined {
  for (const key of Object.keys(filter)) {
    if (key === '$and' || key === '$or') {
      const result = testEach(filter[key], doc, key === '$or');
      if (result !== true) return result;
      continue;
    }
    if (key.charCodeAt(0) === 36) return undefined; // $expr, $nor…
    const path = key.includes('.') ? key.split('.') : [key];
    const cond = filter[key];
    let negate = false;
    let test: ((v: unknown) => boolean) | undefined;
    if (isHashable(cond)) {
      const value = cond;
      test = (v) => v === value;
    } else {
      if (!isObject(cond)) return undefined;
      const ops = Object.keys(cond);
      if (ops.length !== 1) return undefined;
      const op = ops[0]!;
      const value = cond[op];
      if (op === '$exists') {
        if (typeof value !== 'boolean' || path.length !== 1) return undefined;
        if (Object.hasOwn(doc, key) !== value) return false;
        continue;
      }
      negate = op === '$ne' || op === '$nin';
      if (op === '$eq' || op === '$ne') {
        if (isHashable(value)) test = (v) => v === value;
      } else if (op === '$in' || op === '$nin') test = equalsAny(value);
      if (!test) return undefined;
    }
    if (someAt(doc, path, test) === negate) return false;
  }
  return true;
}

/**
 * {@link testDirect} of an `$and` (`any` false) or `$or` (`any` true) operand: true when it holds,
 * false when not, undefined when a part's shape needs compiling (or the operand is not a non-empty
 * array of filters, which the compiled matcher answers).
 */
function testEach(subs: unknown, doc: Doc, any: boolean): boolean | undefined {
  if (!Array.isArray(subs) || subs.length === 0) return undefined;
  for (const sub of subs) {
    if (!isObject(sub)) return undefined;
    const known = Object.isFrozen(sub) ? frozenFast.get(sub) : undefined;
    const result = known ? known(doc) : testDirect(sub, doc);
    if (result === undefined) return undefined;
    if (result === any) return any;
  }
  return !any;
}

/**
 * A matcher for a filter tested against few documents (a lookup by `_id` inside a write): the first
 * {@link DIRECT_TESTS} documents are tested by {@link testDirect} when the filter's shape allows,
 * and the filter is compiled only when more come or the shape needs it.
 */
export function lazyMatcher(filter: Filter): Matcher {
  let compiled: Matcher | undefined;
  let direct = DIRECT_TESTS;
  return (doc) => {
    if (!compiled) {
      if (direct-- > 0) {
        const result = testDirect(filter, doc);
        if (result !== undefined) return result;
      }
      compiled = compileFilter(filter);
    }
    return compiled(doc);
  };
}

/** How many documents {@link lazyMatcher} tests without compiling. */
const DIRECT_TESTS = 4;

/**
 * The test of a `$regex` condition on one string: the linear wildcard matcher (wildcard.ts) for
 * the shapes the query language compiles LIKE, ILIKE and `~` to (options `i` and `s` only), else
 * a RegExp (options of `i`, `m`, `s`); undefined when neither applies (mingo then decides).
 */
function textTest(source: string, options: string): ((text: string) => boolean) | undefined {
  if (/^[is]*$/.test(options)) {
    const wild = parseWildcard(source);
    if (wild) return wildcardMatcher(wild, options.includes('i'));
  }
  const re = /^[ims]*$/.test(options) ? regExp(source, options) : undefined;
  return re ? (text) => re.test(text) : undefined;
}

/** The RegExp, or undefined when the pattern is not valid JavaScript (mingo then decides). */
function regExp(pattern: string, flags: string): RegExp | undefined {
  try {
    return new RegExp(codePointPattern(pattern), flags);
  } catch {
    return undefined;
  }
}

/** The token the query compiler writes for LIKE's `_` (and, starred, for `%`): any one character. */
const ANY_UNIT = '[\\s\\S]';
/**
 * One code point, as MongoDB's regular expressions (PCRE in UTF-8 mode) read `[\s\S]`: a
 * surrogate pair, or one unit that does not start a pair. Unambiguous (a pair is never also two
 * units), so no extra backtracking.
 */
const ANY_CODE_POINT = '(?:[\\uD800-\\uDBFF][\\uDC00-\\uDFFF]|[^\\uD800-\\uDBFF]|[\\uD800-\\uDBFF](?![\\uDC00-\\uDFFF]))';

/**
 * `pattern` with each lone `[\s\S]` (any one character: LIKE's `_`, docs/query-language.md) made
 * to match one code point, as on MongoDB, where JavaScript without the `u` flag matches one UTF-16
 * unit: `_` against '𝒜' or an emoji. A starred `[\s\S]*` (LIKE's `%`) is left as it is: a run of
 * units and a run of code points match the same texts around whole-character literals. Escapes and
 * character classes are copied as they are. (The `u` flag itself is not used: it would also change
 * what `i` folds, which the text index's folding mirrors.)
 */
export function codePointPattern(pattern: string): string {
  if (!pattern.includes(ANY_UNIT)) return pattern;
  let out = '';
  for (let i = 0; i < pattern.length; ) {
    const c = pattern[i]!;
    if (c === '\\') {
      out += pattern.slice(i, i + 2);
      i += 2;
    } else if (pattern.startsWith(ANY_UNIT, i)) {
      const next = pattern[i + ANY_UNIT.length];
      out += next === '*' || next === '+' || next === '?' || next === '{' ? ANY_UNIT : ANY_CODE_POINT;
      i += ANY_UNIT.length;
    } else if (c === '[') {
      // a class: copied up to its unescaped end
      let j = i + 1;
      if (pattern[j] === '^') j++;
      if (pattern[j] === ']') j++;
      while (j < pattern.length && pattern[j] !== ']') j += pattern[j] === '\\' ? 2 : 1;
      out += pattern.slice(i, j + 1);
      i = j + 1;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}

/**
 * `filter` with each `$regex` string holding LIKE's `_` ({@link codePointPattern}) turned into a
 * RegExp, for mingo (which compiles `$regex` strings itself); the filter itself when none does.
 */
function withCodePointRegex(v: unknown): unknown {
  if (Array.isArray(v)) {
    const out = v.map(withCodePointRegex);
    return out.some((x, i) => x !== v[i]) ? out : v;
  }
  if (!isObject(v)) return v;
  const source = v.$regex;
  const options = v.$options ?? '';
  if (typeof source === 'string' && source.includes(ANY_UNIT) && typeof options === 'string' && /^[ims]*$/.test(options)) {
    const re = regExp(source, options);
    if (re) {
      const { $options: _, ...rest } = v;
      return { ...rest, $regex: re };
    }
  }
  let out: Obj | undefined;
  for (const key of Object.keys(v)) {
    const x = withCodePointRegex(v[key]);
    if (x !== v[key]) (out ??= { ...v })[key] = x;
  }
  return out ?? v;
}

/** True when top-level `field` is an array equal to `array` (all scalars) or holds such an element. */
function holdsArray(doc: Doc, field: string, array: readonly unknown[]): boolean {
  const same = (v: unknown) => Array.isArray(v) && v.length === array.length && v.every((x, i) => x === array[i]);
  const v = doc[field];
  return same(v) || (Array.isArray(v) && v.some(same));
}

function compileField(path: readonly string[], cond: unknown): Matcher | undefined {
  if (isHashable(cond) || Array.isArray(cond)) cond = { $eq: cond };
  if (!isObject(cond)) return undefined;
  const ops = Object.keys(cond);
  if (ops.length === 0 || !ops.every((op) => op.startsWith('$'))) return undefined;
  const parts: Matcher[] = [];
  for (const op of ops) {
    const value = cond[op];
    let part: Matcher | undefined;
    const positive = op === '$eq' || op === '$in';
    if ((op === '$eq' || op === '$ne') && Array.isArray(value)) {
      if (path.length === 1 && equalsAny(value)) part = positive ? (d) => holdsArray(d, path[0]!, value) : (d) => !holdsArray(d, path[0]!, value);
    } else if (op === '$eq' || op === '$ne' || op === '$in' || op === '$nin') {
      const test = equalsAny(op === '$eq' || op === '$ne' ? [value] : value);
      if (test) part = positive ? (d) => someAt(d, path, test) : (d) => !someAt(d, path, test);
    } else if (op === '$regex') {
      const options = cond.$options ?? '';
      const test = typeof value === 'string' && typeof options === 'string' ? textTest(value, options) : undefined;
      if (test) part = (d) => someAt(d, path, (v) => typeof v === 'string' && test(v));
    } else if (op === '$not' && isObject(value)) {
      const inner = compileField(path, value);
      if (inner) part = (d) => !inner(d);
    } else if (op === '$options' && '$regex' in cond) {
      continue;
    } else if (op === '$exists' && typeof value === 'boolean' && path.length === 1) {
      // a top-level field (a stored JSON document has no undefined values; null counts as present)
      const key = path[0]!;
      part = value ? (d) => Object.hasOwn(d, key) : (d) => !Object.hasOwn(d, key);
    }
    if (!part) return undefined;
    parts.push(part);
  }
  if (parts.length === 1) return parts[0];
  return (d) => parts.every((p) => p(d));
}

/**
 * Applies a projection like mingo does (inclusion keeps the listed fields in projection order,
 * `_id` last unless listed or `_id: 0`; exclusion drops the listed fields). Projections of top-level fields
 * that are all inclusions or all exclusions are done here; others (dotted paths, mixtures) by mingo.
 * Returned documents share values with the input (callers copy them).
 */
export function project(docs: Doc[], projection: Projection | undefined): Doc[] {
  if (!projection || docs.length === 0) return docs;
  const keys = Object.keys(projection);
  if (keys.length === 0) return docs;
  const fields = keys.filter((k) => k !== '_id');
  const mode = fields.length > 0 ? projection[fields[0]!] : projection._id;
  const simple =
    (mode === 0 || mode === 1) &&
    fields.every((k) => projection[k] === mode && !k.includes('.') && !k.startsWith('$')) &&
    (mode === 1 || projection._id === undefined || projection._id === 0);
  if (!simple) return new Query({}, QUERY_OPTIONS).find<Doc>(docs, projection).all();
  if (mode === 0) {
    const drop = new Set(keys);
    return docs.map((d) => Object.fromEntries(Object.entries(d).filter(([k]) => !drop.has(k))) as Doc);
  }
  const included = projection._id === undefined ? [...keys, '_id'] : keys.filter((k) => projection[k] === 1);
  return docs.map(projector(included));
}

/** Projectors by included-field list (NUL-joined); a read path asks for a handful of shapes. */
const projectors = new Map<string, (doc: Doc) => Doc>();
const MAX_PROJECTORS = 256;

/**
 * A function copying the top-level fields `included` (in that order, each when defined) of a
 * document into a new object. Made once per field list, with each name a string literal
 * (`JSON.stringify`, so any name is inert text): the engine then stores into objects of one shape
 * instead of looking each name up (50 close snapshots projected to 4 fields: 4.7 → 1.1 µs).
 */
function projector(included: readonly string[]): (doc: Doc) => Doc {
  const key = included.join('\u0000');
  let fn = projectors.get(key);
  if (!fn) {
    const body = included.map((k) => `v = d[${JSON.stringify(k)}]; if (v !== undefined) o[${JSON.stringify(k)}] = v;`).join('\n');
    fn = new Function('d', `const o = {}; let v;\n${body}\nreturn o;`) as (doc: Doc) => Doc;
    if (projectors.size >= MAX_PROJECTORS) projectors.delete(projectors.keys().next().value!);
    projectors.set(key, fn);
  }
  return fn;
}
