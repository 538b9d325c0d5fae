/**
 * Linear wildcard matching of the `$regex` conditions the query language compiles LIKE, ILIKE
 * and `~` to (`shared/src/query/patterns.ts`; docs/query-language.md "Safety"). The embedded store
 * runs these without a regular-expression engine: no backtracking and no recursion, so no pattern
 * can overflow the stack or take exponential time, and a text's cost is at most its length times
 * the pattern's (a pattern's length is bounded where the query is parsed).
 *
 * Semantics are MongoDB's (PCRE2 in UTF mode): `_` (`[\s\S]`) is one code point, `%`
 * (`[\s\S]*`) any run, the end anchor is the very end of the text (the compiler writes
 * `(?![\s\S])`, so a trailing newline is not skipped on either store), and case-insensitive
 * matching folds by Unicode simple case folding ({@link foldCase}).
 */
import { foldCase } from './fold.js';

/** One piece of a pattern: literal text, or a count of any-one-character wildcards (`_`). */
type Token = string | number;

/** A pattern as a list of pieces separated by `%`, with whether its start and end are anchored. */
export interface WildcardPattern {
  anchoredStart: boolean;
  anchoredEnd: boolean;
  /** At least one piece; a `%` lies between each two. */
  pieces: Token[][];
}

const ANY = '[\\s\\S]';
const ANY_RUN = '[\\s\\S]*';
const LAZY_RUN = '(?=([\\s\\S]*?';
const END = '(?![\\s\\S])';
/** Characters a backslash may escape to stand for themselves (what `escapeRegex` escapes, plus `/` and `-`). */
const ESCAPABLE = '\\^$.*+?()[]{}|/-';

/**
 * The wildcard form of a regular expression of the shapes the query compiler writes (`^`, literal
 * and escaped characters, `\x00`, `[\s\S]`, `[\s\S]*`, earliest-piece lookaheads
 * `(?=([\s\S]*?piece))\N`, and an end `(?![\s\S])` or `$`), or undefined for anything else (the
 * caller then uses a regular expression).
 */
export function parseWildcard(source: string): WildcardPattern | undefined {
  const pieces: Token[][] = [[]];
  let piece = pieces[0]!;
  const lit = (s: string) => {
    const last = piece[piece.length - 1];
    if (typeof last === 'string') piece[piece.length - 1] = last + s;
    else piece.push(s);
  };
  const any = () => {
    const last = piece[piece.length - 1];
    if (typeof last === 'number') piece[piece.length - 1] = last + 1;
    else piece.push(1);
  };
  const star = () => pieces.push((piece = []));
  let i = 0;
  const anchoredStart = source.startsWith('^');
  if (anchoredStart) i = 1;
  let anchoredEnd = false;
  let inLookahead = false;
  while (i < source.length) {
    if (inLookahead && source.startsWith('))\\', i)) {
      i += 3;
      const digits = /^\d+/.exec(source.slice(i, i + 8))?.[0];
      if (!digits) return undefined;
      i += digits.length;
      inLookahead = false;
      continue;
    }
    if (!inLookahead && source.startsWith(LAZY_RUN, i)) {
      star();
      inLookahead = true;
      i += LAZY_RUN.length;
      continue;
    }
    if (!inLookahead && source.startsWith(END, i) && i + END.length === source.length) {
      anchoredEnd = true;
      break;
    }
    if (!inLookahead && source[i] === '$' && i === source.length - 1) {
      anchoredEnd = true;
      break;
    }
    if (!inLookahead && source.startsWith(ANY_RUN, i) && source[i + ANY_RUN.length] !== '?') {
      star();
      i += ANY_RUN.length;
      continue;
    }
    if (source.startsWith(ANY, i)) {
      const next = source[i + ANY.length];
      if (next === '*' || next === '+' || next === '?' || next === '{') return undefined;
      any();
      i += ANY.length;
      continue;
    }
    const c = source[i]!;
    if (c === '\\') {
      const n = source[i + 1];
      if (n !== undefined && ESCAPABLE.includes(n)) {
        lit(n);
        i += 2;
      } else if (source.startsWith('x00', i + 1)) {
        lit('\0');
        i += 4;
      } else return undefined;
      continue;
    }
    if ('^$.*+?()[]{}|'.includes(c)) return undefined;
    // a whole surrogate pair at once (the other half is not a metacharacter either)
    lit(c);
    i++;
  }
  if (inLookahead) return undefined;
  return { anchoredStart, anchoredEnd, pieces };
}

