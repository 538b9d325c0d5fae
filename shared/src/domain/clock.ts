/** Source of the current time; injected so dates and query date literals are testable. */
export interface Clock {
  now(): Date;
}

/** The real clock. */
export const systemClock: Clock = { now: () => new Date() };

/** A clock frozen at `iso` (an ISO 8601 instant); `advance(ms)` moves it forward. */
export function fixedClock(iso: string): Clock & { advance(ms: number): void; set(iso: string): void } {
  let t = Date.parse(iso);
  if (Number.isNaN(t)) throw new Error(`fixedClock: not an instant: ${iso}`);
  return {
    now: () => new Date(t),
    advance: (ms: number) => {
      t += ms;
    },
    set: (next: string) => {
      t = Date.parse(next);
    },
  };
}
