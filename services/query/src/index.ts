/** Public surface of the query service: its ServiceDefinition (see shared/src/domain/service.ts). */
export { queryService } from './service.js';
export { eventWork, type EventWorkOptions } from './events/background.js';
