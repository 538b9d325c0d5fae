import type { Handler } from '@app/shared/bus';
import type { TasksOps } from '@app/shared/contracts';
import { runWrite, taskUpdatedEvent, type ServiceDeps } from '@app/shared/domain';
import { AppError } from '@app/shared/errors';
import { escapeKey, metadataPath } from '@app/shared/store';
import { loadTask, taskDetail, writeTask } from '../task-store.js';

/**
 * `tasks.deleteMetadata`: removes one key; a key the task does not carry → 404
 * `METADATA_KEY_NOT_FOUND`. Checked on the task as read in the write's transaction.
 */
export const deleteMetadata = (deps: ServiceDeps): Handler<typeof TasksOps.deleteMetadata> => async (input, ctx) =>
  runWrite(deps, ctx, async (w) => {
    const { task, principal } = await loadTask(deps.store, ctx, input.taskId, 'write', w.session);
    if (!(escapeKey(input.key) in task.metadata)) throw new AppError('METADATA_KEY_NOT_FOUND', { details: { taskId: input.taskId, key: input.key } });
    const after = await writeTask(deps.store, w, task, {
      $unset: { [metadataPath(input.key)]: '' },
      $set: { updated_at: w.now.toISOString(), updated_by: w.userId },
    });
    const event = taskUpdatedEvent(task, after);
    if (event) w.emit(event);
    return taskDetail(deps.store, principal, after, w.userId, w.session);
  });
