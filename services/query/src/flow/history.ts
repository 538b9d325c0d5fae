import type { EventEnvelope, FlowSnapshotResult } from '@app/shared/contracts';
import { boardScopeFilter, compileColumn, loadPrincipal, type BoardDoc, type GroupDoc, type Principal, type TaskDoc } from '@app/shared/domain';
import { AppError } from '@app/shared/errors';
import { Collections, compileFilter, encodeMetadata, escapeKey, metadataPath, type BulkOp, type Collection, type Doc, type DocumentStore } from '@app/shared/store';
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
 * Where a card is on a board as the flow history last recorded it (`card_places`, `_id` =
 * `<boardId>:<taskId>`): its column (`''`: in the board's scope but in no column, or out of it)
 * and the `seq` of the event that put it there (a place is only ever moved forward).
 */
export interface CardPlaceDoc extends Doc {
  _id: string;
  board_id: string;
  task_id: string;
  column: string;
  seq: number;
}

/** The `card_places` collection. */
export function cardPlacesOf(store: DocumentStore): Collection<CardPlaceDoc> {
  return store.collection<CardPlaceDoc>(Collections.cardPlaces);
}

/** The event types whose `data.task` (the task after the write) can change the column a card is in. */
const TASK_STATE_TYPES = new Set(['task.created', 'task.updated', 'task.restored', 'card.moved']);

/** A board as the recorder reads it: its scope and columns compiled once per pass, as its owner sees them. */
interface CompiledBoard {
  board: BoardDoc;
  inScope: (doc: Doc) => boolean;
  columns: Array<{ id: string; matches: (doc: Doc) => boolean }>;
}

/** The stored form of an event's `data.task` (API task), with the sharing fields of the stored task. */
function storedForm(task: Record<string, unknown>, stored: Pick<TaskDoc, 'created_by' | 'groupId' | 'groupPermission'>): Doc {
  const { id, metadata, ...rest } = task;
  return {
    ...rest, _id: id as string, metadata: encodeMetadata(metadata as Record<string, unknown> | undefined), deleted: false,
    created_by: stored.created_by, ...(stored.groupId !== undefined ? { groupId: stored.groupId } : {}),
  };
}

/**
 * Records what `events` (numbered, in `seq` order) change in the flow history (docs/flow.md
 * "How the history is kept"). Columns are queries, so a card changes column whenever a write
 * changes what it matches: for every event carrying the task after the write (`task.created`,
 * `task.updated`, `task.restored`, `card.moved`), the card's column is worked
 * out on each board whose scope could hold it (the boards of the task's creator and of the members
 * of its group, and the boards shared with its group), as the board's owner sees it: the first
 * column whose effective query (column query, default tags, sprints left out; no sprint clause)
 * it matches, `''` for none; a `card.moved` names its target column itself. Where that differs
 * from the card's recorded place, one move record `{from, to}` is written (`_id` =
 * `<boardId>:<taskId>:<seq>`, with the task's `created_at`) and the place moves on. `task.deleted`
 * / `task.restored` mark the card's records. Replays change nothing (same `_id`s: conflicts,
 * skipped; places move forward only). Store cost per pass: the tasks, groups, boards and places of
 * the pass read once each (one read per board's owner for its groups), then one bulk write of the
 * column changes (an upsert per change) and one of the places (one per changed card and board).
 */
export async function recordFlow(store: DocumentStore, events: readonly EventEnvelope[], now: Date = new Date()): Promise<void> {
  const moves = cardMovesOf(store);
  const taskIds = [...new Set(events.flatMap((e) => (e.task_id !== undefined && TASK_STATE_TYPES.has(e.type) ? [e.task_id] : [])))];
  if (taskIds.length > 0) await recordPlaces(store, events, taskIds, now);
  for (const e of events) {
    if ((e.type === 'task.deleted' || e.type === 'task.restored') && e.task_id !== undefined) {
      await moves.updateMany({ task_id: e.task_id }, e.type === 'task.deleted' ? { $set: { deleted: true } } : { $unset: { deleted: '' } });
    }
  }
}

/** The column changes of the tasks `taskIds` in `events` ({@link recordFlow}). */
async function recordPlaces(store: DocumentStore, events: readonly EventEnvelope[], taskIds: string[], now: Date): Promise<void> {
  const tasks = await store.collection<TaskDoc>(Collections.tasks).find(
    { _id: { $in: taskIds } }, { projection: { _id: 1, created_by: 1, groupId: 1, groupPermission: 1, created_at: 1 } },
  );
  const byId = new Map(tasks.map((t) => [t._id, t]));
  const groupIds = [...new Set(tasks.flatMap((t) => (t.groupId !== undefined ? [t.groupId] : [])))];
  const groups = groupIds.length === 0 ? [] : await store.collection<GroupDoc>(Collections.groups).find({ _id: { $in: groupIds } }, { projection: { _id: 1, members: 1 } });
  const members = new Map(groups.map((g) => [g._id, (g.members ?? []).map((m) => m.user_id)]));
  const owners = new Set(tasks.map((t) => t.created_by));
  for (const ids of members.values()) for (const id of ids) owners.add(id);
  const movedOn = new Set(events.flatMap((e) => (e.type === 'card.moved' && e.board_id !== undefined ? [e.board_id] : [])));
  const boardDocs = await store.collection<BoardDoc>(Collections.boards).find({
    $or: [{ owner_id: { $in: [...owners] } }, ...(groupIds.length > 0 ? [{ groupId: { $in: groupIds } }] : []), ...(movedOn.size > 0 ? [{ _id: { $in: [...movedOn] } }] : [])],
  });
  // no board could hold these cards and no move names one (a move is recorded even when its
  // board is gone): nothing to record, so the places and moves of the tasks are not read
  if (boardDocs.length === 0 && movedOn.size === 0) return;
  const principals = new Map<string, Promise<Principal>>();
  const ownerOf = (id: string) => {
    let p = principals.get(id);
    if (!p) principals.set(id, (p = loadPrincipal(store, id, undefined, undefined)));
    return p;
  };
  const boards: CompiledBoard[] = [];
  for (const board of boardDocs) {
    const owner = await ownerOf(board.owner_id);
    const columns: CompiledBoard['columns'] = [];
    try {
      for (const column of board.columns) {
        const { filter } = await compileColumn(store, owner, board, column, undefined, now);
        columns.push({ id: column.id, matches: compileFilter(filter) });
      }
    } catch {
      continue; // a board whose stored column query cannot run records nothing (its reads answer the 400)
    }
    boards.push({ board, inScope: compileFilter(boardScopeFilter(board, owner)), columns });
  }

  const places = new Map((await cardPlacesOf(store).find({ task_id: { $in: taskIds } })).map((p) => [p._id, p]));
  const stored0 = new Set(places.keys());
  // a card recorded before places existed: its place is where its last move record took it
  const known = new Set([...places.values()].map((p) => p.task_id));
  const unplaced = taskIds.filter((id) => !known.has(id));
  if (unplaced.length > 0) {
    for (const m of await cardMovesOf(store).find({ task_id: { $in: unplaced } }, { sort: { seq: 1 } })) {
      places.set(`${m.board_id}:${m.task_id}`, { _id: `${m.board_id}:${m.task_id}`, board_id: m.board_id, task_id: m.task_id, column: m.to, seq: m.seq });
    }
  }
  const records: CardMoveDoc[] = [];
  const changed = new Map<string, CardPlaceDoc>();
  const record = (e: EventEnvelope & { task_id: string }, boardId: string, from: string, to: string, createdAt: string) => {
    const key = `${boardId}:${e.task_id}`;
    records.push({ _id: `${key}:${e.seq}`, board_id: boardId, task_id: e.task_id, created_at: createdAt, from, to, at: e.occurred_at, seq: e.seq });
    const next: CardPlaceDoc = { _id: key, board_id: boardId, task_id: e.task_id, column: to, seq: e.seq };
    places.set(key, next);
    changed.set(key, next);
  };
  for (const e of events) {
    if (e.task_id === undefined || !TASK_STATE_TYPES.has(e.type)) continue;
    const te = e as EventEnvelope & { task_id: string };
    const stored = byId.get(e.task_id);
    const data = e.data as { task?: Record<string, unknown>; from_column_id?: unknown; to_column_id?: unknown };
    const task = data.task;
    const createdAt = typeof task?.created_at === 'string' ? task.created_at : (stored?.created_at ?? e.occurred_at);
    // a move names its board and both columns: it is recorded as it is
    const movedOn = e.type === 'card.moved' && e.board_id !== undefined && typeof data.from_column_id === 'string' && typeof data.to_column_id === 'string' ? e.board_id : undefined;
    if (movedOn !== undefined && !((places.get(`${movedOn}:${e.task_id}`)?.seq ?? 0) >= e.seq)) {
      record(te, movedOn, data.from_column_id as string, data.to_column_id as string, createdAt);
    }
    if (!stored || !task) continue;
    const doc = storedForm(task, stored);
    for (const b of boards) {
      if (b.board._id === movedOn) continue;
      const place = places.get(`${b.board._id}:${e.task_id}`);
      if (place && place.seq >= e.seq) continue; // recorded before (a replay)
      const column = b.inScope(doc) ? (b.columns.find((c) => c.matches(doc))?.id ?? '') : '';
      const from = place?.column ?? '';
      if (column !== from) record(te, b.board._id, from, column, createdAt);
    }
  }
  if (records.length > 0) {
    // one bulk write per pass: new records are inserted; when one exists already (a replay), the
    // pass writes them again as upserts of the same values, which change nothing
    try {
      await cardMovesOf(store).bulkWrite(records.map((r) => ({ insertOne: { document: r } })));
    } catch (err) {
      if (!(err instanceof AppError && err.code === 'CONFLICT')) throw err;
      await cardMovesOf(store).bulkWrite(records.map(({ _id, ...fields }) => ({ updateOne: { filter: { _id }, update: { $set: fields }, upsert: true } })));
    }
  }
  if (changed.size > 0) {
    // places move forward only: an existing one is written only when it is older than the change
    const ops = [...changed.values()].map((p): BulkOp<CardPlaceDoc> => {
      const { _id, ...fields } = p;
      return stored0.has(_id) ? { updateOne: { filter: { _id, seq: { $lt: p.seq } }, update: { $set: fields } } } : { insertOne: { document: p } };
    });
    try {
      await cardPlacesOf(store).bulkWrite(ops);
    } catch (err) {
      if (!(err instanceof AppError && err.code === 'CONFLICT')) throw err;
      // another recorder placed one of the cards meanwhile: write them one by one, newer wins
      for (const p of changed.values()) {
        const { _id, ...fields } = p;
        const { matchedCount } = await cardPlacesOf(store).updateOne({ _id, seq: { $lt: p.seq } }, { $set: fields });
        if (matchedCount > 0) continue;
        try {
          await cardPlacesOf(store).insertOne(p, LAZY);
        } catch (e) {
          if (!(e instanceof AppError && e.code === 'CONFLICT')) throw e; // there already, and newer
        }
      }
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
 * the board summary counts them: the column's effective query within the board scope (sprints are
 * not cards), across every sprint, or within the sprint `sprintId` when given. One read per
 * column, run in turn.
 */
export async function columnFigures(store: DocumentStore, board: BoardDoc, principal: Principal, now: Date, sprintId?: string): Promise<FlowSnapshotResult['columns']> {
  const tasks = store.collection<TaskDoc>(Collections.tasks);
  const scope = boardScopeFilter(board, principal);
  const out: FlowSnapshotResult['columns'] = [];
  for (const column of board.columns) {
    const { filter } = await compileColumn(store, principal, board, column, sprintId, now);
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
