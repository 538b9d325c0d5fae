/**
 * The embedded store's clock on one read (port `QUERY_TIME_LIMIT_MS`; docs/store.md "Long reads
 * and other users' requests"). A read's synchronous part runs under {@link timedRead}, and every
 * document it examines is counted by {@link examine}, which looks at the time once per
 * {@link CHECK_EVERY} documents:
 * - past the read's deadline (the store's per-read limit, cut to what is left of the request's
 *   whole time: `util/request-scope.ts`) it stops the read with `QUERY_TIMEOUT` (503);
 * - in a read that may yield, past {@link TRY_MS} it throws {@link STEP}: the read gives up its
 *   synchronous try (it has changed nothing) and the caller runs it again in steps of
 *   {@link SLICE_MS}, with a turn of the event loop between them (`stepped-read.ts`).
 * Outside a timed read nothing is ever stopped (writes, the expiry sweep, loading).
 */
import { queryTimeout } from '../rules.js';

/** Documents examined between two looks at the clock (a power of two). */
export const CHECK_EVERY = 256;

/**
 * The longest a read holds the event loop in one go, ms: its synchronous try, then each of its
 * steps. MongoDB yields a long query every 10 ms or so; with a few such reads running at once,
 * another request waits at most a few slices.
 */
export const SLICE_MS = 4;

/**
 * The longest the synchronous try of a read that may yield runs before it gives way, ms: most
 * reads end well within it and never pay for steps.
 */
export const TRY_MS = 2;

/**
 * Thrown by {@link examine} in a read that may yield once its synchronous try passes
 * {@link TRY_MS}; caught by the read itself (never reaches a caller of the store).
 */
export const STEP: unique symbol = Symbol('step');

/** `performance.now()` past which the running read stops (Infinity: no read is timed). */
let deadline = Infinity;
/** `performance.now()` past which {@link examine} looks closer: the deadline, or the slice's end. */
let check = Infinity;
let limit = 0;


/**
 * Runs the synchronous read `fn` under a limit of `limitMs` from now, or until `until`
 * (`performance.now()` ms: the request's read deadline) when that is earlier: its scans stop with
 * `QUERY_TIMEOUT` (naming `limitMs`) past it, at the next look at the clock (a read of fewer than
 * {@link CHECK_EVERY} documents is never stopped).
 * With `yieldable`, `fn` throws {@link STEP} once it has run {@link TRY_MS}. Reads do not nest:
 * the synchronous parts of the store's calls run one at a time.
 */
export function timedRead<R>(limitMs: number, until: number, fn: () => R, yieldable = false): R {
  const now = performance.now();
  deadline = Math.min(now + limitMs, until);
  check = yieldable ? Math.min(deadline, now + TRY_MS) : deadline;
  limit = limitMs;
  try {
    return fn();
  } finally {
    deadline = check = Infinity;
  }
}

/**
 * Counts `n` examined documents into `stats.docsExamined`; in a timed read, when a count boundary
 * of {@link CHECK_EVERY} is crossed, throws `QUERY_TIMEOUT` past the deadline and {@link STEP}
 * past the slice of a read that may yield.
 */
export function examine(stats: { docsExamined: number }, n = 1): void {
  const before = stats.docsExamined;
  const after = before + n;
  stats.docsExamined = after;
  if (check !== Infinity && (before ^ after) >= CHECK_EVERY) {
    const now = performance.now();
    if (now < check) return;
    if (now >= deadline) {
      deadline = check = Infinity;
      throw queryTimeout(limit);
    }
    check = Infinity;
    throw STEP;
  }
}
