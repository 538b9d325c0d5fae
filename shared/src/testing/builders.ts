import { randomUUID } from 'node:crypto';
import type { GroupDoc } from '../domain/access.js';
import type { BoardDoc } from '../domain/board.js';
import type { TaskDoc } from '../domain/task.js';
import { Collections } from '../store/collections.js';
import { encodeMetadata } from '../store/keys.js';
import type { DocumentStore } from '../store/port.js';

/*
 * Builders of stored documents, for tests that set up state straight in the store (without the
 * owning service). Each takes the fields to override; the rest are plain defaults.
 */

/** The default creation instant of built documents. */
export const BUILT_AT = '2026-01-01T00:00:00.000Z';
/** The default owner (`created_by`, `owner_id`) of built documents. */
export const BUILDER = 'user-builder';

/**
 * Fields of {@link aTask}: any `TaskDoc` field, with `metadata` in API keys (`app.sprint`; escaped
 * here), plus `owner` (sets `created_by` and `updated_by`) and `at` (sets `created_at` and `updated_at`).
 */
export type TaskFields = Partial<Omit<TaskDoc, 'metadata'>> & { metadata?: Record<string, unknown>; owner?: string; at?: string };

/** A live stored task: todo, no tags, empty description and path, fresh UUID, owned by {@link BUILDER}. */
export function aTask(fields: TaskFields = {}): TaskDoc {
  const { metadata, owner = BUILDER, at = BUILT_AT, ...rest } = fields;
  return {
    _id: randomUUID(),
    title: 'a task',
    description: '',
    status: 'todo',
    path: '',
    tags: [],
    checkInCount: 0,
    created_at: at,
    created_by: owner,
    updated_at: at,
    updated_by: owner,
    linkedToIds: [],
    resourceIds: [],
    deleted: false,
    ...rest,
    metadata: encodeMetadata(metadata),
  };
}

/** A stored private board without columns, owned by {@link BUILDER}; `owner` sets all three owner fields. */
export function aBoard(fields: Partial<BoardDoc> & { owner?: string } = {}): BoardDoc {
  const { owner = BUILDER, ...rest } = fields;
  return {
    _id: randomUUID(),
    name: 'a board',
    board_type: 'private',
    owner_id: owner,
    columns: [],
    default_tags: [],
    metadata: {},
    created_at: BUILT_AT,
    created_by: owner,
    updated_at: BUILT_AT,
    updated_by: owner,
    ...rest,
  };
}

/** A stored group: `owner` (role `owner`) first, then `members` (role `member`). */
export function aGroup(owner: string, members: readonly string[] = [], fields: Partial<GroupDoc> = {}): GroupDoc {
  return {
    _id: randomUUID(),
    name: 'a group',
    owner_id: owner,
    members: [{ user_id: owner, role: 'owner' }, ...members.map((user_id) => ({ user_id, role: 'member' as const }))],
    created_at: BUILT_AT,
    ...fields,
  };
}

/** Inserts built documents straight into their collections (empty lists are skipped). */
export async function insert(store: DocumentStore, docs: { tasks?: TaskDoc[]; boards?: BoardDoc[]; groups?: GroupDoc[] }): Promise<void> {
  if (docs.tasks?.length) await store.collection<TaskDoc>(Collections.tasks).insertMany(docs.tasks);
  if (docs.boards?.length) await store.collection<BoardDoc>(Collections.boards).insertMany(docs.boards);
  if (docs.groups?.length) await store.collection<GroupDoc>(Collections.groups).insertMany(docs.groups);
}
