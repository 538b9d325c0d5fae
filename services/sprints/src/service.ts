import { SprintsOps } from '@app/shared/contracts';
import { bindOps, WRITE_INDEXES, type ServiceDefinition } from '@app/shared/domain';
import { Collections, metadataPath } from '@app/shared/store';
import { closeSprint } from './handlers/close-sprint.js';

/**
 * The sprints service (DESIGN §1: sprints = close-sprint), queue group `sprints`. Indexes: the
 * close finds the sprint's members by `app.sprint` and the boards pointing at it by `activeSprintId`.
 * Both specs equal the query's and the boards service's (MongoDB refuses one key under two names).
 */
export const sprintsService: ServiceDefinition = {
  name: 'sprints',
  bindings: (deps) => bindOps(deps, SprintsOps, { close: closeSprint }),
  indexes: [
    { collection: Collections.tasks, keys: { [metadataPath('app.sprint')]: 1 } },
    { collection: Collections.boards, keys: { activeSprintId: 1 }, name: 'boards_active_sprint' },
    ...WRITE_INDEXES,
  ],
};
