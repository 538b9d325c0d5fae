/**
 * Case folding of the embedded store's case-insensitive matching (`$regex` with `$options: 'i'`,
 * which the query language makes of ILIKE and `~`; docs/query-language.md "Case"). MongoDB
 * matches case-insensitively with PCRE2 in UTF mode, which folds by Unicode simple case folding:
 * `ſ` matches `s`, the Kelvin sign `K` matches `k`, the Angstrom sign `Å` matches `å`, `ς` matches
 * `σ`, while `İ` and `ı` match only themselves. A JavaScript regular expression with the `u` and
 * `i` flags folds the same way; this module gives each code point one representative of its
 * folding class so a text can be folded once and compared with plain string operations.
 */

/** Representatives of non-ASCII code points, memoized (the case mappings and the check cost microseconds). */
const representatives = new Map<number, string>();

const isSingleCodePoint = (s: string): boolean => s.length === 1 || (s.length === 2 && s.codePointAt(0)! > 0xffff);

/** True when `a` and `b` fold to the same character under Unicode simple case folding (a `/u`+`/i` regex). */
function sameFold(a: string, b: string): boolean {
  return new RegExp(`^${a.replace(/[\\^$.*+?()[\]{}|/-]/g, '\\$&')}$`, 'ui').test(b);
}

/**
 * The representative of the folding class of code point `cp`, as a string of one code point: the
 * lower case of its upper case, or its lower case, when that folds with it (checked by the
 * regular-expression engine's own Unicode folding), else `cp` itself. Two code points fold alike
 * exactly when their representatives are equal.
 */
export function foldCodePoint(cp: number): string {
  if (cp < 128) return cp >= 65 && cp <= 90 ? String.fromCharCode(cp + 32) : String.fromCharCode(cp);
  let f = representatives.get(cp);
  if (f === undefined) {
    const ch = String.fromCodePoint(cp);
    f = ch;
    if (cp < 0xd800 || cp > 0xdfff) {
      const up = ch.toUpperCase();
      const candidates = [isSingleCodePoint(up) ? up.toLowerCase() : '', ch.toLowerCase()];
      for (const c of candidates) {
        if (c !== '' && c !== ch && isSingleCodePoint(c) && sameFold(ch, c)) {
          f = c;
          break;
        }
      }
    }
    representatives.set(cp, f);
  }
  return f;
}

const PLAIN_ASCII = /^[\x00-\x7f]*$/;

/**
 * `s` with every code point replaced by its {@link foldCodePoint} representative (lone surrogates
 * kept as they are): `foldCase(a) === foldCase(b)` exactly when a `/ui` regular expression of `a`
 * matches all of `b`, and `foldCase(t).includes(foldCase(p))` exactly when it finds `p` in `t`.
 */
export function foldCase(s: string): string {
  if (PLAIN_ASCII.test(s)) return s.toLowerCase();
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 128) out += c >= 65 && c <= 90 ? String.fromCharCode(c + 32) : s[i];
    else if (c >= 0xd800 && c <= 0xdbff) {
      const next = s.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        out += foldCodePoint(((c - 0xd800) << 10) + (next - 0xdc00) + 0x10000);
        i++;
      } else out += s[i];
    } else out += foldCodePoint(c);
  }
  return out;
}
