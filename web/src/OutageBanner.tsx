import { useEffect, useState } from 'react';
import type { Api, Connectivity } from './api/client.js';

/**
 * "Can't reach the server — retrying" while requests get no answer (docs/web.md "Outages"): the
 * seconds to the next check of the client's backoff, and **Retry now**. It goes away as soon as
 * any answer comes (a check, or any call of the page); "Connected again." is said once to screen
 * readers.
 */
export function OutageBanner({ api }: { api: Api }) {
  const [c, setC] = useState<Connectivity>(api.connectivity);
  const [now, setNow] = useState(() => Date.now());
  const [back, setBack] = useState(false);
  useEffect(
    () =>
      api.onConnectivity((next) => {
        setC(next);
        setBack(next.state === 'online');
      }),
    [api],
  );
  useEffect(() => {
    if (c.state !== 'offline') return;
    const t = setInterval(() => setNow(Date.now()), 1_000);
    return () => clearInterval(t);
  }, [c.state]);
  if (c.state === 'online') {
    return (
      <div className="sr-only" role="status">
        {back ? 'Connected to the server again.' : ''}
      </div>
    );
  }
  const secs = Math.max(0, Math.ceil((c.retryAt - now) / 1000));
  return (
    <div className="outage" data-testid="outage">
      {/* announced once; the countdown beside it changes every second and is for the eye only */}
      <span>
        <span role="alert">Can’t reach the server — retrying</span>
        <span aria-hidden="true">{secs > 0 ? ` in ${secs} s` : '…'}</span>. Changes made now are not saved.
      </span>
      <button type="button" className="secondary" onClick={() => void api.retryNow()}>
        Retry now
      </button>
    </div>
  );
}

/** The client's connectivity, re-rendered on each change (for the "live" / "refreshes every" line). */
export function useConnectivity(api: Api): Connectivity['state'] {
  const [state, setState] = useState(api.connectivity.state);
  useEffect(() => api.onConnectivity((c) => setState(c.state)), [api]);
  return state;
}
