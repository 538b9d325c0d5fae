import type { BackgroundDeps, BackgroundWork } from '@app/shared/domain';
import { DEFAULT_RETENTION_DAYS, sweepEvents } from '@app/shared/events';

/** How often the retention sweep runs (ms). */
export const SWEEP_INTERVAL_MS = 60 * 60 * 1000;

/**
 * The query service's background work (issue 10), in every replica: the retention sweep of the
 * outbox (hourly, idempotent across replicas).
 */
export async function startEventWork(deps: BackgroundDeps): Promise<BackgroundWork> {
  const days = deps.config?.EVENT_RETENTION_DAYS ?? DEFAULT_RETENTION_DAYS;
  const sweep = async (): Promise<void> => {
    try {
      const removed = await sweepEvents(deps.store, deps.clock.now(), days);
      if (removed > 0) deps.log.info({ removed, days }, 'event retention sweep');
    } catch (err) {
      deps.log.warn({ err }, 'event retention sweep failed; retrying next interval');
    }
  };
  const timer = setInterval(() => void sweep(), SWEEP_INTERVAL_MS);
  timer.unref();
  void sweep();
  return {
    close: async () => {
      clearInterval(timer);
    },
  };
}
