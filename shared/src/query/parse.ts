import { LRUCache } from 'lru-cache';
import { AppError } from '../errors/index.js';
import { deepFreeze } from '../util/index.js';
import {
  BUILTIN_FIELDS, DATE_FIELDS, FUNCTION_NAMES, isBuiltin, LIST_FUNCTIONS, metadataField, metadataKeyOf,
  type Expr, type Field, type FunctionName, type OrderKey, type Pred, type Query, type Value,
} from './ast.js';
import { readIso } from './dates.js';
import { checkListSize, checkNesting, checkWildcardRuns } from './cost.js';
import { patternFault } from './patterns.js';
import { parse, SyntaxError as PeggySyntaxError, type Expectation } from './gen/parser.js';

/** Longest accepted query text, in characters. */
export const MAX_QUERY_LENGTH = 10_000;
/**
 * Deepest nesting of parentheses and NOT the grammar itself accepts (deeper input is a 400, never a
 * stack overflow); the cost limit `MAX_NESTING` (cost.ts) refuses well before it.
 */
export const MAX_DEPTH = 64;

type At<T> = { value: T; at: number };

/** The semantic actions the grammar calls (`options.hooks` in grammar.peggy). */
interface Hooks {
  query(where: Expr | null, orderBy: OrderKey[]): Query;
  junction(kind: 'and' | 'or', items: Expr[]): Expr;
  depthOk(depth: number, at: number): true;
  /** A parenthesized value list starting at `at`, checked against the list-size cost limit. */
  list<T>(values: T[], at: number): T[];
  /** An ORDER BY key written at `at` (kept on it unseen, for the sort-depth cost limit). */
  orderKey(field: Field, dir: 'asc' | 'desc', at: number): OrderKey;
  field(name: string, at: number): Field;
  coerce(field: Field, v: At<Value>, listOk?: boolean): Value;
  call(name: string, args: Array<At<Value>>, at: number): Value;
  number(text: string, at: number): Value;
  isoDate(text: string, at: number): Value;
  pattern(kind: 'like' | 'match', s: At<string>): string;
  located(p: Pred, at: number, opAt: number): Pred;
}

/**
 * Parses query text (docs/architecture.md §6) into its AST.
 * Throws AppError `QUERY_TOO_LONG` (over 10,000 characters), `QUERY_SYNTAX`
 * (`details: {position, found}`, 0-based offset, message quoting the text there),
 * `QUERY_UNKNOWN_FIELD` (`details: {field, position, suggestion}`) and `QUERY_TOO_COSTLY` (a cost
 * limit of cost.ts: `details: {rule, limit, position}`). Never anything else.
 */
export function parseQuery(text: string): Query {
  return cached('Query', text);
}

/** Parses a filter fragment: like {@link parseQuery} but without ORDER BY (docs/architecture.md §7 column read). */
export function parseFilter(text: string): Query {
  return cached('Filter', text);
}

/**
 * Parses like {@link parseQuery} without the parse cache: for texts seen once (validation as the
 * user types), which would only push useful entries out and keep garbage alive for the collector.
 */
export function parseQueryOnce(text: string): Query {
  return parsed.get(`Query\u0000${text}`) ?? run(text, (h) => parse(text, { startRule: 'Query', hooks: h }) as Query);
}

/** Parsed texts (by start rule and text), least recently used dropped past 500. */
const parsed = new LRUCache<string, Query>({ max: 500 });
/** Longer texts are parsed every time (the cache stays small). */
const PARSE_CACHE_MAX_LENGTH = 2_000;

/**
 * The AST of `text` from the parse cache, or parsed (and cached when short). Column queries, the
 * same board filter and repeated gate queries are parsed once; cached trees are deeply frozen,
 * since every caller shares them. Errors are never cached.
 */
function cached(startRule: 'Query' | 'Filter', text: string): Query {
  const key = `${startRule}\u0000${text}`;
  const hit = parsed.get(key);
  if (hit) return hit;
  const query = run(text, (h) => parse(text, { startRule, hooks: h }) as Query);
  if (text.length <= PARSE_CACHE_MAX_LENGTH) parsed.set(key, deepFreeze(query));
  return query;
}

function run(text: string, parseWith: (h: Hooks) => Query): Query {
  if (text.length > MAX_QUERY_LENGTH) {
    throw new AppError('QUERY_TOO_LONG', {
      message: `The query has ${text.length} characters; at most ${MAX_QUERY_LENGTH} are allowed`,
      details: { length: text.length, max: MAX_QUERY_LENGTH },
    });
  }
  try {
    return parseWith(hooks(text));
  } catch (e) {
    if (e instanceof PeggySyntaxError) {
      const position = e.location.start.offset;
      throw syntaxError(text, position, `${unexpected(text, position)}${expectedList(e.expected)}`);
    }
    throw e;
  }
}

