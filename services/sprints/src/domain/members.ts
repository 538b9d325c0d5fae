import type { TaskDoc } from '@app/shared/domain';
import { escapeKey } from '@app/shared/store';

/** The status that marks a member finished and a sprint closed (docs/architecture.md §8). */
export const DONE = 'done';

/** Stored metadata keys the sprint rules read (escaped, see `store/keys.ts`). */
export const StoredKeys = {
  type: escapeKey('app.type'),
  sprint: escapeKey('app.sprint'),
  points: escapeKey('app.points'),
  carried: escapeKey('app.carried'),
} as const;

/** A sprint member as the close reads it. `points` is undefined when `app.points` is not a number. */
export interface Member {
  id: string;
  title: string;
  status: string;
  points: number | undefined;
  /**
   * Its `app.carried` (how many closes rolled it over) when that is a finite number, else
   * undefined (missing, or a value set by hand that is not a number: counted from 0).
   */
  carried?: number;
}

/** True when the task is a sprint: metadata `app.type` = `sprint` (docs/architecture.md §8). */
export function isSprint(t: Pick<TaskDoc, 'metadata'>): boolean {
  return t.metadata[StoredKeys.type] === 'sprint';
}

/** Reads a stored task (projected to id, title, status, `app.points`, maybe `app.carried`) as a {@link Member}. */
export function toMember(t: Pick<TaskDoc, '_id' | 'title' | 'status' | 'metadata'>): Member {
  const p = t.metadata?.[StoredKeys.points];
  const c = t.metadata?.[StoredKeys.carried];
  const member: Member = { id: t._id, title: t.title, status: t.status, points: typeof p === 'number' && Number.isFinite(p) ? p : undefined };
  if (typeof c === 'number' && Number.isFinite(c)) member.carried = c;
  return member;
}

/**
 * Velocity of a sprint (docs/architecture.md §8): the sum of the numeric `app.points` of its finished members.
 * Members without numeric points (missing, strings — even numeric ones —, booleans…) add nothing.
 * Rounded to 6 decimals so fractional points add up as people expect (0.1 + 0.2 = 0.3).
 */
export function velocityOf(finished: readonly Member[]): number {
  const sum = finished.reduce((acc, m) => acc + (m.points ?? 0), 0);
  return Math.round(sum * 1e6) / 1e6;
}
