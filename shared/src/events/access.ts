import { currentGrant } from '../bus/grant.js';
import type { TokenGrant } from '../contracts/tokens.js';
import { canReadBoard, canReadTask, loadPrincipal, type Principal } from '../domain/access.js';
import type { BoardDoc } from '../domain/board.js';
import type { TaskDoc } from '../domain/task.js';
import { Collections } from '../store/collections.js';
import type { DocumentStore } from '../store/port.js';
import type { EventEnvelope } from './envelope.js';

/** The sharing fields of a task or board as the access rules read them. */
type TaskAccess = Pick<TaskDoc, 'created_by' | 'groupId'> & { tags?: string[] };
type BoardAccess = Pick<BoardDoc, 'owner_id' | 'groupId'>;

/**
 * The current access fields of the tasks and boards a batch of events is about, read once per
 * batch (access is decided at delivery time, on the documents as they are now).
 * A task or board that no longer exists (hard-deleted) falls back to the snapshot in the event.
 */
export class AccessSnapshot {
  private constructor(
    private readonly tasks: Map<string, TaskAccess>,
    private readonly boards: Map<string, BoardAccess>,
  ) {}

  /** Reads the tasks and boards `events` name (two store reads at most). */
  static async load(store: DocumentStore, events: readonly EventEnvelope[]): Promise<AccessSnapshot> {
    const taskIds = [...new Set(events.flatMap((e) => (e.task_id ? [e.task_id] : [])))];
    const boardIds = [...new Set(events.flatMap((e) => (e.board_id ? [e.board_id] : [])))];
    const [tasks, boards] = await Promise.all([
      taskIds.length
        ? store.collection<TaskDoc>(Collections.tasks).find({ _id: { $in: taskIds } }, { projection: { _id: 1, created_by: 1, groupId: 1, tags: 1 } })
        : [],
      boardIds.length
        ? store.collection<BoardDoc>(Collections.boards).find({ _id: { $in: boardIds } }, { projection: { _id: 1, owner_id: 1, groupId: 1 } })
        : [],
    ]);
    return new AccessSnapshot(new Map(tasks.map((t) => [t._id, t])), new Map(boards.map((b) => [b._id, b])));
  }

  /**
   * True when `p` may read `e` (the access rules of docs/architecture.md §5 applied to events):
   * - an event about a task (`task_id`: task.*, card.moved, note.created, sprint.closed) needs the
   *   task readable now (owner or member of its group), also for `task.deleted`;
   * - an event about a board only (`board.*`) needs the board readable now;
   * - an event naming neither is seen by its actor only.
   */
  canRead(p: Principal, e: EventEnvelope): boolean {
    if (e.task_id) {
      const t = this.tasks.get(e.task_id) ?? snapshotTask(e);
      return t !== undefined && canReadTask(p, t);
    }
    if (e.board_id) {
      const b = this.boards.get(e.board_id) ?? snapshotBoard(e);
      return b !== undefined && canReadBoard(p, b);
    }
    return e.actor === p.userId;
  }
}

/** The task snapshot an event carries (API task: `created_by`; group fields are not in it). */
function snapshotTask(e: EventEnvelope): TaskAccess | undefined {
  const t = (e.data as Record<string, unknown>).task as { created_by?: unknown; tags?: unknown } | undefined;
  if (typeof t?.created_by !== 'string') return undefined;
  return Array.isArray(t.tags) ? { created_by: t.created_by, tags: t.tags as string[] } : { created_by: t.created_by };
}

/** The board snapshot an event carries (`board.*`: the API board with `owner_id`). */
function snapshotBoard(e: EventEnvelope): BoardAccess | undefined {
  const b = (e.data as Record<string, unknown>).board as { owner_id?: unknown } | undefined;
  return typeof b?.owner_id === 'string' ? { owner_id: b.owner_id } : undefined;
}

/**
 * The events of `events` user `userId` may see now, in order (reads the principal and the access
 * fields); `grant`, the access token the reader uses (default: the current request's), narrows it.
 */
export async function readableEvents(store: DocumentStore, userId: string, events: readonly EventEnvelope[], grant: TokenGrant | undefined = currentGrant()): Promise<EventEnvelope[]> {
  if (events.length === 0) return [];
  const [principal, access] = await Promise.all([loadPrincipal(store, userId, undefined, grant), AccessSnapshot.load(store, events)]);
  return events.filter((e) => access.canRead(principal, e));
}
