import { Type, type Static, type TProperties } from '@sinclair/typebox';
import { op } from './op.js';
import { busRequest, MetadataObject, MetadataValue, PathId, StringEnum, Tags, Timestamp } from './schemas.js';
import { Task, TaskCreateFields } from './tasks.js';

/**
 * Contracts of the boards service (docs/boards.md: board, columns, applied actions, board
 * endpoints; docs/architecture.md §5, §7, §9): board lifecycle, columns and their actions, sharing, groups, card
 * create on a board and card move.
 *
 * HTTP body schemas are exported for the gateway's route rows; they carry
 * `additionalProperties: false` (an unknown field: 400 on the target paths, dropped on the legacy
 * ones, docs/compat.md). Bus requests are the path
 * parameters plus the body's properties. All schemas are Swagger-2.0-safe (no unions, enums or
 * nullables; string enums through `StringEnum`). Semantic rules (column ids, column queries, action
 * shapes) live in `domain/columns.ts`; wrong JSON types are rejected here.
 */

/** Path parameter `boardId`. Any string: an unknown id is a 404 `BOARD_NOT_FOUND`, not a 400. */
export const BoardPathParams = Type.Object({ boardId: PathId });
/** Path parameters of the card move. */
export const BoardTaskParams = Type.Object({ boardId: PathId, taskId: PathId });
/** Path parameter `groupId`. */
export const GroupParams = Type.Object({ groupId: PathId });
/** Path parameters of the member removal. */
export const GroupMemberParams = Type.Object({ groupId: PathId, userId: PathId });
/** Path parameters of one of a board's members (`/boards/{boardId}/members/{userId}`). */
export const BoardMemberParams = Type.Object({ boardId: PathId, userId: PathId });

const Metadata = MetadataObject('free-form settings; keys may contain dots');
const BoardType = StringEnum(['private', 'shared']);
const Permission = StringEnum(['r', 'rw'], { description: '`r` read, `rw` read-write' });
const ColumnId = Type.String({
  pattern: '^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$',
  description: '1..64 letters, digits, `.`, `_`, `-`; kept stable across writes',
});

/**
 * One enter or exit action of a column as returned: ud's `ColumnActionDTO`, whose `value` is a
 * string (docs/architecture.md §7; the stored `ColumnAction` is in query/materialize.ts, `actionView` maps it).
 * A tag action carries one tag. A `set` of a metadata value that is not a string sends its text
 * (`3`, `true`, JSON for the rest) and says which in `value_type`, so a client that sends the
 * action back unchanged keeps the type (docs/boards.md).
 */
export const ColumnAction = Type.Object({
  trigger: StringEnum(['enter', 'exit']),
  field: Type.String({ description: '`status`, `assignee`, `path`, `kickoff`, `deadline`, `tags` or `metadata.<key>`' }),
  operation: StringEnum(['set', 'add', 'remove', 'clear'], { description: '`add`/`remove` only on `tags`; `clear` has no value' }),
  value: Type.Optional(Type.String({ description: '`set`: the value as text; `add`/`remove`: one tag' })),
  value_type: Type.Optional(StringEnum(['number', 'boolean', 'json', 'function'], { description: 'present when a `set` value is not a string: how to read `value` (`function`: `me()`, the user who moves the card)' })),
  source: StringEnum(['query', 'manual'], { description: '`query` actions are regenerated from the column query on every board write' }),
});
export type ColumnAction = Static<typeof ColumnAction>;

/** An action as a client sends it; `source` defaults to `manual`, and sent `query` actions are replaced. */
export const ColumnActionInput = Type.Object(
  {
    ...ColumnAction.properties,
    value: Type.Optional(MetadataValue('`set`: the value (within the metadata limits); `add`/`remove`: a tag or an array of tags (stored one tag per action)')),
    source: Type.Optional(ColumnAction.properties.source),
  },
  { additionalProperties: false },
);
export type ColumnActionInput = Static<typeof ColumnActionInput>;

