import type { Handler } from '@app/shared/bus';
import type { TasksOps } from '@app/shared/contracts';
import { runWrite, taskUpdatedEvent, type ServiceDeps } from '@app/shared/domain';
import { loadTask, taskNotFound, tasksOf } from '../task-store.js';

/**
 * `tasks.checkIn` (`POST /tasks/{id}/check-in`, legacy `/todolist/{id}/check-in`): counts one
 * check-in. Write access as for an update (404 unreadable, 403 read-only). The count, the
 * `lastCheckedInAt` time, the update stamp and the version change in ONE conditional write that
 * increments rather than pins (`$inc`), so concurrent check-ins all count (20 at once → +20)
 * instead of conflicting. Emits `task.updated` (`checkInCount`, `lastCheckedInAt`). Answers
 * `{checkInCount}` after this check-in.
 */
export const checkIn = (deps: ServiceDeps): Handler<typeof TasksOps.checkIn> => async ({ taskId }, ctx) =>
  runWrite(deps, ctx, async (w) => {
    const { task } = await loadTask(deps.store, { userId: w.userId, ifMatch: undefined }, taskId, 'write', w.session);
    const at = w.now.toISOString();
    // a task stored without `version` reads as version 1: its first write sets 2
    const versioned = typeof task.version === 'number';
    const after = await tasksOf(deps.store).findOneAndUpdate(
      { _id: taskId, deleted: false, version: { $exists: versioned } },
      {
        $inc: versioned ? { checkInCount: 1, version: 1 } : { checkInCount: 1 },
        $set: { lastCheckedInAt: at, updated_at: at, updated_by: w.userId, ...(versioned ? {} : { version: 2 }) },
      },
      { returnDocument: 'after', session: w.session },
    );
    if (!after) throw taskNotFound(taskId); // deleted meanwhile
    const before = { ...after, checkInCount: after.checkInCount - 1 };
    if (task.lastCheckedInAt === undefined) delete before.lastCheckedInAt;
    else before.lastCheckedInAt = task.lastCheckedInAt;
    const event = taskUpdatedEvent(before, after);
    if (event) w.emit(event);
    return { checkInCount: after.checkInCount };
  });
