/**
 * Metadata key escaping (DESIGN §2). Metadata keys contain dots (`app.sprint`, `cf.priority`) that
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
  if (!stored.includes('%')) return stored;
  let out = stored;
  if (out.startsWith('%24')) out = `$${out.slice(3)}`;
  return out.replace(/%2E/g, '.').replace(/%25/g, '%');
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
