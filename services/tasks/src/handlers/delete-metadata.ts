import type { Handler } from '@app/shared/bus';
import type { TasksOps } from '@app/shared/contracts';
import type { ServiceDeps } from '@app/shared/domain';
import { AppError } from '@app/shared/errors';
import { metadataPath } from '@app/shared/store';
import { loadTask, taskDetail, writeTask } from '../task-access.js';

/**
 * `tasks.deleteMetadata`: removes one key; a key the task does not carry → 404
 * `METADATA_KEY_NOT_FOUND`. The key's presence is part of the write's filter.
 */
export const deleteMetadata = (deps: ServiceDeps): Handler<typeof TasksOps.deleteMetadata> => async (input, ctx) => {
  const { principal, userId } = await loadTask(deps.store, ctx, input.taskId, 'write');
  const path = metadataPath(input.key);
  const after = await writeTask(
    deps.store,
    input.taskId,
    { $unset: { [path]: '' }, $set: { updated_at: deps.clock.now().toISOString(), updated_by: userId } },
    { [path]: { $exists: true } },
    () => new AppError('METADATA_KEY_NOT_FOUND', { details: { taskId: input.taskId, key: input.key } }),
  );
  return taskDetail(deps.store, principal, after);
};
