import { Type } from '@sinclair/typebox';
import { invalidField } from '../errors/index.js';

/**
 * The event cursor as text (docs/events.md "Cursors"): an event `seq`, written in decimal digits
 * only, at most `Number.MAX_SAFE_INTEGER`. The feed's `?after`, the stream's `?after` and its
 * `Last-Event-ID` header all take this form, read by {@link parseCursor}.
 */
export const CURSOR_PATTERN = '^[0-9]+$';

/** The HTTP schema of a cursor parameter (a string, so nothing coerces `0x10` or `1e3` into a number first). */
export const CursorText = (description: string) => Type.String({ pattern: CURSOR_PATTERN, maxLength: 16, description });

/**
 * The one parser of event cursors: `text` must be decimal digits only and at most
 * `Number.MAX_SAFE_INTEGER` (9007199254740991), else 400 `VALIDATION_FAILED` naming `field`
 * (`/after`, `/headers/last-event-id`). `undefined` stays undefined.
 */
export function parseCursor(text: string | undefined, field: string): number | undefined {
  if (text === undefined) return undefined;
  if (!/^[0-9]+$/.test(text)) throw invalidField(field, 'must be an event seq: decimal digits only', 'cursor');
  const n = Number(text);
  if (!Number.isSafeInteger(n)) throw invalidField(field, `must be an event seq of at most ${Number.MAX_SAFE_INTEGER}`, 'cursor');
  return n;
}
