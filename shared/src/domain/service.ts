import type { Logger } from 'pino';
import type { Binding } from '../bus/bus.js';
import type { DocumentStore, IndexSpec } from '../store/port.js';
import type { Clock } from './clock.js';

/** What every service's handlers are built from (DESIGN §10: typed deps, no env, no connect). */
export interface ServiceDeps {
  store: DocumentStore;
  clock: Clock;
  log: Logger;
}

/**
 * A service as the process entry points see it: its name (= NATS queue group, DESIGN §3), its
 * bindings, and the indexes it needs at start-up. Built by `services/<name>/src/service.ts`.
 */
export interface ServiceDefinition {
  name: 'tasks' | 'boards' | 'sprints' | 'query';
  bindings(deps: ServiceDeps): Binding[];
  indexes: IndexSpec[];
}
