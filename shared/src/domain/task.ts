import { randomFillSync } from 'node:crypto';
import type { Task, TaskLease } from '../contracts/tasks.js';
import { decodeMetadata } from '../store/keys.js';
import type { Doc } from '../store/port.js';

/** Group permission on a shared resource: read or read-write (docs/architecture.md §5). */
export type Permission = 'r' | 'rw';

/**
 * The lease a card is held under (docs/boards.md "Claiming a card under a lease"), stored on its
 * task document: written by a claim, moved forward by a renewal, removed by complete and release.
 * Live while `expires_at` (ISO UTC, compared as a string against the clock) is in the future; an
 * expired one stays until a claim takes the card over. The API object is `TaskLease` (without
 * `lease_seconds`).
 */
export interface LeaseDoc {
  id: string;
  /** User id of the claimer. */
  holder: string;
  /** Id of the access token the claim was made with, if any. */
  holder_token?: string;
  /** That token's name at the time of the claim. */
  holder_token_name?: string;
  board_id: string;
  column_id: string;
  claimed_at: string;
  expires_at: string;
  /** The length the claim asked for: a renewal without `lease_seconds` renews by as much. */
  lease_seconds: number;
}

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
  /** Time of the last check-in (ISO UTC); absent until the first one. */
  lastCheckedInAt?: string;
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
  /** 1 on create, +1 on every committed change; absent on older data, which counts as 1. */
  version?: number;
  /** Close outcome recorded on a sprint task by close-sprint (docs/architecture.md §8). */
  sprintClose?: Record<string, unknown>;
  /** The lease the card is claimed under, if any (live or expired). */
  lease?: LeaseDoc;
}

/** Which fields a list read returns: `full`, or `lite` without description, notes and share links. */
export type TaskView = 'full' | 'lite';

/**
 * Maps a stored task to the API object. `lite` omits `description` (absent, not empty: SPEC
 * "Task (card)"). Internal fields (`deleted`, `groupId`, `boardId`, `sprintClose`) never leave;
 * a lease is shown without its `lease_seconds`.
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
  if (doc.lastCheckedInAt !== undefined) t.lastCheckedInAt = doc.lastCheckedInAt;
  if (doc.assignee !== undefined) t.assignee = doc.assignee;
  if (doc.kickoff !== undefined) t.kickoff = doc.kickoff;
  if (doc.deadline !== undefined) t.deadline = doc.deadline;
  if (doc.derivedFromId !== undefined) t.derivedFromId = doc.derivedFromId;
  if (doc.linkedToIds.length > 0) t.linkedToIds = doc.linkedToIds;
  if (doc.resourceIds.length > 0) t.resourceIds = doc.resourceIds;
  if (doc.lease !== undefined) t.lease = leaseView(doc.lease);
  return t;
}

/** The API object of a stored lease (`TaskLease`): everything but `lease_seconds`. */
export function leaseView(lease: LeaseDoc): TaskLease {
  const { id, holder, holder_token, holder_token_name, board_id, column_id, claimed_at, expires_at } = lease;
  return {
    id, holder, ...(holder_token === undefined ? {} : { holder_token }), ...(holder_token_name === undefined ? {} : { holder_token_name }),
    board_id, column_id, claimed_at, expires_at,
  };
}

/** Random bytes drawn 4 KiB at a time (one `randomFillSync` per 409 ids, as `randomUUID` caches its entropy). */
const entropy = Buffer.alloc(4096);
let entropyAt = entropy.length;
const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));
let lastMs = -1;
/** `xxxxxxxx-xxxx-` of {@link lastMs}. */
let msPrefix = '';
let counter = 0;

/**
 * A new document id: a UUID version 7 (RFC 9562 §5.7; SPEC ids are UUIDs), lowercase
 * `xxxxxxxx-xxxx-7xxx-yxxx-xxxxxxxxxxxx`. The first 48 bits are the Unix time in ms, then a 12-bit
 * counter (method 1 of RFC 9562 §6.2: started at a random value below 2048 each millisecond,
 * +1 per id), then 62 random bits. Ids of one process therefore increase: the stores' `_id`
 * indexes take new documents at their end instead of at a random page (the embedded store's
 * sqlite journal dirties one index page per batch instead of one per document; docs/bench.md
 * "writes"). 62 random bits per id (73 counting the counter's random start), against 122 for
 * `randomUUID()`. When the clock goes back, or after 2,048+ ids in one millisecond, the ids still
 * increase (their time field then runs ahead of the clock until it catches up).
 */
export function timeOrderedId(): string {
  const nowMs = Date.now();
  if (entropyAt + 10 > entropy.length) {
    randomFillSync(entropy);
    entropyAt = 0;
  }
  const r = entropy;
  const o = entropyAt;
  entropyAt += 10;
  if (nowMs > lastMs || ++counter > 0xfff) {
    if (nowMs > lastMs) {
      lastMs = nowMs;
      counter = ((r[o]! << 8) | r[o + 1]!) & 0x7ff;
    } else {
      lastMs++;
      counter = 0;
    }
    const ms = lastMs.toString(16).padStart(12, '0');
    msPrefix = `${ms.slice(0, 8)}-${ms.slice(8)}-`;
  }
  return `${msPrefix}${(0x7000 | counter).toString(16)}-${HEX[0x80 | (r[o + 2]! & 0x3f)]}${HEX[r[o + 3]!]}-` +
    `${HEX[r[o + 4]!]}${HEX[r[o + 5]!]}${HEX[r[o + 6]!]}${HEX[r[o + 7]!]}${HEX[r[o + 8]!]}${HEX[r[o + 9]!]}`;
}
