/** Public surface of the sprints service: its ServiceDefinition (see shared/src/domain/service.ts). */
export { sprintsService } from './service.js';
