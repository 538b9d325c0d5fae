import type { EventEnvelope, FlowSnapshotResult } from '@app/shared/contracts';
import { boardScopeFilter, compileColumn, loadPrincipal, type BoardDoc, type Principal, type TaskDoc } from '@app/shared/domain';
import { AppError } from '@app/shared/errors';
import { Collections, escapeKey, metadataPath, type Collection, type Doc, type DocumentStore } from '@app/shared/store';
import { dayOf, type CardMoveDoc, type FlowMove } from './reports.js';

/*
 * The flow history (docs/flow.md): each card's moves on each board, recorded from the numbered
 * `card.moved` events as they happen (the feed keeps only days, this keeps the history), and one
 * snapshot per board per UTC day of every column's count and points.
 */

/** A board's daily snapshot as stored in `flow_snapshots` (`_id` = `<boardId>:<day>`). */
export interface FlowSnapshotDoc extends Doc {
  _id: string;
  board_id: string;
  day: string;
  taken_at: string;
  columns: FlowSnapshotResult['columns'];
  /** When the TTL index removes it (ISO 8601: `FLOW_RETENTION_DAYS` after it was taken). */
  expires_at: string;
}

/** The `card_moves` collection. */
export function cardMovesOf(store: DocumentStore): Collection<CardMoveDoc> {
  return store.collection<CardMoveDoc>(Collections.cardMoves);
}

/** The `flow_snapshots` collection. */
export function snapshotsOf(store: DocumentStore): Collection<FlowSnapshotDoc> {
  return store.collection<FlowSnapshotDoc>(Collections.flowSnapshots);
}

/** A record's write: durable with the cursor's write that follows it ({@link recordFlow}). */
const LAZY = { awaitDurable: false } as const;

/**
 * Records what `events` (numbered, in `seq` order) change in the flow history: a `card.moved` is
 * one move record (`_id` = `<boardId>:<taskId>:<seq>`, with the task's `created_at`);
 * `task.deleted` / `task.restored` mark the card's records. A move costs one small insert
 * whatever the card's history, and a replay after a crash or a second replica reading the same
 * events changes nothing (the same `_id` is a conflict, skipped). The records are written without
 * waiting for their own journal sync (`awaitDurable: false`): the caller's durable cursor write
 * after them covers them (the journal syncs in order), and a crash before it replays them.
 */
export async function recordFlow(store: DocumentStore, events: readonly EventEnvelope[]): Promise<void> {
  const moves = cardMovesOf(store);
  for (const e of events) {
    if (e.type === 'card.moved' && e.board_id !== undefined && e.task_id !== undefined) {
      const data = e.data as { from_column_id?: string; to_column_id?: string; task?: { created_at?: string } };
      if (typeof data.from_column_id !== 'string' || typeof data.to_column_id !== 'string') continue;
      const doc: CardMoveDoc = {
        _id: `${e.board_id}:${e.task_id}:${e.seq}`, board_id: e.board_id, task_id: e.task_id, created_at: data.task?.created_at ?? e.occurred_at,
        from: data.from_column_id, to: data.to_column_id, at: e.occurred_at, seq: e.seq,
      };
      try {
        await moves.insertOne(doc, LAZY);
      } catch (err) {
        if (!(err instanceof AppError && err.code === 'CONFLICT')) throw err; // recorded before
      }
    } else if ((e.type === 'task.deleted' || e.type === 'task.restored') && e.task_id !== undefined) {
      await moves.updateMany({ task_id: e.task_id }, e.type === 'task.deleted' ? { $set: { deleted: true } } : { $unset: { deleted: '' } });
    }
  }
}

/** A card history in the earlier layout (`card_flow`: one document per board and card). */
interface LegacyCardFlowDoc extends Doc {
  _id: string;
  board_id: string;
  task_id: string;
  created_at: string;
  moves: FlowMove[];
  deleted?: boolean;
}

