import type { Handler } from '@app/shared/bus';
import type { TasksOps } from '@app/shared/contracts';
import { metadataSetUpdate, nullMetadataValue, type ServiceDeps } from '@app/shared/domain';
import { loadTask, taskDetail, writeTask } from '../task-access.js';

/** `tasks.setMetadata`: sets one key to any JSON value except null; replies with the task detail. */
export const setMetadata = (deps: ServiceDeps): Handler<typeof TasksOps.setMetadata> => async (input, ctx) => {
  const { principal, userId } = await loadTask(deps.store, ctx, input.taskId, 'write');
  if (input.value === null) throw nullMetadataValue('/value', input.key);
  const after = await writeTask(deps.store, input.taskId, metadataSetUpdate(input.key, input.value, userId, deps.clock.now()));
  return taskDetail(deps.store, principal, after);
};