/**
 * What a move or card create into a column at its `wip_limit` does (docs/boards.md "WIP limits"):
 * `warn` (the default) writes and reports the column over its limit; `block` refuses with 409
 * `WIP_LIMIT_REACHED`.
 */
const WipPolicy = StringEnum(['warn', 'block'], { description: '`warn` (default): the move succeeds and reports the column over its limit; `block`: a move or card create into a full column is 409 `WIP_LIMIT_REACHED`' });

/** A column's WIP state as a move reports it: the count includes the moved card. */
export const WipState = Type.Object({
  column_id: Type.String(),
  wip_limit: Type.Integer({ minimum: 1 }),
  count: Type.Integer({ minimum: 0, description: 'cards in the column with the moved or created card' }),
  over_limit: Type.Boolean({ description: 'count > wip_limit' }),
});
export type WipState = Static<typeof WipState>;

/** A column definition as returned (docs/boards.md "Columns"; docs/architecture.md §7). */
export const Column = Type.Object({
  id: Type.String(),
  name: Type.String(),
  query: Type.String({ description: 'column query (query language); may be empty or only an ORDER BY' }),
  actions: Type.Array(ColumnAction),
  wip_limit: Type.Optional(Type.Integer({ minimum: 1 })),
  wip_policy: Type.Optional(WipPolicy),
  order: Type.Integer({ minimum: 0, description: 'the column\'s 0-based position on the board (reads only; the list order is the board order)' }),
});

/** A column as a client sends it: the id is backfilled when missing (`col-<slug of name>`). */
export const ColumnInput = Type.Object(
  {
    id: Type.Optional(ColumnId),
    name: Type.String({ minLength: 1, maxLength: 200 }),
    query: Type.Optional(Type.String({ maxLength: 10_000, description: 'default empty (every task in the board scope)' })),
    actions: Type.Optional(Type.Array(ColumnActionInput, { description: 'manual actions; `query` actions are regenerated' })),
    wip_limit: Type.Optional(Type.Integer({ minimum: 1, description: 'work-in-progress limit: the most cards the column should hold (counted like the board summary); the summary flags columns over it' })),
    wip_policy: Type.Optional(WipPolicy),
    order: Type.Optional(Type.Integer({ minimum: 0, description: 'accepted and ignored (a column read sent back): the list order is the board order' })),
  },
  { additionalProperties: false },
);
export type ColumnInput = Static<typeof ColumnInput>;

/** The board object (docs/boards.md "Shapes"; docs/architecture.md §9: returned unwrapped). */
export const Board = Type.Object({
  id: Type.String(),
  name: Type.String(),
  board_type: BoardType,
  columns: Type.Array(Column),
  default_tags: Type.Array(Type.String()),
  metadata: MetadataObject(),
  activeSprintId: Type.Optional(Type.String({ description: 'the board\'s running sprint; absent when none' })),
  owner_id: Type.String(),
  group_id: Type.Optional(Type.String({ description: 'the group the board is shared with' })),
  permission: Type.Optional(Permission),
  group_permission: Type.Optional(Permission),
  created_at: Timestamp,
  created_by: Type.String(),
  updated_at: Timestamp,
  updated_by: Type.String(),
  is_active: Type.Boolean({ description: 'always true: a deleted board is gone, not inactive' }),
  version: Type.Integer({ minimum: 1, description: '1 on create, +1 on every committed change (columns, sharing, sprint pointer); the ETag' }),
  is_owner: Type.Boolean(),
  cards_sharing: Type.Optional(StringEnum(['pending'], {
    description: 'single-board reads and share / unshare answers: "pending" while the board\'s cards are still being given its sharing in the background; absent once every card carries it (docs/boards.md "Sharing a board with many cards"). Lists never carry it',
  })),
});
export type Board = Static<typeof Board>;

/** `GET /boards`: the caller's own boards and the boards shared with its groups (not owned), each oldest first. */
export const BoardList = Type.Object({ owned_boards: Type.Array(Board), shared_boards: Type.Array(Board) });

