import { Type, type Static } from '@sinclair/typebox';
import { decodeMetadata } from '../store/keys.js';
import type { Doc } from '../store/port.js';

/** Maximum title length in characters (issue 2). */
export const TITLE_MAX = 500;
/** Maximum description length in characters. */
export const DESCRIPTION_MAX = 200_000;

/** Group permission on a shared resource: read or read-write (SPEC "Other shapes"). */
export type Permission = 'r' | 'rw';

/**
 * A task as stored in the `tasks` collection. Dates are ISO 8601 UTC strings (`toISOString()`),
 * which sort and compare correctly as strings on both backends. `metadata` keys are escaped
 * (see `store/keys.ts`). `deleted` is always present so the live filter is an equality.
 */
export interface TaskDoc extends Doc {
  _id: string;
  title: string;
  description: string;
  status: string;
  path: string;
  tags: string[];
  checkInCount: number;
  metadata: Record<string, unknown>;
  created_at: string;
  created_by: string;
  updated_at: string;
  updated_by: string;
  assignee?: string;
  kickoff?: string;
  deadline?: string;
  derivedFromId?: string;
  linkedToIds: string[];
  resourceIds: string[];
  /** Group that shares the task (tasks created on a shared board take the board's group). */
  groupId?: string;
  groupPermission?: Permission;
  /** Board the task was created on, if any. */
  boardId?: string;
  deleted: boolean;
  deleted_at?: string;
  /** 1 on create, +1 on every committed change (issue 11); absent on older data, which counts as 1. */
  version?: number;
  /** Close outcome recorded on a sprint task by close-sprint (DESIGN §8). */
  sprintClose?: Record<string, unknown>;
}

/** The task object of the API (SPEC "Task (card)"). Cleared optional fields are absent. */
export const Task = Type.Object(
  {
    id: Type.String(),
    title: Type.String(),
    description: Type.Optional(Type.String()),
    status: Type.String(),
    path: Type.String(),
    tags: Type.Array(Type.String()),
    checkInCount: Type.Integer(),
    metadata: Type.Object({}, { additionalProperties: true }),
    created_at: Type.String({ format: 'date-time' }),
    created_by: Type.String(),
    updated_at: Type.String({ format: 'date-time' }),
    updated_by: Type.String(),
    version: Type.Integer({ minimum: 1, description: '1 on create, +1 on every committed change; the ETag' }),
    assignee: Type.Optional(Type.String()),
    kickoff: Type.Optional(Type.String({ format: 'date-time' })),
    deadline: Type.Optional(Type.String({ format: 'date-time' })),
    derivedFromId: Type.Optional(Type.String()),
    linkedToIds: Type.Optional(Type.Array(Type.String())),
    resourceIds: Type.Optional(Type.Array(Type.String())),
  },
  { $id: 'Task', additionalProperties: true },
);
export type Task = Static<typeof Task>;

/** Which fields a list read returns: `full`, or `lite` without description, notes and share links. */
export type TaskView = 'full' | 'lite';

/**
 * Maps a stored task to the API object. `lite` omits `description` (absent, not empty: SPEC
 * "Task (card)"). Internal fields (`deleted`, `groupId`, `boardId`, `sprintClose`) never leave.
 */
export function toTask(doc: TaskDoc, view: TaskView = 'full'): Task {
  const t: Task = {
    id: doc._id,
    title: doc.title,
    status: doc.status,
    path: doc.path,
    tags: doc.tags,
    checkInCount: doc.checkInCount,
    metadata: decodeMetadata(doc.metadata),
    created_at: doc.created_at,
    created_by: doc.created_by,
    updated_at: doc.updated_at,
    updated_by: doc.updated_by,
    version: doc.version ?? 1,
  };
  if (view === 'full') t.description = doc.description;
  if (doc.assignee !== undefined) t.assignee = doc.assignee;
  if (doc.kickoff !== undefined) t.kickoff = doc.kickoff;
  if (doc.deadline !== undefined) t.deadline = doc.deadline;
  if (doc.derivedFromId !== undefined) t.derivedFromId = doc.derivedFromId;
  if (doc.linkedToIds.length > 0) t.linkedToIds = doc.linkedToIds;
  if (doc.resourceIds.length > 0) t.resourceIds = doc.resourceIds;
  return t;
}
