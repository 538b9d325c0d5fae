/** Public surface of the tasks service: its ServiceDefinition (see shared/src/domain/service.ts). */
export { tasksService } from './service.js';