const BoardWritable = {
  name: Type.String({ minLength: 1, maxLength: 200 }),
  columns: Type.Array(ColumnInput, { maxItems: 100 }),
  default_tags: Tags,
  metadata: Metadata,
} satisfies TProperties;

/** Body of `POST /boards`. */
export const BoardCreateBody = Type.Object(
  {
    name: BoardWritable.name,
    board_type: BoardType,
    columns: Type.Optional(BoardWritable.columns),
    default_tags: Type.Optional(BoardWritable.default_tags),
    metadata: Type.Optional(BoardWritable.metadata),
  },
  { additionalProperties: false },
);
export type BoardCreateBody = Static<typeof BoardCreateBody>;

/** Body of `PUT /boards/{id}`: only carried fields change; `columns` replaces the whole list. */
export const BoardUpdateBody = Type.Object(
  {
    name: Type.Optional(BoardWritable.name),
    columns: Type.Optional(BoardWritable.columns),
    default_tags: Type.Optional(BoardWritable.default_tags),
    metadata: Type.Optional(MetadataObject('replaces the whole board metadata')),
    activeSprintId: Type.Optional(Type.String({ description: 'id of a sprint task the caller can read; `""` clears it' })),
  },
  { additionalProperties: false },
);
export type BoardUpdateBody = Static<typeof BoardUpdateBody>;

/** Query string of board create and update: `dry_run=true` computes the board and writes nothing. */
export const BoardDryRunQuery = Type.Object(
  { dry_run: Type.Optional(Type.Boolean({ default: false, description: 'true: answer 200 `{dry_run, board}` with the board as it would be; nothing written' })) },
  { additionalProperties: false },
);

/** Reply of a dry run of board create or update (Swagger `BoardPreviewResponse`): the board as the write would leave it. */
export const BoardPreview = Type.Object({
  dry_run: Type.Boolean({ description: 'always true' }),
  board: Board,
});
export type BoardPreview = Static<typeof BoardPreview>;

/** Body of `POST /boards/{id}/share`. */
export const BoardShareBody = Type.Object(
  { group_id: Type.String({ minLength: 1 }), permission: Permission },
  { additionalProperties: false },
);
export type BoardShareBody = Static<typeof BoardShareBody>;

/** Body of `POST /boards/preview-actions`. */
export const PreviewActionsBody = Type.Object(
  {
    query: Type.String({ maxLength: 10_000, description: 'a column query' }),
  },
  { additionalProperties: false },
);
export type PreviewActionsBody = Static<typeof PreviewActionsBody>;
/** Reply of preview-actions: the `source: query` actions the column query materializes (default_tags never give actions). */
export const PreviewActionsResult = Type.Object({ actions: Type.Array(ColumnAction) });

/** Body of `POST /boards/{boardId}/tasks` (docs/boards.md "Card create on a board"). */
export const BoardTaskCreateBody = Type.Object(
  {
    ...TaskCreateFields,
    column_id: Type.Optional(
      Type.String({ minLength: 1, description: 'Draft: initial values from the column\'s enter actions (sent fields win) and `app.sprint` from the active sprint' }),
    ),
  },
  { additionalProperties: false },
);
export type BoardTaskCreateBody = Static<typeof BoardTaskCreateBody>;

/** Body of `POST /boards/{boardId}/tasks/{taskId}/move`. */
export const CardMoveBody = Type.Object(
  {
    from_column_id: Type.String({ minLength: 1, description: 'the column the caller believes the card is in; verified' }),
    to_column_id: Type.String({ minLength: 1 }),
    dry_run: Type.Optional(Type.Boolean({ default: false, description: 'compute and verify, write nothing' })),
  },
  { additionalProperties: false },
);
export type CardMoveBody = Static<typeof CardMoveBody>;

/**
 * One applied action of a move (docs/boards.md "Card move"): `set` (`field`, `from`, `to`; a cleared
 * field has no `to`), `add_tags` or `remove_tags` (`value`). Only actual changes are listed.
 */