/** Code units of the character starting at `i` (2 for a surrogate pair, else 1). */
function charAt(text: string, i: number): number {
  const c = text.charCodeAt(i);
  if (c >= 0xd800 && c <= 0xdbff) {
    const n = text.charCodeAt(i + 1);
    if (n >= 0xdc00 && n <= 0xdfff) return 2;
  }
  return 1;
}

/** Code units of the character ending at `end` (2 for a surrogate pair, else 1). */
function charBefore(text: string, end: number): number {
  const c = text.charCodeAt(end - 1);
  if (c >= 0xdc00 && c <= 0xdfff && end >= 2) {
    const h = text.charCodeAt(end - 2);
    if (h >= 0xd800 && h <= 0xdbff) return 2;
  }
  return 1;
}

/** The end of `piece` matched forward from `at` in `text` (not past `limit`), or -1. */
function matchAt(piece: readonly Token[], text: string, at: number, limit: number): number {
  let i = at;
  for (const t of piece) {
    if (typeof t === 'string') {
      if (i + t.length > limit || !text.startsWith(t, i)) return -1;
      i += t.length;
    } else {
      for (let k = 0; k < t; k++) {
        if (i >= limit) return -1;
        i += charAt(text, i);
      }
      if (i > limit) return -1;
    }
  }
  return i;
}

/** The start of `piece` matched backward so that it ends at `end`, not before `from`, or -1. */
function matchBefore(piece: readonly Token[], text: string, end: number, from: number): number {
  let i = end;
  for (let p = piece.length - 1; p >= 0; p--) {
    const t = piece[p]!;
    if (typeof t === 'string') {
      if (i - t.length < from || !text.startsWith(t, i - t.length)) return -1;
      i -= t.length;
    } else {
      for (let k = 0; k < t; k++) {
        if (i <= from) return -1;
        i -= charBefore(text, i);
      }
      if (i < from) return -1;
    }
  }
  return i;
}

/** Fewest code units a piece can take (each `_` at least one). */
const minLength = (piece: readonly Token[]): number => piece.reduce<number>((n, t) => n + (typeof t === 'string' ? t.length : t), 0);

/**
 * The earliest match of `piece` starting at or after `from` and ending by `limit`: `[start, end]`,
 * or undefined. Candidates come from `indexOf` of the piece's leading literal, else every
 * character boundary; each is checked in at most the piece's length.
 */
function findPiece(piece: readonly Token[], text: string, from: number, limit: number): [number, number] | undefined {
  const need = minLength(piece);
  const head = piece[0];
  for (let s = from; s + need <= limit; ) {
    if (typeof head === 'string') {
      s = text.indexOf(head, s);
      if (s < 0 || s + need > limit) return undefined;
    }
    const end = matchAt(piece, text, s, limit);
    if (end >= 0) return [s, end];
    s += typeof head === 'string' ? 1 : charAt(text, s);
  }
  return undefined;
}

/**
 * A test of a text against `p`: case-sensitive, or (`caseInsensitive`) with the text and the
 * literals folded by {@link foldCase}. Pieces are matched left to right, each at its earliest
 * occurrence after the previous one (which leaves the most room for the rest: LIKE's meaning), the
 * last one against the end when the end is anchored.
 */
export function wildcardMatcher(p: WildcardPattern, caseInsensitive: boolean): (text: string) => boolean {
  const pieces = caseInsensitive ? p.pieces.map((piece) => piece.map((t) => (typeof t === 'string' ? foldCase(t) : t))) : p.pieces;
  const first = pieces[0]!;
  const last = pieces[pieces.length - 1]!;
  const single = pieces.length === 1;
  return (input) => {
    const text = caseInsensitive ? foldCase(input) : input;
    let from = 0;
    let limit = text.length;
    let middle = pieces;
    if (p.anchoredStart) {
      const end = matchAt(first, text, 0, limit);
      if (end < 0) return false;
      if (single) return !p.anchoredEnd || end === limit;
      from = end;
      middle = middle.slice(1);
    }
    if (p.anchoredEnd) {
      const start = matchBefore(last, text, limit, from);
      if (start < 0) return false;
      if (single) return true;
      limit = start;
      middle = middle.slice(0, -1);
    }
    for (const piece of middle) {
      const found = findPiece(piece, text, from, limit);
      if (!found) return false;
      from = found[1];
    }
    return true;
  };
}