/**
 * Moves the card histories of the earlier layout (`card_flow`) into move records, 200 at a time,
 * each document removed once its moves are written (a second replica doing the same meets
 * conflicts, skipped). Returns how many documents it moved.
 */
export async function migrateCardFlow(store: DocumentStore): Promise<number> {
  const legacy = store.collection<LegacyCardFlowDoc>(Collections.cardFlow);
  const moves = cardMovesOf(store);
  let moved = 0;
  for (;;) {
    const docs = await legacy.find({}, { limit: 200 });
    if (docs.length === 0) return moved;
    for (const d of docs) {
      for (const m of d.moves) {
        const doc: CardMoveDoc = { _id: `${d.board_id}:${d.task_id}:${m.seq}`, board_id: d.board_id, task_id: d.task_id, created_at: d.created_at, ...m };
        if (d.deleted) doc.deleted = true;
        try {
          await moves.insertOne(doc, LAZY);
        } catch (err) {
          if (!(err instanceof AppError && err.code === 'CONFLICT')) throw err;
        }
      }
    }
    await legacy.deleteMany({ _id: { $in: docs.map((d) => d._id) } });
    moved += docs.length;
  }
}

const POINTS = escapeKey('app.points');

/**
 * Each column's card count and points (sum of numeric `app.points`) of `board` for `principal`, as
 * the board summary counts them: the column's effective query within the board scope and the
 * board's active sprint. One read per column, run in turn.
 */
export async function columnFigures(store: DocumentStore, board: BoardDoc, principal: Principal, now: Date): Promise<FlowSnapshotResult['columns']> {
  const tasks = store.collection<TaskDoc>(Collections.tasks);
  const scope = boardScopeFilter(board, principal);
  const out: FlowSnapshotResult['columns'] = [];
  for (const column of board.columns) {
    const { filter } = await compileColumn(store, principal, board, column, board.activeSprintId, now);
    const docs = await tasks.find({ $and: [scope, filter] }, { projection: { _id: 1, [metadataPath('app.points')]: 1 } });
    let points = 0;
    for (const d of docs) {
      const p = d.metadata?.[POINTS];
      if (typeof p === 'number' && Number.isFinite(p)) points += p;
    }
    out.push({ column_id: column.id, name: column.name, count: docs.length, points });
  }
  return out;
}

/**
 * Takes (or retakes) `board`'s snapshot of the UTC day holding `now`, counted as the board's owner
 * sees it, kept `retentionDays`. One document per board per day: taking it again the same day
 * replaces that day's figures.
 */
export async function takeSnapshot(store: DocumentStore, board: BoardDoc, now: Date, retentionDays: number): Promise<FlowSnapshotDoc> {
  const owner = await loadPrincipal(store, board.owner_id, undefined, undefined);
  const day = dayOf(now.getTime());
  const doc: FlowSnapshotDoc = {
    _id: `${board._id}:${day}`, board_id: board._id, day, taken_at: now.toISOString(),
    columns: await columnFigures(store, board, owner, now),
    expires_at: new Date(now.getTime() + retentionDays * 86_400_000).toISOString(),
  };
  const { _id, ...fields } = doc;
  await snapshotsOf(store).updateOne({ _id }, { $set: fields }, { upsert: true });
  return doc;
}

/**
 * Takes today's snapshot of every board that has none yet, at most `limit` boards per call (the
 * rest on the next call). Returns how many it took.
 */
export async function takeDueSnapshots(store: DocumentStore, now: Date, retentionDays: number, limit = 50): Promise<number> {
  const day = dayOf(now.getTime());
  const done = new Set((await snapshotsOf(store).find({ day }, { projection: { board_id: 1 } })).map((s) => s.board_id));
  const boards = await store.collection<BoardDoc>(Collections.boards).find({}, { sort: { _id: 1 } });
  let taken = 0;
  for (const board of boards) {
    if (taken >= limit) break;
    if (done.has(board._id)) continue;
    await takeSnapshot(store, board, now, retentionDays);
    taken++;
  }
  return taken;
}
