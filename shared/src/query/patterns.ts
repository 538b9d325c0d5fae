/**
 * Text patterns to `$regex` source (docs/architecture.md §6: text is regex-escaped; no ReDoS). The output is
 * plain PCRE/ECMAScript syntax that MongoDB and mingo read alike; `[\s\S]` stands for any
 * character so no flag decides whether newlines match.
 */

const ANY = '[\\s\\S]';

/**
 * Escapes every regex metacharacter so `text` matches itself literally; NUL becomes `\x00`
 * (MongoDB refuses a pattern with an embedded NUL byte).
 */
export function escapeRegex(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&').replace(/\0/g, '\\x00');
}

/**
 * A LIKE pattern as an anchored regex: `%` = any run of characters, `_` = one character,
 * `\` escapes the next character. Backtracking stays linear: every `%`-separated middle piece
 * is found at its earliest position inside an atomic lookahead (`(?=(.*?piece))\k`), which is
 * exactly LIKE's meaning (the earliest occurrence always leaves the most room for the rest), so
 * `%a%a%a%…` against a long text cannot blow up the way `.*a.*a.*a…` does.
 */
export function likeToRegex(pattern: string): string {
  const pieces: string[] = [''];
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i]!;
    if (c === '%') {
      if (pieces[pieces.length - 1] !== '' || pieces.length === 1) pieces.push('');
    } else {
      const literal = c === '\\' && i + 1 < pattern.length ? pattern[++i]! : c;
      pieces[pieces.length - 1] += c === '_' ? ANY : escapeRegex(literal);
    }
  }
  if (pieces.length === 1) return `^${pieces[0]}$`;
  const first = pieces[0]!;
  const last = pieces[pieces.length - 1]!;
  const middle = pieces.slice(1, -1).map((p, i) => `(?=(${ANY}*?${p}))\\${i + 1}`);
  return `^${first}${middle.join('')}${ANY}*${last}$`;
}
