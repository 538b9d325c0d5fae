import { invalidField } from '../errors/index.js';

/**
 * The one parser of event cursors (docs/events.md "Cursors"; their HTTP schema is `CursorText`,
 * contracts/events.ts): `text` must be decimal digits only and at most `Number.MAX_SAFE_INTEGER`
 * (9007199254740991), else 400 `VALIDATION_FAILED` naming `field` (`/after`,
 * `/headers/last-event-id`). `undefined` stays undefined.
 */
export function parseCursor(text: string | undefined, field: string): number | undefined {
  if (text === undefined) return undefined;
  if (!/^[0-9]+$/.test(text)) throw invalidField(field, 'must be an event seq: decimal digits only', 'cursor');
  const n = Number(text);
  if (!Number.isSafeInteger(n)) throw invalidField(field, `must be an event seq of at most ${Number.MAX_SAFE_INTEGER}`, 'cursor');
  return n;
}
