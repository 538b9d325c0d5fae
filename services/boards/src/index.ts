/** Public surface of the boards service: its ServiceDefinition (see shared/src/domain/service.ts). */
export { boardsService } from './service.js';
