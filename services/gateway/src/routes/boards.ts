import {
  Board, BoardCreateBody, BoardList, BoardPathParams, BoardShareBody, BoardsOps, BoardTaskCreateBody, BoardTaskParams,
  BoardUpdateBody, CardMoveBody, CardMoveResult, Group, GroupCreateBody, GroupMemberBody, GroupMemberParams, GroupParams,
  GroupsOps, PreviewActionsBody, PreviewActionsResult,
} from '@app/shared/contracts';
import { Task } from '@app/shared/domain';
import { Type } from '@sinclair/typebox';
import { route, type RouteSpec } from './route.js';

const TARGET = '/api/v1/boards';
const LEGACY = '/api/v1/kanban/boards';
const GROUPS = '/api/v1/groups';
const live = { tag: 'boards', maturity: 'live' } as const;
const groups = { tag: 'groups', maturity: 'live' } as const;
/** The target path and its legacy twin (SPEC "Versioning": `/kanban/boards/*` → `/boards/*`). */
const at = (suffix: string) => ({ url: `${TARGET}${suffix}`, legacy: [{ url: `${LEGACY}${suffix}` }] });
const boardId = (params: Record<string, string>) => params.boardId!;

/**
 * Routes of the boards service (SPEC "Board lifecycle", "Board day-to-day"; DESIGN §5, §7, §9):
 * board lifecycle, sharing, preview-actions, card create and card move, each also at its legacy
 * `/api/v1/kanban/boards…` path; groups (DESIGN §5, target paths only). Every op input is
 * `{...body, ...path params}`: path parameters win over body fields.
 */
export const boardRoutes: RouteSpec[] = [
  route({
    ...live,
    ...at(''),
    method: 'POST',
    op: BoardsOps.create,
    input: (req) => req.body as BoardCreateBody,
    summary: 'Create a board (column ids backfilled, column actions materialized)',
    body: BoardCreateBody,
    response: Board,
    status: 201,
  }),
  route({
    ...live,
    ...at(''),
    method: 'GET',
    op: BoardsOps.list,
    input: () => ({}),
    summary: 'List the boards visible to the caller: owned and shared with its groups',
    response: BoardList,
  }),
  route({
    ...live,
    ...at('/preview-actions'),
    method: 'POST',
    op: BoardsOps.previewActions,
    input: (req) => req.body as PreviewActionsBody,
    summary: 'Preview the column actions a column query would materialize (read-only)',
    body: PreviewActionsBody,
    response: PreviewActionsResult,
  }),
  route({
    ...live,
    ...at('/:boardId'),
    method: 'GET',
    op: BoardsOps.get,
    input: (req) => ({ boardId: boardId(req.params) }),
    summary: 'Read one board with its column definitions and settings',
    params: BoardPathParams,
    response: Board,
  }),
  route({
    ...live,
    ...at('/:boardId'),
    method: 'PUT',
    op: BoardsOps.update,
    input: (req) => ({ ...(req.body as BoardUpdateBody), boardId: boardId(req.params) }),
    summary: 'Update a board (owner only): carried fields change; columns replace the whole list',
    params: BoardPathParams,
    body: BoardUpdateBody,
    response: Board,
  }),
  route({
    ...live,
    ...at('/:boardId'),
    method: 'DELETE',
    op: BoardsOps.remove,
    input: (req) => ({ boardId: boardId(req.params) }),
    summary: 'Delete a board (owner only); its tasks are kept',
    params: BoardPathParams,
    status: 204,
  }),
  route({
    ...live,
    ...at('/:boardId/share'),
    method: 'POST',
    op: BoardsOps.share,
    input: (req) => ({ ...(req.body as BoardShareBody), boardId: boardId(req.params) }),
    summary: 'Share a board with a group the caller belongs to (owner only)',
    params: BoardPathParams,
    body: BoardShareBody,
    response: Board,
  }),
  route({
    ...live,
    ...at('/:boardId/share'),
    method: 'DELETE',
    op: BoardsOps.unshare,
    input: (req) => ({ boardId: boardId(req.params) }),
    summary: 'Remove group sharing from a board (owner only)',
    params: BoardPathParams,
    response: Board,
  }),
  route({
    ...live,
    ...at('/:boardId/tasks'),
    method: 'POST',
    op: BoardsOps.createTask,
    input: (req) => ({ ...(req.body as BoardTaskCreateBody), boardId: boardId(req.params) }),
    summary: 'Create a card on a board (default_tags merged; column_id is Draft)',
    params: BoardPathParams,
    body: BoardTaskCreateBody,
    response: Task,
    status: 201,
  }),
  route({
    ...live,
    ...at('/:boardId/tasks/:taskId/move'),
    method: 'POST',
    op: BoardsOps.move,
    input: (req) => ({ ...(req.body as CardMoveBody), boardId: boardId(req.params), taskId: req.params.taskId! }),
    summary: 'Move a card between columns: merge(exit(from), enter(to)) in one conditional write',
    params: BoardTaskParams,
    body: CardMoveBody,
    response: CardMoveResult,
  }),
  route({
    ...groups,
    method: 'POST',
    url: GROUPS,
    op: GroupsOps.create,
    input: (req) => req.body as GroupCreateBody,
    summary: 'Create a group; the caller becomes its owner',
    body: GroupCreateBody,
    response: Group,
    status: 201,
  }),
  route({
    ...groups,
    method: 'GET',
    url: GROUPS,
    op: GroupsOps.list,
    input: () => ({}),
    summary: "List the caller's groups",
    response: Type.Array(Group),
  }),
  route({
    ...groups,
    method: 'GET',
    url: `${GROUPS}/:groupId`,
    op: GroupsOps.get,
    input: (req) => ({ groupId: req.params.groupId! }),
    summary: 'Read a group (members only)',
    params: GroupParams,
    response: Group,
  }),
  route({
    ...groups,
    method: 'POST',
    url: `${GROUPS}/:groupId/members`,
    op: GroupsOps.addMember,
    input: (req) => ({ ...(req.body as GroupMemberBody), groupId: req.params.groupId! }),
    summary: "Add a member or change a member's role (owner or admin only)",
    params: GroupParams,
    body: GroupMemberBody,
    response: Group,
  }),
  route({
    ...groups,
    method: 'DELETE',
    url: `${GROUPS}/:groupId/members/:userId`,
    op: GroupsOps.removeMember,
    input: (req) => ({ groupId: req.params.groupId!, userId: req.params.userId! }),
    summary: 'Remove a member (owner or admin), or leave a group',
    params: GroupMemberParams,
    response: Group,
  }),
];