export const AppliedAction = Type.Object({
  op: StringEnum(['set', 'add_tags', 'remove_tags']),
  field: Type.Optional(Type.String()),
  from: Type.Optional(Type.Unknown()),
  to: Type.Optional(Type.Unknown()),
  value: Type.Optional(Type.Array(Type.String())),
});
export type AppliedAction = Static<typeof AppliedAction>;

/** Reply of the move (same with `dry_run`). */
export const CardMoveResult = Type.Object({
  task: Type.Object({
    id: Type.String(), title: Type.String(), status: Type.String(), tags: Type.Array(Type.String()),
    version: Type.Integer({ minimum: 1, description: 'the card\'s version after the move (its ETag)' }),
  }),
  applied_actions: Type.Array(AppliedAction),
  wip: Type.Optional(WipState),
});
export type CardMoveResult = Static<typeof CardMoveResult>;

/** A group (docs/architecture.md §5) with its members; roles `owner`, `admin`, `member`. */
export const Group = Type.Object({
  id: Type.String(),
  name: Type.String(),
  owner_id: Type.String(),
  members: Type.Array(Type.Object({ user_id: Type.String(), role: StringEnum(['owner', 'admin', 'member', 'reader'], { description: '`reader`: reads what is shared with the group, never writes it (docs/boards.md "Members")' }) })),
  created_at: Timestamp,
});
export type Group = Static<typeof Group>;

/** Body of `POST /groups`. */
export const GroupCreateBody = Type.Object({ name: Type.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false });
export type GroupCreateBody = Static<typeof GroupCreateBody>;

/** Body of `POST /groups/{groupId}/members`: adds a member, or changes the role of an existing one. */
export const GroupMemberBody = Type.Object(
  { user_id: Type.String({ minLength: 1 }), role: Type.Optional(StringEnum(['admin', 'member'], { default: 'member' })) },
  { additionalProperties: false },
);
export type GroupMemberBody = Static<typeof GroupMemberBody>;

/** One of a board's people (`GET /boards/{id}/members`): a user id, its user name and what it may do on the board. */
export const BoardMember = Type.Object({
  id: Type.String(),
  username: Type.String(),
  permission: Type.Optional(StringEnum(['owner', 'r', 'rw'], { description: '`owner`, or `r` / `rw` through the board\'s group (docs/boards.md "Members")' })),
});
export type BoardMember = Static<typeof BoardMember>;

/** Body of `POST /boards/{id}/members`: invite a user by name with a permission (owner only). */
export const BoardMemberBody = Type.Object(
  { username: Type.String({ minLength: 1, maxLength: 200 }), permission: Permission },
  { additionalProperties: false },
);
export type BoardMemberBody = Static<typeof BoardMemberBody>;

/** Body of `PATCH /boards/{id}/members/{userId}`: a member's new permission. */
export const BoardMemberPatchBody = Type.Object({ permission: Permission }, { additionalProperties: false });
export type BoardMemberPatchBody = Static<typeof BoardMemberPatchBody>;
/** Reply of `GET /boards/{id}/members`: the owner first, then the members of the board's group in group order. */
export const BoardMembers = Type.Array(BoardMember);

const Empty = Type.Object({});
/** The version of a board reply (its ETag). */
const boardVersion = (b: Board) => b.version;

