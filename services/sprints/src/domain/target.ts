import { BACKLOG, NO_TARGET } from '@app/shared/contracts';
import { canReadTask, type Principal, type TaskDoc } from '@app/shared/domain';
import { AppError } from '@app/shared/errors';
import { DONE, isSprint } from './members.js';

/** Where the unfinished members go: the backlog, another sprint, or nowhere (no rollover given). */
export type Target = { kind: 'backlog' } | { kind: 'sprint'; id: string; title: string } | { kind: 'none' };

/** The `target` value of the close response: `backlog`, the sprint id, or `none`. */
export function targetValue(t: Target): string {
  return t.kind === 'sprint' ? t.id : t.kind === 'backlog' ? BACKLOG : NO_TARGET;
}

function invalid(rollover: string, reason: string, message: string): AppError {
  return new AppError('SPRINT_ROLLOVER_INVALID', { message: `rollover: ${message}`, details: { rollover, reason } });
}

/**
 * Resolves the body's `rollover` (docs/architecture.md §8). `candidate` is the live task whose id is `rollover`,
 * if any. Throws 400 `SPRINT_ROLLOVER_INVALID` (`details.reason`: `same_sprint`, `not_found` —
 * missing, deleted and unreadable look alike —, `not_a_sprint`, `closed`) unless the target is
 * `backlog` or another open sprint the caller can read.
 */
export function resolveTarget(
  p: Principal,
  sprintId: string,
  rollover: string | undefined,
  candidate: TaskDoc | undefined,
): Target {
  if (rollover === undefined) return { kind: 'none' };
  if (rollover === BACKLOG) return { kind: 'backlog' };
  if (rollover === sprintId) throw invalid(rollover, 'same_sprint', 'a sprint cannot roll over into itself');
  if (!candidate || !canReadTask(p, candidate)) {
    throw invalid(rollover, 'not_found', `no sprint "${rollover}"; send "backlog" or the id of another open sprint`);
  }
  if (!isSprint(candidate)) throw invalid(rollover, 'not_a_sprint', `task ${rollover} is not a sprint`);
  if (candidate.status === DONE) throw invalid(rollover, 'closed', `sprint ${rollover} is already closed`);
  return { kind: 'sprint', id: candidate._id, title: candidate.title };
}
