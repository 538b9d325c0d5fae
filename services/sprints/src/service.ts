import { SprintsOps } from '@app/shared/contracts';
import { bindOps, type ServiceDefinition } from '@app/shared/domain';
import { Collections, metadataPath } from '@app/shared/store';
import { sprintBurndown } from './handlers/burndown.js';
import { closeSprint } from './handlers/close-sprint.js';
import { createSprint } from './handlers/create-sprint.js';
import { listSprints } from './handlers/list-sprints.js';
import { sprintReport } from './handlers/report.js';
import { startSprint } from './handlers/start-sprint.js';
import { boardVelocity } from './handlers/velocity.js';

/**
 * The sprints service (docs/architecture.md §1: sprints = close-sprint; sprint lifecycle, snapshots,
 * report, velocity, burndown), queue group `sprints`. Indexes: the close finds the sprint's members
 * by `app.sprint` and the boards pointing at it by `activeSprintId` (both specs equal the query's
 * and the boards service's: MongoDB refuses one key under two names); the board's sprint list finds
 * the sprints created on it by `boardId`; snapshots are read by sprint and by board, with their kind
 * and newest first.
 */
export const sprintsService: ServiceDefinition = {
  name: 'sprints',
  bindings: (deps) =>
    bindOps(deps, SprintsOps, {
      close: closeSprint,
      create: createSprint,
      list: listSprints,
      start: startSprint,
      report: sprintReport,
      velocity: boardVelocity,
      burndown: sprintBurndown,
    }),
  indexes: [
    { collection: Collections.tasks, keys: { [metadataPath('app.sprint')]: 1 } },
    { collection: Collections.boards, keys: { activeSprintId: 1 }, name: 'boards_active_sprint' },
    // The board's sprints: the sprint tasks created on it.
    { collection: Collections.tasks, keys: { boardId: 1 } },
    // A sprint's snapshots, and its latest close (the report); a board's snapshots (the sprint
    // list), and its closes newest first (the velocity history). The embedded store indexes each
    // field, so both reads are answered from the index sets without testing documents.
    { collection: Collections.sprintSnapshots, keys: { sprint_id: 1, kind: 1, taken_at: -1, _id: -1 } },
    { collection: Collections.sprintSnapshots, keys: { board_ids: 1, kind: 1, taken_at: -1, _id: -1 } },
  ],
};
