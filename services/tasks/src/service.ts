import { CustomFieldsOps, TasksOps } from '@app/shared/contracts';
import { bindOps, customFieldIndexes, type ServiceDefinition } from '@app/shared/domain';
import { Collections, type IndexSpec } from '@app/shared/store';
import { createBatch, updateBatch } from './handlers/batch.js';
import { deleteMany, getMany, transfer, updateEach, updateMany, upsert } from './handlers/batch-family.js';
import { checkIn } from './handlers/check-in.js';
import { create } from './handlers/create.js';
import { customFieldHandlers } from './handlers/custom-fields.js';
import { deleteMetadata } from './handlers/delete-metadata.js';
import { get } from './handlers/get.js';
import { movePath } from './handlers/move-path.js';
import { addNote, listNotes } from './handlers/notes.js';
import { remove } from './handlers/remove.js';
import { restore } from './handlers/restore.js';
import { setMetadata } from './handlers/set-metadata.js';
import { update } from './handlers/update.js';

const taskIndex = (field: string): IndexSpec => ({ collection: Collections.tasks, keys: { [field]: 1 } });

/**
 * The tasks service (docs/architecture.md §1): task create, the task detail family, metadata writes, folder
 * move, notes, restore, check-in and the batch writes, on subjects `tasks.*`; the custom field
 * definitions on `customFields.*` (docs/custom-fields.md).
 */
export const tasksService: ServiceDefinition = {
  name: 'tasks',
  bindings: (deps) => [
    ...bindOps(deps, TasksOps, {
      create, get, update, remove, setMetadata, deleteMetadata, movePath, addNote, listNotes, createBatch, updateBatch,
      restore, checkIn, getMany, updateMany, updateEach, deleteMany, transfer, upsert,
    }),
    ...bindOps(deps, CustomFieldsOps, customFieldHandlers),
  ],
  indexes: [
    ...['created_by', 'groupId', 'deleted', 'status', 'tags', 'metadata.$**', 'created_at', 'updated_at', 'derivedFromId'].map(taskIndex),
    { collection: Collections.notes, keys: { task_id: 1, created_at: 1 } },
    ...customFieldIndexes,
  ],
};
