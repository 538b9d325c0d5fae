export { systemClock, fixedClock, type Clock } from './clock.js';
export { Task, toTask, Uuid, TITLE_MAX, DESCRIPTION_MAX, type TaskDoc, type TaskView, type Permission } from './task.js';
export { boardScopeFilter, type BoardDoc, type ColumnDef, type ColumnAction } from './board.js';
export {
  loadPrincipal, readableTasksFilter, canReadTask, canWriteTask, canReadBoard, canWriteBoard,
  type Principal, type GroupDoc, type GroupRole, type Shared,
} from './access.js';
export type { ServiceDeps, ServiceDefinition } from './service.js';
