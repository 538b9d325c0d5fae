/**
 * The embedded store's time limit on one read (port `QUERY_TIME_LIMIT_MS`; docs/query-language.md
 * "Safety"). A read runs synchronously, so one clock serves the whole store: {@link timedRead}
 * starts it, and every document a read examines is counted by {@link examine}, which looks at the
 * time once per {@link CHECK_EVERY} documents and stops the read with `QUERY_TIMEOUT` (503) past
 * the limit. Outside a timed read nothing is ever stopped (writes, the expiry sweep, loading).
 */
import { AppError } from '../../errors/index.js';

/** Documents examined between two looks at the clock (a power of two). */
const CHECK_EVERY = 1024;

/** `performance.now()` past which the running read stops (Infinity: no read is timed). */
let deadline = Infinity;
let limit = 0;

/**
 * Runs the read `fn` under a time limit of `limitMs` (its scans stop with `QUERY_TIMEOUT` once
 * past it). Reads do not nest: the store's calls run one at a time.
 */
export function timedRead<R>(limitMs: number, fn: () => R): R {
  deadline = performance.now() + limitMs;
  limit = limitMs;
  try {
    return fn();
  } finally {
    deadline = Infinity;
  }
}

/**
 * Counts `n` examined documents into `stats.docsExamined` and, in a timed read, throws
 * `QUERY_TIMEOUT` when a count boundary of {@link CHECK_EVERY} is crossed past the deadline.
 */
export function examine(stats: { docsExamined: number }, n = 1): void {
  const before = stats.docsExamined;
  const after = before + n;
  stats.docsExamined = after;
  if (deadline !== Infinity && (before ^ after) >= CHECK_EVERY && performance.now() >= deadline) {
    deadline = Infinity;
    throw new AppError('QUERY_TIMEOUT', {
      message: `The query ran past its time limit of ${limit} ms and was stopped; narrow it (a status, tag or board condition) and retry`,
      details: { limit_ms: limit },
    });
  }
}
