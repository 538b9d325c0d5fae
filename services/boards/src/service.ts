import { bind } from '@app/shared/bus';
import { BoardsOps, GroupsOps } from '@app/shared/contracts';
import type { ServiceDefinition } from '@app/shared/domain';
import { Collections } from '@app/shared/store';
import { createBoard, getBoard, listBoards, previewActions, removeBoard, shareBoard, unshareBoard, updateBoard } from './handlers/boards.js';
import { createBoardTask } from './handlers/create-task.js';
import { addMember, createGroup, getGroup, listGroups, removeMember } from './handlers/groups.js';
import { moveCard } from './handlers/move.js';

/**
 * The boards service (DESIGN §1: board lifecycle, columns and actions, share, groups, board task
 * create, card move), queue group `boards`. Indexes: boards by owner, by shared group and by
 * active sprint (close-sprint repoints them); groups by member (every request loads the caller's
 * groups).
 */
export const boardsService: ServiceDefinition = {
  name: 'boards',
  bindings: (deps) => [
    bind(BoardsOps.create, createBoard(deps)),
    bind(BoardsOps.list, listBoards(deps)),
    bind(BoardsOps.get, getBoard(deps)),
    bind(BoardsOps.update, updateBoard(deps)),
    bind(BoardsOps.remove, removeBoard(deps)),
    bind(BoardsOps.share, shareBoard(deps)),
    bind(BoardsOps.unshare, unshareBoard(deps)),
    bind(BoardsOps.previewActions, previewActions()),
    bind(BoardsOps.createTask, createBoardTask(deps)),
    bind(BoardsOps.move, moveCard(deps)),
    bind(GroupsOps.create, createGroup(deps)),
    bind(GroupsOps.list, listGroups(deps)),
    bind(GroupsOps.get, getGroup(deps)),
    bind(GroupsOps.addMember, addMember(deps)),
    bind(GroupsOps.removeMember, removeMember(deps)),
  ],
  indexes: [
    { collection: Collections.boards, keys: { owner_id: 1 }, name: 'boards_owner' },
    { collection: Collections.boards, keys: { groupId: 1 }, name: 'boards_group' },
    { collection: Collections.boards, keys: { activeSprintId: 1 }, name: 'boards_active_sprint' },
    { collection: Collections.groups, keys: { 'members.user_id': 1 }, name: 'groups_member' },
  ],
};
