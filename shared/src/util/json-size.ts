/*
 * The size of a value's JSON text without making the text when a bound rules the limit out: the
 * limits of events, tasks and metadata values are checked on every write, almost always far
 * below them.
 */

/** UTF-8 bytes of the JSON text of `value` (as the stream, the feed and the bus carry it). */
export function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value) ?? '', 'utf8');
}

/**
 * An upper bound of {@link jsonBytes} in one pass with no allocation: a string's UTF-16 unit as 6
 * bytes (a `\uXXXX` escape; UTF-8 takes at most 3 per unit), a number as 25 characters (the
 * longest a double prints: `-0.00000` and 17 significant digits, e.g. `-0.0000010000000083027071`), every separator counted. `Infinity` for a value with `toJSON` (a
 * date): only the text tells its size.
 */
export function jsonBound(value: unknown): number {
  switch (typeof value) {
    case 'string':
      return 2 + 6 * value.length;
    case 'number':
      return 25;
    case 'boolean':
      return 5;
    case 'object':
      break;
    default:
      return 4; // undefined is left out (or null in an array)
  }
  if (value === null) return 4;
  if (typeof (value as { toJSON?: unknown }).toJSON === 'function') return Infinity;
  let size = 2;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) size += 1 + jsonBound(value[i]);
    return size;
  }
  for (const key in value) {
    if (!Object.prototype.hasOwnProperty.call(value, key)) continue;
    size += 4 + 6 * key.length + jsonBound((value as Record<string, unknown>)[key]);
  }
  return size;
}

/**
 * The UTF-8 bytes of the JSON text of `value` when they are over `max`, else `undefined`. The
 * text is made only when {@link jsonBound} cannot rule the limit out: a write of ordinary size
 * pays one walk of its values, not a serialization. `bound`: the value's {@link jsonBound}, when known.
 */
export function jsonBytesOver(value: unknown, max: number, bound = jsonBound(value)): number | undefined {
  if (bound <= max) return undefined;
  const bytes = jsonBytes(value);
  return bytes > max ? bytes : undefined;
}
