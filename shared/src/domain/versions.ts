import { AppError } from '../errors/index.js';
import type { Filter } from '../store/port.js';

/**
 * Versions of tasks and boards: an integer, 1 on
 * create, +1 on every committed change. A stored document without `version` (data written before
 * versions existed) counts as version 1. See docs/concurrency.md.
 */

/** A parsed `If-Match`: `*` (the resource exists) or the listed strong versions. */
export type IfMatch = { any: true } | { any: false; versions: number[] };

const TAG = /^(W\/)?"([^"]*)"$/;

/**
 * Parses an `If-Match` header value (RFC 9110 §13.1.1): `*`, or a comma list of entity tags
 * (`"3"`, `W/"3"`). Weak tags never match (strong comparison), nor do tags that are not a
 * version. Returns `undefined` for a malformed value; the gateway answers that with 400.
 */
export function parseIfMatch(value: string): IfMatch | undefined {
  const v = value.trim();
  if (v === '*') return { any: true };
  const versions: number[] = [];
  for (const part of v.split(',')) {
    const m = TAG.exec(part.trim());
    if (!m) return undefined;
    if (!m[1] && /^[1-9][0-9]{0,14}$/.test(m[2]!)) versions.push(Number(m[2]));
  }
  return { any: false, versions };
}

/**
 * True when an `If-None-Match` value (`*` or a list of tags, weak comparison: `W/"3"` matches
 * version 3) names `version`, i.e. a GET can answer 304.
 */
export function noneMatchHits(value: string, version: number): boolean {
  const v = value.trim();
  if (v === '*') return true;
  return v.split(',').some((part) => {
    const m = TAG.exec(part.trim());
    return m !== null && m[2] === String(version);
  });
}

/** The version of a stored task or board (1 when absent: older data). */
export function versionOf(doc: { version?: unknown }): number {
  return typeof doc.version === 'number' ? doc.version : 1;
}

/**
 * Checks the request's `If-Match` (raw header, as the bus carries it) against the current
 * version of the resource: no header, `*`, or a listed version → passes; otherwise 412
 * `PRECONDITION_FAILED` with `details.current_version` (and `ids`, e.g. `{taskId}`).
 */
export function checkIfMatch(ifMatch: string | undefined, current: number, ids: Record<string, string>): void {
  if (ifMatch === undefined) return;
  const parsed = parseIfMatch(ifMatch);
  if (parsed && (parsed.any || parsed.versions.includes(current))) return;
  throw new AppError('PRECONDITION_FAILED', {
    message: `The resource is at version ${current}, not the one If-Match names; read it again and retry`,
    details: { ...ids, current_version: current },
  });
}

/**
 * The filter pinning a document at the version it was read at: the write that carries it is the
 * check and the write in ONE conditional store operation (no read-then-write race).
 */
export function versionGuard(doc: { version?: unknown }): Filter {
  return typeof doc.version === 'number' ? { version: doc.version } : { version: { $exists: false } };
}

/** `{version: current + 1}`, for the `$set` of a write pinned by {@link versionGuard}. */
export function nextVersion(doc: { version?: unknown }): { version: number } {
  return { version: versionOf(doc) + 1 };
}