function hooks(text: string): Hooks {
  const h: Hooks = {
    query: (where, orderBy) => (where ? { where, orderBy } : { orderBy }),
    junction: (kind, items) => {
      const flat = items.flatMap((i) => ((i.type === 'and' || i.type === 'or') && i.type === kind ? i.items : [i]));
      return flat.length === 1 ? flat[0]! : { type: kind, items: flat };
    },
    depthOk: (depth, at) => {
      checkNesting(depth, at);
      if (depth <= MAX_DEPTH) return true;
      throw syntaxError(text, at, `Nesting deeper than ${MAX_DEPTH} levels at position ${at}`);
    },
    list: (values, at) => {
      checkListSize(values.length, at);
      return values;
    },
    orderKey: (field, dir, at) => {
      const key: OrderKey = { field, dir };
      // the position rides along unseen (not part of the AST's equality or printed form), as a call's does
      Object.defineProperty(key, 'at', { value: at, enumerable: false });
      return key;
    },
    field: (name, at) => {
      if (isBuiltin(name)) return name;
      if (name.includes('.')) {
        const key = metadataKeyOf(name)!;
        // The one key that is a stored path segment of its own and an object-prototype accessor.
        if (key === '__proto__') throw syntaxError(text, at, `Metadata key "__proto__" is not allowed at position ${at}`);
        return metadataField(key);
      }
      throw unknownField(name, at);
    },
    coerce: (field, { value, at }, listOk = false) => {
      if (value.type === 'call' && LIST_FUNCTIONS.has(value.name) && !listOk) {
        throw syntaxError(text, at, `${value.name}() is a list of ids; use it after IN (\`${field} IN ${value.name}()\`) at position ${at}`);
      }
      if (!DATE_FIELDS.has(field) || value.type !== 'string') return value;
      try {
        return parse(value.value, { startRule: 'DateText', hooks: h });
      } catch {
        throw syntaxError(text, at, `${field} needs a date, not ${quote(tokenAt(text, at))} at position ${at}`);
      }
    },
    call: (name, args, at) => {
      const fn = FUNCTIONS_BY_LOWER.get(name.toLowerCase());
      if (!fn) throw unknownFunction(name, at);
      const node: Value = { type: 'call', name: fn, args: checkArgs(text, fn, args, at) };
      // the position rides along unseen (not part of the AST's equality or printed form) for resolution errors
      Object.defineProperty(node, 'at', { value: at, enumerable: false });
      return node;
    },
    number: (numText, at) => {
      const n = Number(numText);
      if (!Number.isFinite(n)) throw syntaxError(text, at, `Number out of range ${quote(numText)} at position ${at}`);
      return { type: 'number', value: n === 0 ? 0 : n };
    },
    pattern: (kind, { value, at }) => {
      const fault = patternFault(value, kind);
      if (fault) throw syntaxError(text, at, `${fault} (at position ${at})`);
      if (kind === 'like') checkWildcardRuns(value, at);
      return value;
    },
    // positions ride along unseen (not part of the AST's equality or printed form) for the typing stage's errors
    located: (p, at, opAt) => Object.defineProperties(p, { at: { value: at }, opAt: { value: opAt } }),
    isoDate: (dateText, at) => {
      if (!readIso(dateText)) throw syntaxError(text, at, `Invalid date ${quote(dateText)} at position ${at}`);
      return { type: 'date', value: dateText };
    },
  };
  return h;
}

function syntaxError(text: string, position: number, message: string): AppError {
  return new AppError('QUERY_SYNTAX', { message, details: { position, found: tokenAt(text, position) } });
}

/**
 * The token starting at `position`, for messages: a word, a quoted string, an operator or one
 * character (at most 40 characters); null at the end of the text.
 */
function tokenAt(text: string, position: number): string | null {
  const rest = text.slice(position, position + 200);
  if (rest === '') return null;
  const m = /^(?:[\p{L}\p{N}_$.+-]+|'(?:[^'\\]|\\.|'')*'?|"(?:[^"\\]|\\.|"")*"?|<=|>=|!=|!~|\S)/u.exec(rest);
  const token = m ? m[0] : rest.charAt(0);
  return token.length > 40 ? `${token.slice(0, 40)}…` : token;
}

function quote(token: string | null): string {
  return token === null ? 'end of query' : `"${token}"`;
}

function unexpected(text: string, position: number): string {
  const token = tokenAt(text, position);
  return token === null ? `Unexpected end of query at position ${position}` : `Unexpected ${quote(token)} at position ${position}`;
}

function expectedList(expected: Expectation[] | null): string {
  const names = [
    ...new Set(
      (expected ?? []).flatMap((e) => {
        if (e.type === 'literal') return [`"${e.text}"`];
        if (e.type === 'other') return e.description === 'whitespace' ? [] : [e.description];
        if (e.type === 'end') return ['end of query'];
        return [];
      }),
    ),
  ];
  if (names.length === 0) return '';
  const last = names.pop()!;
  return `; expected ${names.length ? `${names.join(', ')} or ${last}` : last}`;
}

