import { BoardsOps, GroupsOps, ImportsOps, LeasesOps } from '@app/shared/contracts';
import { bindOps, type ServiceDefinition } from '@app/shared/domain';
import { Collections } from '@app/shared/store';
import {
  boardMembers, createBoard, ensureDefaultBoard, getBoard, listBoards, previewActions, previewCreateBoard, previewUpdateBoard, removeBoard,
  shareBoard, unshareBoard, updateBoard,
} from './handlers/boards.js';
import { createBoardTask } from './handlers/create-task.js';
import { createImport, getImport, previewImport } from './handlers/imports.js';
import { addMember, createGroup, getGroup, listGroups, removeMember } from './handlers/groups.js';
import { claimCard, completeLease, releaseLease, renewLease } from './handlers/leases.js';
import { addBoardMember, removeBoardMember, updateBoardMember } from './handlers/members.js';
import { moveCard } from './handlers/move.js';
import { shareSyncWork } from './share-sync.js';

/**
 * The boards service (docs/architecture.md §1: board lifecycle, columns and actions, share, groups, board task
 * create, card move, cards claimed under a lease: docs/boards.md "Claiming a card under a lease"),
 * queue group `boards`. Indexes: boards by owner, by shared group and by active sprint
 * (close-sprint repoints them); groups by member (every request loads the caller's groups), tasks
 * by board (the sharing update of a board's cards). In the background, every replica completes
 * sharing updates of cards whose share request died (`shareSyncWork`).
 */
export const boardsService: ServiceDefinition = {
  name: 'boards',
  bindings: (deps) => [
    ...bindOps(deps, BoardsOps, {
      create: createBoard,
      list: listBoards,
      get: getBoard,
      members: boardMembers,
      addMember: addBoardMember,
      updateMember: updateBoardMember,
      removeMember: removeBoardMember,
      update: updateBoard,
      remove: removeBoard,
      share: shareBoard,
      unshare: unshareBoard,
      previewActions,
      previewCreate: previewCreateBoard,
      previewUpdate: previewUpdateBoard,
      ensureDefault: ensureDefaultBoard,
      createTask: createBoardTask,
      move: moveCard,
    }),
    ...bindOps(deps, LeasesOps, { claim: claimCard, renew: renewLease, complete: completeLease, release: releaseLease }),
    ...bindOps(deps, GroupsOps, { create: createGroup, list: listGroups, get: getGroup, addMember, removeMember }),
    ...bindOps(deps, ImportsOps, { create: createImport, preview: previewImport, get: getImport }),
  ],
  indexes: [
    { collection: Collections.boards, keys: { owner_id: 1 }, name: 'boards_owner' },
    { collection: Collections.boards, keys: { groupId: 1 }, name: 'boards_group' },
    { collection: Collections.boards, keys: { activeSprintId: 1 }, name: 'boards_active_sprint' },
    { collection: Collections.groups, keys: { 'members.user_id': 1 }, name: 'groups_member' },
    { collection: Collections.tasks, keys: { boardId: 1 } },
    { collection: Collections.boardShareSync, keys: { updated_at: 1 }, name: 'board_share_sync_idle' },
    { collection: Collections.imports, keys: { owner_id: 1 }, name: 'import_jobs_owner' },
  ],
  background: shareSyncWork,
};
