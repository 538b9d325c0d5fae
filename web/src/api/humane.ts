/**
 * One sentence a person reads for an error of the catalogue (docs/errors.md): a failed field check
 * names the field once in words ("Password must have at least 8 characters."), a query-language
 * error drops the part label and the position (the filter shows the position under the text
 * itself), and every other error is the catalogue's message.
 */

/** A field path of `validationErrors` (`/password`, `/columns/0/name`) as words: "Password", "Name of column 1". */
export function fieldName(path: string): string {
  const parts = path.split('/').filter(Boolean).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  const words = (s: string) => s.replace(/^(app|cf)\./, '').replace(/[_.]+/g, ' ').replace(/([a-z])([A-Z])/g, '$1 $2').toLowerCase();
  const item = (list: string, i: string) => `${words(list).replace(/s$/, '')} ${Number(i) + 1}`;
  const [a, b, c] = parts.slice(-3).reverse(); // last, its parent, the parent's parent
  let name: string;
  if (a === undefined) name = 'the request';
  else if (/^\d+$/.test(a) && b !== undefined) name = item(b, a);
  else if (b !== undefined && /^\d+$/.test(b) && c !== undefined) name = `${words(a)} of ${item(c, b)}`;
  else name = words(a);
  name = name.replace(/\bwip\b/, 'WIP');
  return name.charAt(0).toUpperCase() + name.slice(1);
}

/** The rule a field broke, as the end of a sentence ("must have at least 8 characters"). */
function rule(code: string, message: string): string {
  let m: RegExpMatchArray | null;
  if ((m = message.match(/^must NOT have fewer than (\d+) (characters|items)$/))) return m[1] === '1' ? 'must not be empty' : `must have at least ${m[1]} ${m[2]}`;
  if ((m = message.match(/^must NOT have more than (\d+) (characters|items)$/))) return `must have at most ${m[1]} ${m[2]}`;
  if ((m = message.match(/^must be (>=|<=|>|<) (-?[\d.]+)$/))) return `must be ${{ '>=': 'at least', '<=': 'at most', '>': 'more than', '<': 'less than' }[m[1]!]} ${m[2]}`;
  if ((m = message.match(/^must match format "(.+)"$/))) return `must be a valid ${m[1]!.replace('date-time', 'date and time')}`;
  if (code === 'type' && (m = message.match(/^must be (\w+)/))) return `must be ${{ string: 'text', integer: 'a whole number', number: 'a number', boolean: 'true or false', array: 'a list', object: 'an object' }[m[1]!] ?? m[1]}`;
  if (code === 'enum' || code === 'const' || code === 'anyOf') return 'is not one of the allowed values';
  return message.replace(/^must NOT/, 'must not');
}

/** A field error of a `VALIDATION_FAILED` answer as one sentence naming the field once. */
export function fieldSentence(e: { field: string; code?: string; message: string }): string {
  const required = e.message.match(/^must have required property '(.+)'$/);
  if (required) return `${fieldName(`${e.field}/${required[1]}`)} is required.`;
  if (e.message.match(/^must NOT have additional properties/)) return `${fieldName(e.field)} has a field it does not take.`;
  return `${fieldName(e.field)} ${rule(e.code ?? '', e.message)}.`;
}

/**
 * A query-language message without the part label (`Filter: `, `Column query: `) and the
 * "at position N" the page shows by itself, ending with a full stop.
 */
export function queryMessage(message: string): string {
  const m = message.replace(/^(Filter|Column query|Query): /, '').replace(/ at position \d+/, '').trim();
  return /[.?!]$/.test(m) ? m : `${m}.`;
}
