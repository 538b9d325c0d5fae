import { AsyncLocalStorage } from 'node:async_hooks';
import type { TokenGrant } from '../contracts/tokens.js';

/**
 * What the request being handled carries into every call it makes, without each call passing it
 * on (docs/store.md "Long reads and other users' requests"; docs/auth.md "Access tokens"):
 * - `grant`: the access token's grant (none for a JWT request), read by the access rules;
 * - `readDeadline`: `performance.now()` (ms) past which the request's reads stop with
 *   `QUERY_TIMEOUT`: the read time limit counts the request's whole time, not each read's;
 * - `open`: true while the request is being handled. Work a handler starts and leaves running
 *   (a recorder catching up, a relay woken by a write) inherits the scope, as async context does;
 *   once the request is answered its deadline no longer applies to that work;
 * - `waitedMs`: the time its reads in steps waited for their turn while other requests' steps
 *   ran (ms), which the request's measured cost leaves out (docs/http.md "Fair use").
 */
export interface RequestScope {
  readonly grant: TokenGrant | undefined;
  readonly readDeadline: number;
  open: boolean;
  waitedMs: number;
}

const current = new AsyncLocalStorage<RequestScope>();

/**
 * Runs `fn` as the handling of one request with `scope` and returns what `fn` returns. The caller
 * closes the scope (`scope.open = false`) once the request is answered.
 */
export function inRequest<R>(scope: RequestScope, fn: () => R): R {
  return current.run(scope, fn);
}

/**
 * The scope of the request this code runs for, or undefined (no request). Work a request started
 * keeps its scope after the answer (with `open` false), as it kept the grant before.
 */
export function currentRequest(): RequestScope | undefined {
  return current.getStore();
}

/**
 * The current request's read deadline (`performance.now()` ms), or Infinity: no request, or one
 * already answered. A read's own deadline is the earlier of it and its start plus the read limit.
 */
export function requestReadDeadline(): number {
  const s = current.getStore();
  return s === undefined || !s.open ? Infinity : s.readDeadline;
}

/**
 * The time a read may still take, in ms: `limitMs` (the store's per-read limit), cut to what is
 * left of the current request's read deadline. 0 or less: the request is past its deadline.
 */
export function readTimeLeft(limitMs: number): number {
  const deadline = requestReadDeadline();
  return deadline === Infinity ? limitMs : Math.min(limitMs, deadline - performance.now());
}
