/** Options of {@link eventually}. */
export interface EventuallyOptions {
  /** Give up after this long, in ms (default 5,000). */
  timeoutMs?: number;
  /** Time between two probes, in ms (default 10). */
  intervalMs?: number;
}

/**
 * Waits for background work by polling its observable outcome: calls `probe` until `done` holds
 * for what it returned (by default: a truthy value), and returns that value. A probe that throws
 * counts as not done yet. After `timeoutMs` it throws an Error naming `what` and the last value or
 * error seen. Tests wait on the condition with it, never a fixed sleep: they take as long as the
 * work does, and a run that never gets there fails with the reason.
 *
 * A check that nothing more arrives is written with a marker instead: cause one more observable
 * event after the work, wait for the marker with this helper, then assert what came before it.
 */
export async function eventually<T>(
  what: string,
  probe: () => T | Promise<T>,
  done: (value: T) => boolean = Boolean,
  opts: EventuallyOptions = {},
): Promise<T> {
  const timeoutMs = opts.timeoutMs ?? 5_000;
  const intervalMs = opts.intervalMs ?? 10;
  const deadline = Date.now() + timeoutMs;
  let last: { value: T } | { error: unknown } | undefined;
  for (;;) {
    try {
      const value = await probe();
      if (done(value)) return value;
      last = { value };
    } catch (error) {
      last = { error };
    }
    if (Date.now() >= deadline) {
      const seen = last === undefined ? 'nothing' : 'error' in last ? `error ${String(last.error)}` : `value ${describe(last.value)}`;
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last saw ${seen}`);
    }
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** A short description of a probed value for the timeout message. */
function describe(value: unknown): string {
  try {
    const text = JSON.stringify(value);
    return text === undefined ? String(value) : text.length > 500 ? `${text.slice(0, 500)}…` : text;
  } catch {
    return String(value);
  }
}
