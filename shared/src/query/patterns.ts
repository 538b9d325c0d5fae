/**
 * Text patterns to `$regex` source (docs/architecture.md §6: text is regex-escaped; no ReDoS). The output is
 * plain PCRE/ECMAScript syntax that MongoDB and mingo read alike; `[\s\S]` stands for any
 * character so no flag decides whether newlines match.
 */

const ANY = '[\\s\\S]';
/** The very end of the text, the same on both stores (PCRE2's `$` also matches before a final newline). */
const END = `(?!${ANY})`;

/**
 * Escapes every regex metacharacter so `text` matches itself literally; NUL becomes `\x00`
 * (MongoDB refuses a pattern with an embedded NUL byte).
 */
export function escapeRegex(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&').replace(/\0/g, '\\x00');
}

/** Longest LIKE / ILIKE pattern or `~` text, in UTF-16 code units (docs/query-language.md "Safety"). */
export const MAX_PATTERN_LENGTH = 1_000;
/**
 * Most wildcard runs in one LIKE / ILIKE pattern: a run is a stretch of `%` and `_` with no other
 * character between them (`a%_%b` has one run, `a_b_c` two). Each run holding `%` costs the
 * compiled pattern one piece search over the text (docs/query-language.md "Cost limits"); past it
 * the pattern is refused with `QUERY_TOO_COSTLY` (cost.ts).
 */
export const MAX_WILDCARD_RUNS = 8;

/** The wildcard runs of a LIKE pattern (see {@link MAX_WILDCARD_RUNS}); an escaped `\%` or `\_` is a literal. */
export function wildcardRuns(text: string): number {
  let runs = 0;
  let inRun = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    const wild = c === '%' || c === '_';
    if (wild && !inRun) runs++;
    inRun = wild;
    if (c === '\\') i++;
  }
  return runs;
}

/**
 * What is wrong with a LIKE / ILIKE pattern (`kind` 'like') or a `~` text (`kind` 'match') under
 * the documented length limit ({@link MAX_PATTERN_LENGTH}), as a sentence for a `QUERY_SYNTAX`
 * message, or undefined when it is within it. With {@link MAX_WILDCARD_RUNS} this keeps the
 * `$regex` the pattern compiles to under 8 KB (MongoDB refuses patterns past PCRE2's size limit)
 * and its matching cost proportional to text length × pattern length on both stores.
 */
export function patternFault(text: string, kind: 'like' | 'match'): string | undefined {
  const what = kind === 'like' ? 'LIKE pattern' : 'search text';
  if (text.length > MAX_PATTERN_LENGTH) return `The ${what} has ${text.length} characters; at most ${MAX_PATTERN_LENGTH} are allowed`;
  return undefined;
}

/**
 * A LIKE pattern as an anchored regex: `%` = any run of characters, `_` = one character,
 * `\` escapes the next character. Within a run of wildcards holding a `%`, the `_`s come first
 * (`%_` and `_%` mean the same), so each such run is one `%`. Backtracking stays linear: every
 * `%`-separated middle piece is found at its earliest position inside an atomic lookahead
 * (`(?=(.*?piece))\k`), which is exactly LIKE's meaning (the earliest occurrence always leaves the
 * most room for the rest), so `%a%a%a%…` against a long text cannot blow up the way `.*a.*a.*a…`
 * does. The end is `(?![\s\S])`, the very end of the text: `$` would also match before a final
 * newline on MongoDB (PCRE2) and not in JavaScript.
 */
export function likeToRegex(pattern: string): string {
  const pieces: string[] = [''];
  let star = false;
  let anys = '';
  const endRun = () => {
    pieces[pieces.length - 1] += anys;
    if (star) pieces.push('');
    star = false;
    anys = '';
  };
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '%') star = true;
    else if (c === '_') anys += ANY;
    else {
      endRun();
      const literal = c === '\\' && i + 1 < pattern.length ? pattern[++i]! : c;
      pieces[pieces.length - 1] += escapeRegex(literal);
    }
  }
  endRun();
  if (pieces.length === 1) return `^${pieces[0]}${END}`;
  const first = pieces[0]!;
  const last = pieces[pieces.length - 1]!;
  const middle = pieces.slice(1, -1).map((p, i) => `(?=(${ANY}*?${p}))\\${i + 1}`);
  return `^${first}${middle.join('')}${ANY}*${last}${END}`;
}
