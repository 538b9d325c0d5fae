import { useEffect, useState } from 'react';

/** The current time, re-read every `everyMs` milliseconds (null: read once, no timer). For live "time left" texts. */
export function useNow(everyMs: number | null): Date {
  const [now, setNow] = useState(() => new Date());
  useEffect(() => {
    if (everyMs === null) return;
    setNow(new Date());
    const t = setInterval(() => setNow(new Date()), everyMs);
    return () => clearInterval(t);
  }, [everyMs]);
  return now;
}
