import { useState } from 'react';
import { errorText, type Api } from '../api/client.js';
import type { BoardMember, TaskDetail } from '../api/types.js';
import { leaseHolder, liveLease, timeLeft } from './state.js';
import { useNow } from './useNow.js';

/**
 * The lease of a card in its detail (docs/web.md "Leases"): who holds it (the holder token's
 * name and its user, or the user), since when and the time left, counting down; **Release** for
 * the holder's user (`POST /tasks/{id}/lease/release`), which frees the card for the next claim.
 * Nothing is shown without a live lease.
 */
export function LeaseInfo(p: { api: Api; task: TaskDetail; members: readonly BoardMember[]; writable: boolean; onReleased: () => void }) {
  const now = useNow(p.task.lease ? 1_000 : null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const lease = liveLease(p.task, now);
  if (!lease) return null;
  const people = new Map(p.members.map((m) => [m.id, m.username]));
  const mine = lease.holder === p.api.session?.userId;
  async function release() {
    setBusy(true);
    setError(null);
    try {
      await p.api.releaseLease(p.task.id, lease!.id);
      p.onReleased();
    } catch (e) {
      setError(errorText(e));
    } finally {
      setBusy(false);
    }
  }
  return (
    <div className="lease-detail" data-testid="lease-detail">
      <p>
        Claimed by {leaseHolder(lease, people)} since {new Date(lease.claimed_at).toLocaleTimeString()}: <strong>{timeLeft(lease.expires_at, now)}</strong>.
        {!mine && ' Only its holder can release it; it frees itself when the time is up.'}
      </p>
      {mine && p.writable && (
        <button type="button" className="secondary" disabled={busy} onClick={() => void release()}>
          Release
        </button>
      )}
      {error && (
        <p role="alert" className="error">
          {error}
        </p>
      )}
    </div>
  );
}