/** The boards service's bus API, subjects `boards.<verb>`; the caller's user id travels in the bus meta. */
export const BoardsOps = {
  create: op({ subject: 'boards.create', request: busRequest(BoardCreateBody.properties), response: Board, versionOf: boardVersion }),
  list: op({ subject: 'boards.list', request: Empty, response: BoardList }),
  get: op({ subject: 'boards.get', request: BoardPathParams, response: Board, versionOf: boardVersion }),
  /** Owner only (403 `FORBIDDEN` otherwise). */
  update: op({ subject: 'boards.update', request: busRequest(BoardPathParams.properties, BoardUpdateBody.properties), response: Board, versionOf: boardVersion }),
  /** Owner only; the board's tasks are kept. Replies `null` (HTTP 204). */
  remove: op({ subject: 'boards.remove', request: BoardPathParams, response: Type.Null() }),
  /** Owner only; the caller must belong to the group (403 `NOT_GROUP_MEMBER`). */
  share: op({ subject: 'boards.share', request: busRequest(BoardPathParams.properties, BoardShareBody.properties), response: Board, versionOf: boardVersion }),
  /** Owner only; removes the group sharing (the board stays `shared`, visible to its owner only). */
  unshare: op({ subject: 'boards.unshare', request: BoardPathParams, response: Board, versionOf: boardVersion }),
  /** The board `create` would make (same checks and errors), written nothing (`?dry_run=true`). */
  previewCreate: op({ subject: 'boards.previewCreate', request: busRequest(BoardCreateBody.properties), response: BoardPreview }),
  /** The board `update` would leave (same checks, owner only, If-Match), written nothing (`?dry_run=true`). */
  previewUpdate: op({ subject: 'boards.previewUpdate', request: busRequest(BoardPathParams.properties, BoardUpdateBody.properties), response: BoardPreview }),
  /** The caller's default board, created on first call with the default columns; one per user. */
  ensureDefault: op({ subject: 'boards.ensureDefault', request: Empty, response: Board, versionOf: boardVersion }),
  /** The board's people: its owner and the members of its group; readers of the board only (404 `BOARD_NOT_FOUND`). */
  members: op({ subject: 'boards.members', request: BoardPathParams, response: BoardMembers }),
  /** Owner only (403 `FORBIDDEN`): adds a user by name to the board's group (made on first use) as `r` or `rw`; unknown name → 404 `USER_NOT_FOUND`. */
  addMember: op({ subject: 'boards.addMember', request: busRequest(BoardPathParams.properties, BoardMemberBody.properties), response: BoardMembers }),
  /** Owner only: changes a member's permission; not a member → 404 `USER_NOT_FOUND`. */
  updateMember: op({ subject: 'boards.updateMember', request: busRequest(BoardMemberParams.properties, BoardMemberPatchBody.properties), response: BoardMembers }),
  /** Owner only: removes a member from the board's group (a no-op for a user who is none). */
  removeMember: op({ subject: 'boards.removeMember', request: BoardMemberParams, response: BoardMembers }),
  /** Read-only: the actions a column query would materialize (the column query alone). */
  previewActions: op({ subject: 'boards.previewActions', request: busRequest(PreviewActionsBody.properties), response: PreviewActionsResult }),
  /** Card create on a board: board write access; default_tags merged; shared board's group stamped. */
  createTask: op({ subject: 'boards.createTask', request: busRequest(BoardPathParams.properties, BoardTaskCreateBody.properties), response: Task, versionOf: (t) => t.version }),
  /** Card move (docs/architecture.md §7): 404 column/task, 403, 409 `KANBAN_TASK_NOT_IN_SOURCE_COLUMN`, 422 `KANBAN_TARGET_COLUMN_UNREACHABLE`. */
  move: op({ subject: 'boards.move', request: busRequest(BoardTaskParams.properties, CardMoveBody.properties), response: CardMoveResult, versionOf: (r) => r.task.version }),
} as const;

/** The groups part of the boards service, subjects `groups.<verb>` (docs/architecture.md §5). */
export const GroupsOps = {
  create: op({ subject: 'groups.create', request: busRequest(GroupCreateBody.properties), response: Group }),
  /** The caller's groups, oldest first. */
  list: op({ subject: 'groups.list', request: Empty, response: Type.Array(Group) }),
  /** Members only (404 `GROUP_NOT_FOUND` otherwise). */
  get: op({ subject: 'groups.get', request: GroupParams, response: Group }),
  /** Owner or admin only (403 `FORBIDDEN`); unknown user → 404 `USER_NOT_FOUND`. */
  addMember: op({ subject: 'groups.addMember', request: busRequest(GroupParams.properties, GroupMemberBody.properties), response: Group }),
  /** Owner or admin, or a member leaving; the owner cannot be removed. */
  removeMember: op({ subject: 'groups.removeMember', request: GroupMemberParams, response: Group }),
} as const;