/** 400 `QUERY_UNKNOWN_FIELD` naming `name`, its position and the closest valid field. */
export function unknownField(name: string, position: number): AppError {
  const suggestion = suggestField(name);
  return new AppError('QUERY_UNKNOWN_FIELD', {
    message: `Unknown field "${name}" at position ${position}; did you mean "${suggestion}"?`,
    details: { field: name, position, suggestion },
  });
}

/** Canonical function names by their lower-case spelling (names are matched case-insensitively). */
const FUNCTIONS_BY_LOWER: ReadonlyMap<string, FunctionName> = new Map(FUNCTION_NAMES.map((n) => [n.toLowerCase(), n]));

/** Functions taking one optional relative offset (`startOfWeek(-1w)`). */
const PERIOD_FUNCTIONS: ReadonlySet<FunctionName> = new Set(['startOfDay', 'startOfWeek', 'startOfMonth', 'endOfDay', 'endOfWeek', 'endOfMonth']);

/**
 * The arguments of `fn` as its signature allows (docs/query-language.md "Functions"):
 * `activeSprint(['<board id>'])`, a period function `([±N(d|w|m|y)])`, every other none.
 * Anything else is `QUERY_SYNTAX` at the faulty argument (or the call).
 */
function checkArgs(text: string, fn: FunctionName, args: Array<At<Value>>, at: number): Value[] {
  const usage = fn === 'activeSprint' ? "activeSprint() or activeSprint('<board id>')" : PERIOD_FUNCTIONS.has(fn) ? `${fn}() or ${fn}(-1w)` : `${fn}()`;
  const bad = (where: number): AppError => syntaxError(text, where, `Bad arguments to ${fn} at position ${where}; write ${usage}`);
  if (args.length > 1) throw bad(args[1]!.at);
  const arg = args[0];
  if (!arg) return [];
  if (fn === 'activeSprint' && arg.value.type === 'string') return [arg.value];
  if (PERIOD_FUNCTIONS.has(fn) && arg.value.type === 'relative') {
    const { amount, unit } = arg.value;
    if (Math.abs(amount) > MAX_SHIFT[unit]) {
      const sign = amount < 0 ? '-' : '+';
      throw syntaxError(text, arg.at, `The shift ${sign}${Math.abs(amount)}${unit} of ${fn} at position ${arg.at} is out of range; at most ±${MAX_SHIFT[unit]}${unit} (1,000 years)`);
    }
    return [arg.value];
  }
  throw bad(arg.at);
}

/**
 * The largest shift of a period function per unit (docs/query-language.md "Functions"): 1,000
 * years, so the shifted day stays a representable date (years 0000–9999) for any clock this side
 * of year 8999; larger shifts are `QUERY_SYNTAX` where the query is parsed.
 */
export const MAX_SHIFT: Readonly<Record<'d' | 'w' | 'm' | 'y', number>> = Object.freeze({ d: 365_000, w: 52_000, m: 12_000, y: 1_000 });

/** 400 `QUERY_UNKNOWN_FUNCTION` naming `name`, its position and the nearest function (`currentSprint` → `activeSprint()`). */
export function unknownFunction(name: string, position: number): AppError {
  let best: string = FUNCTION_NAMES[0];
  let bestDistance = Infinity;
  for (const fn of FUNCTION_NAMES) {
    const d = levenshtein(name.toLowerCase(), fn.toLowerCase());
    if (d < bestDistance) [best, bestDistance] = [fn, d];
  }
  const suggestion = `${best}()`;
  return new AppError('QUERY_UNKNOWN_FUNCTION', {
    message: `Unknown function "${name}()" at position ${position}; did you mean ${suggestion}?`,
    details: { function: name, position, suggestion },
  });
}

/** Metadata keys worth suggesting for a bare word (the key's last part → the field to write). */
const KNOWN_KEYS: ReadonlyArray<[string, Field]> = [
  ['order', 'metadata.order'],
  ['sprint', 'app.sprint'],
  ['type', 'app.type'],
  ['points', 'app.points'],
];

/**
 * The closest valid field to an unknown bare word (Levenshtein over the builtins and a few known
 * metadata keys); when nothing is close (distance above half the word's length) → `cf.<word>`.
 */
function suggestField(name: string): Field {
  const candidates: ReadonlyArray<[string, Field]> = [...BUILTIN_FIELDS.map((f): [string, Field] => [f, f]), ...KNOWN_KEYS];
  let best: Field = `cf.${name}`;
  let bestDistance = Math.floor(name.length / 2) + 1;
  for (const [word, field] of candidates) {
    const d = levenshtein(name.toLowerCase(), word.toLowerCase());
    if (d < bestDistance) [best, bestDistance] = [field, d];
  }
  return best;
}

function levenshtein(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[b.length]!;
}
