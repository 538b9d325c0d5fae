/**
 * Metadata key escaping (docs/architecture.md §2). Metadata keys contain dots (`app.sprint`, `cf.priority`) that
 * MongoDB would read as paths, so keys are stored escaped inside the `metadata` sub-document:
 * `%` → `%25`, `.` → `%2E`, a leading `$` → `%24`. API users only ever see the original keys.
 */

/** Escapes one metadata key for storage. Total and reversible by {@link unescapeKey}. */
export function escapeKey(key: string): string {
  let out = key.replace(/%/g, '%25').replace(/\./g, '%2E');
  if (out.startsWith('$')) out = `%24${out.slice(1)}`;
  return out;
}

/** Reverses {@link escapeKey}. */
export function unescapeKey(stored: string): string {
  let at = stored.indexOf('%');
  if (at < 0) return stored;
  // one left-to-right pass over the `%XX` sequences escapeKey writes
  let out = '';
  let from = 0;
  for (; at >= 0; at = stored.indexOf('%', from)) {
    const code = stored.slice(at + 1, at + 3);
    const char = code === '2E' ? '.' : code === '25' ? '%' : code === '24' && at === 0 ? '$' : undefined;
    if (char === undefined) {
      out += stored.slice(from, at + 1);
      from = at + 1;
      continue;
    }
    out += stored.slice(from, at) + char;
    from = at + 3;
  }
  return out + stored.slice(from);
}

/** Escapes every key of an API metadata object for storage (values untouched). */
export function encodeMetadata(meta: Record<string, unknown> | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (!meta) return out;
  for (const [k, v] of Object.entries(meta)) out[escapeKey(k)] = v;
  return out;
}

/** Turns a stored metadata sub-document back into API keys. */
export function decodeMetadata(stored: unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (!stored || typeof stored !== 'object') return out;
  const src = stored as Record<string, unknown>;
  for (const k of Object.keys(src)) out[unescapeKey(k)] = src[k];
  return out;
}

/** The stored path of a metadata key, e.g. `app.sprint` → `metadata.app%2Esprint`. */
export function metadataPath(key: string): string {
  return `metadata.${escapeKey(key)}`;
}
