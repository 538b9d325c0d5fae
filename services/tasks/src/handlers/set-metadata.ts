import type { Handler } from '@app/shared/bus';
import type { TasksOps } from '@app/shared/contracts';
import { checkMetadataEntry, metadataSetUpdate, nullMetadataValue, runWrite, taskUpdatedEvent, type ServiceDeps } from '@app/shared/domain';
import { loadTask, taskDetail, writeTask } from '../task-store.js';

/** `tasks.setMetadata`: sets one key to any JSON value except null; replies with the task detail; `task.updated` when it changes. */
export const setMetadata = (deps: ServiceDeps): Handler<typeof TasksOps.setMetadata> => async (input, ctx) =>
  runWrite(deps, ctx, async (w) => {
    const { task, principal } = await loadTask(deps.store, ctx, input.taskId, 'write', w.session);
    if (input.value === null) throw nullMetadataValue('/value', input.key);
    checkMetadataEntry(input.key, input.value, '/key', '/value');
    const after = await writeTask(deps.store, w, task, metadataSetUpdate(input.key, input.value, w.userId, w.now) as { $set: Record<string, unknown> }, '/value');
    const event = taskUpdatedEvent(task, after);
    if (event) w.emit(event);
    return taskDetail(deps.store, principal, after, w.userId, w.session);
  });
