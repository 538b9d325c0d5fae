import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * True when two secrets (an invite code, a bearer token) are equal, compared in constant time as
 * SHA-256 digests, so neither the content nor the length leaks through timing.
 */
export function sameSecret(a: string, b: string): boolean {
  const digest = (s: string) => createHash('sha256').update(s).digest();
  return timingSafeEqual(digest(a), digest(b));
}
