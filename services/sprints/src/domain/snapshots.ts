import type { CloseSprintResult, ReportItem, SprintReport, StartSprintResult, VelocityResult } from '@app/shared/contracts';
import { canReadTask, readableTasksFilter, type Principal, type TaskDoc } from '@app/shared/domain';
import { Collections, type BulkOp, type Doc, type DocumentStore, type Session } from '@app/shared/store';
import { DONE, StoredKeys, toMember, type Member } from './members.js';

/*
 * Sprint snapshots (rules and formulas in docs/sprints.md "Snapshots"). Two kinds of
 * documents in the `sprint_snapshots` collection, written through the DocumentStore port in the
 * same transaction as the write they record, and never changed afterwards:
 * - the START snapshot (`_id` `<sprintId>:start`), by start-sprint, or by the first close of a
 *   sprint that was never started (`by_close: true`);
 * - a CLOSE snapshot (`_id` `<sprintId>:close:<closed_at>`) per close-sprint. A sprint reopened
 *   and closed again gets a second one; readers use the latest.
 */

const SPRINT_PATH = `metadata.${StoredKeys.sprint}`;
const TYPE_PATH = `metadata.${StoredKeys.type}`;
/** The stored path of metadata `app.carried`: how many times a task was rolled over by a close. */
export const CARRIED_PATH = `metadata.${StoredKeys.carried}`;

/** A member as a snapshot records it; `points` is absent when `app.points` is not a number. */
export interface SnapMember {
  id: string;
  title: string;
  status: string;
  points?: number;
}

/** The start snapshot of a sprint. `events_seq`: the outbox counter when it was taken. */
export interface StartSnapshotDoc extends Doc {
  kind: 'start';
  sprint_id: string;
  taken_at: string;
  taken_by: string;
  members: SnapMember[];
  member_count: number;
  total_points: number;
  /** Boards start-sprint pointed at the sprint, sorted. */
  board_ids: string[];
  /** Boards named to start-sprint that the caller could read but not write, sorted. */
  skipped_board_ids: string[];
  events_seq: number;
  /** True when the close wrote it because the sprint was never started. */
  by_close?: true;
}

/** The lists and figures of a report, computed by {@link outcomeOf}. */
export interface Outcome {
  committed: ReportItem[];
  added: ReportItem[];
  removed: ReportItem[];
  completed: ReportItem[];
  rolled_over: ReportItem[];
  remaining: ReportItem[];
  committed_points: number;
  added_points: number;
  removed_points: number;
  completed_points: number;
  rolled_over_points: number;
  remaining_points: number;
  velocity: number;
  completion_ratio?: number;
}

/** The figures of an {@link Outcome} (its numbers, without the lists), as a close snapshot keeps them. */
export type Figures = Omit<Outcome, 'committed' | 'added' | 'removed' | 'completed' | 'rolled_over' | 'remaining'>;

/** The part of a closed sprint's report that is frozen at close: both snapshot headers, the lists and figures. */
export type FrozenReport = Omit<SprintReport, 'sprint_id' | 'title' | 'state' | 'live'>;

/**
 * A close snapshot: the members at close, the figures of the close's {@link Outcome}
 * (the sprint list and the velocity history read them), and the frozen report as JSON text.
 */
export interface CloseSnapshotDoc extends Doc, Figures {
  kind: 'close';
  sprint_id: string;
  sprint_title: string;
  taken_at: string;
  taken_by: string;
  members: SnapMember[];
  member_count: number;
  total_points: number;
  /** `backlog`, the target sprint id, or `none`. */
  target: string;
  /** The target sprint's title at the close (a sprint target only; absent in closes recorded before it existed). */
  target_title?: string;
  /** Unfinished members the closer could read but not write, left in the sprint (absent: none). */
  skipped_task_ids?: string[];
  /** Boards the sprint belongs to: its own board, the boards it was started on, the boards pointing at it at close. */
  board_ids: string[];
  /**
   * The JSON text of the report's frozen part ({@link FrozenReport}: `start`, `close`, the lists
   * and figures, in the reply's key order), serialized once at close and served as it is. Absent
   * in close snapshots written before it existed (which held the lists as arrays): the report
   * rebuilds it from the two snapshots' members ({@link frozenReportOf}).
   */
  report?: string;
  /**
   * The JSON text of the sprint's entry in a velocity history ({@link velocityEntryOf}), serialized
   * once at close. Absent in close snapshots written before it existed (then built from the fields).
   */
  velocity_entry?: string;
}

/** Either kind of snapshot. */
export type SnapshotDoc = StartSnapshotDoc | CloseSnapshotDoc;

/** `_id` of a sprint's start snapshot. */
export const startSnapshotId = (sprintId: string) => `${sprintId}:start`;

/** The `sprint_snapshots` collection. */
export const snapshotsOf = (store: DocumentStore) => store.collection<SnapshotDoc>(Collections.sprintSnapshots);

/** Rounds a sum of points to 6 decimals, as the velocity is (0.1 + 0.2 = 0.3). */
export const round6 = (n: number) => Math.round(n * 1e6) / 1e6;

/** Sum of the numeric points of `items`, 6 decimals. */
export function pointsOf(items: ReadonlyArray<{ points?: number | undefined }>): number {
  return round6(items.reduce((acc, m) => acc + (m.points ?? 0), 0));
}

/** A {@link Member} as a snapshot stores it (no `points` key when not numeric). */
export function snapMember(m: Member): SnapMember {
  return m.points === undefined ? { id: m.id, title: m.title, status: m.status } : { id: m.id, title: m.title, status: m.status, points: m.points };
}

const item = (m: SnapMember, extra: Partial<ReportItem> = {}): ReportItem =>
  m.points === undefined ? { id: m.id, title: m.title, ...extra } : { id: m.id, title: m.title, points: m.points, ...extra };

/**
 * The report figures (formulas in docs/sprints.md): `start` members (with their points at
 * start) against `now` members (at close, or now for an open sprint). `target` is given for a close:
 * the unfinished members are then `rolled_over` to it; without it they are `remaining`.
 * - committed = start members; added = now members not at start; removed = start members not now;
 * - completed = now members with status `done`; velocity = their points; completed_points = the
 *   points of those that were committed;
 * - completion_ratio = velocity ÷ committed_points (absent when committed_points is 0).
 * `skipped`: ids of unfinished members a close left in the sprint (the closer could not write
 * them); they are `remaining`, never `rolled_over`.
 */
export function outcomeOf(start: readonly SnapMember[], now: readonly SnapMember[], target?: string, skipped: readonly string[] = []): Outcome {
  const left = new Set(skipped);
  const atStart = new Set(start.map((m) => m.id));
  const atNow = new Set(now.map((m) => m.id));
  const committed = start.map((m) => item(m));
  const added = now.filter((m) => !atStart.has(m.id)).map((m) => item(m));
  const removed = start.filter((m) => !atNow.has(m.id)).map((m) => item(m));
  const done = now.filter((m) => m.status === DONE);
  const completed = done.map((m) => item(m));
  const unfinished = now.filter((m) => m.status !== DONE && !left.has(m.id)).map((m) => item(m, target === undefined ? { status: m.status } : { status: m.status, target }));
  const stayed = target === undefined ? [] : now.filter((m) => m.status !== DONE && left.has(m.id)).map((m) => item(m, { status: m.status }));
  const committed_points = pointsOf(committed);
  const velocity = pointsOf(completed);
  const out: Outcome = {
    committed,
    added,
    removed,
    completed,
    rolled_over: target === undefined ? [] : unfinished,
    remaining: target === undefined ? unfinished : stayed,
    committed_points,
    added_points: pointsOf(added),
    removed_points: pointsOf(removed),
    completed_points: pointsOf(done.filter((m) => atStart.has(m.id))),
    rolled_over_points: target === undefined ? 0 : pointsOf(unfinished),
    remaining_points: target === undefined ? pointsOf(unfinished) : pointsOf(stayed),
    velocity,
  };
  if (committed_points !== 0) out.completion_ratio = round6(velocity / committed_points);
  return out;
}

/** The figures of `o` (no lists), with `completion_ratio` only when `o` has one. */
export function figuresOf(o: Figures): Figures {
  const f: Figures = {
    committed_points: o.committed_points, added_points: o.added_points, removed_points: o.removed_points, completed_points: o.completed_points,
    rolled_over_points: o.rolled_over_points, remaining_points: o.remaining_points, velocity: o.velocity,
  };
  if (o.completion_ratio !== undefined) f.completion_ratio = o.completion_ratio;
  return f;
}

/** The fields of a snapshot its report header shows. */
type HeaderKeys = 'kind' | 'taken_at' | 'taken_by' | 'member_count' | 'total_points';
type CloseHeaderKeys = HeaderKeys | 'target' | 'target_title';

/** A snapshot's header in a report: `{taken_at, taken_by, member_count, total_points}`, `by_close` on a start written by the close, `target` on a close. */
export function headerOf(s: Pick<StartSnapshotDoc, HeaderKeys | 'by_close'> | Pick<CloseSnapshotDoc, CloseHeaderKeys>): NonNullable<SprintReport['start']> {
  const h: NonNullable<SprintReport['start']> = { taken_at: s.taken_at, taken_by: s.taken_by, member_count: s.member_count, total_points: s.total_points };
  if (s.kind === 'start' && s.by_close) h.by_close = true;
  if (s.kind === 'close') {
    h.target = s.target;
    if (s.target_title !== undefined) h.target_title = s.target_title;
  }
  return h;
}

/** One sprint in a velocity history (contract `VelocityEntry`). */
type VelocityEntry = VelocityResult['sprints'][number];

/** A close's entry in a board's velocity history: the title at close, the close time, the committed and completed points, the velocity. */
export function velocityEntryOf(c: Pick<CloseSnapshotDoc, 'sprint_id' | 'sprint_title' | 'taken_at' | 'committed_points' | 'completed_points' | 'velocity'>): VelocityEntry {
  return {
    sprint_id: c.sprint_id, title: c.sprint_title, closed_at: c.taken_at,
    committed_points: c.committed_points, completed_points: c.completed_points, velocity: c.velocity,
  };
}

/**
 * The frozen part of a closed sprint's report (docs/sprints.md "Report"): the headers of its start
 * snapshot (when there is one) and of its close, and the {@link Outcome} of the start members
 * against the members at close, rolled over to the close's target. Keys in the reply's order.
 */
export function frozenReportOf(start: StartSnapshotDoc | undefined, close: Pick<CloseSnapshotDoc, HeaderKeys | 'target' | 'members' | 'skipped_task_ids'> & { target_title?: string }): FrozenReport {
  const outcome = outcomeOf(start?.members ?? close.members, close.members, close.target, close.skipped_task_ids);
  return { ...(start ? { start: headerOf(start) } : {}), close: headerOf(close), ...outcome };
}

/** The filter of a sprint's members (docs/architecture.md §8): live tasks whose `app.sprint` is one of `sprintIds`, sprints excluded. */
export function membersFilter(sprintIds: readonly string[]) {
  return { deleted: false, [SPRINT_PATH]: sprintIds.length === 1 ? sprintIds[0] : { $in: sprintIds }, [TYPE_PATH]: { $ne: 'sprint' } };
}

/**
 * The member fields snapshots need: id, title, status and the metadata (`app.points`, and
 * `app.sprint` for reads over several sprints). The whole `metadata` sub-document rather than its
 * two keys: on the embedded store a projection of escaped nested paths costs ~20 µs per document
 * (measured: 80 members 1.6 ms vs 35 µs), and metadata documents are small.
 */
export const MEMBER_PROJECTION = { _id: 1, title: 1, status: 1, metadata: 1 } as const;

/**
 * The sprint's members now, oldest first (`created_at`, then id), as snapshots store them. One round
 * trip. With `reader`, only the members that principal can read (docs/sprints.md: figures count
 * only what the reader may read).
 */
export async function readMembers(store: DocumentStore, sprintId: string, session?: Session, reader?: Principal): Promise<SnapMember[]> {
  const filter = reader ? { $and: [membersFilter([sprintId]), readableTasksFilter(reader)] } : membersFilter([sprintId]);
  const docs = await store
    .collection<TaskDoc>(Collections.tasks)
    .find(filter, { ...(session ? { session } : {}), sort: { created_at: 1, _id: 1 }, projection: MEMBER_PROJECTION });
  return docs.map((d) => snapMember(toMember(d)));
}

/**
 * Which of a list of task ids a reader can read: `all` when every one of them, else `has(id)`
 * answers for each id of the list (not for ids outside it).
 */
export interface Readable {
  readonly all: boolean;
  has(id: string): boolean;
}

/** Every id of the list is readable. */
const EVERY: Readable = { all: true, has: () => true };

/**
 * Which of the tasks `ids` `reader` can read (owner, or member of the task's group), soft-deleted
 * ones included (a member deleted during a sprint stays in its history); a missing id is not
 * readable. One round trip; none when `ids` is empty. `ids` may repeat an id (it is read once);
 * give each once to keep the read short.
 * The tasks are read by id with their sharing fields alone, and each is checked with
 * `canReadTask` (the predicate form of `readableTasksFilter`): a store answers a list of ids from
 * its `_id` index, where the filter form would also ask it for every task the reader can reach.
 * When every task is readable (a report's usual case) the answer is counted, with no set of ids
 * built (docs/bench.md "Where a request's time goes").
 */
export async function readableIds(store: DocumentStore, reader: Principal, ids: readonly string[]): Promise<Readable> {
  const read: Array<Array<Pick<TaskDoc, '_id' | 'created_by' | 'groupId' | 'tags'>>> = [];
  let readable = 0;
  // one read per IDS_PER_READ ids: a query document stays far below MongoDB's 16 MiB
  for (let i = 0; i < ids.length; i += IDS_PER_READ) {
    const part = ids.length <= IDS_PER_READ ? ids : ids.slice(i, i + IDS_PER_READ);
    const docs = await store.collection<TaskDoc>(Collections.tasks).find({ _id: { $in: part } }, { projection: ACCESS_PROJECTION });
    read.push(docs);
    for (const d of docs) if (canReadTask(reader, d)) readable++;
  }
  // as many readable tasks as ids: each id found once and readable (an id given twice is found
  // once, so a list with a repeat never counts as all; it is answered by the set below)
  if (readable === ids.length) return EVERY;
  const visible = new Set<string>();
  for (const docs of read) for (const d of docs) if (canReadTask(reader, d)) visible.add(d._id);
  return { all: false, has: (id) => visible.has(id) };
}

/** Ids per read of {@link readableIds} (≈ 0.4 MiB of `$in`). */
export const IDS_PER_READ = 10_000;

/** What {@link readableIds} reads of a task: its id and the fields read access depends on. */
const ACCESS_PROJECTION = { _id: 1, created_by: 1, groupId: 1, tags: 1 } as const;

/** `snap` with only the members in `visible`, its member count and total points recomputed; `snap` itself when nothing is hidden. */
export function visibleSnapshot<T extends { members: SnapMember[]; member_count: number; total_points: number }>(snap: T, visible: Pick<Readable, 'has'>): T {
  if (snap.members.every((m) => visible.has(m.id))) return snap;
  const members = snap.members.filter((m) => visible.has(m.id));
  return { ...snap, members, member_count: members.length, total_points: pointsOf(members) };
}

/** The start snapshot of `sprintId` taken now from `members`. */
export function startSnapshot(o: {
  sprintId: string;
  members: readonly SnapMember[];
  at: string;
  by: string;
  boardIds?: readonly string[];
  skippedBoardIds?: readonly string[];
  eventsSeq: number;
  byClose?: boolean;
}): StartSnapshotDoc {
  const doc: StartSnapshotDoc = {
    _id: startSnapshotId(o.sprintId),
    kind: 'start',
    sprint_id: o.sprintId,
    taken_at: o.at,
    taken_by: o.by,
    members: [...o.members],
    member_count: o.members.length,
    total_points: pointsOf(o.members),
    board_ids: [...(o.boardIds ?? [])].sort(),
    skipped_board_ids: [...(o.skippedBoardIds ?? [])].sort(),
    events_seq: o.eventsSeq,
  };
  if (o.byClose) doc.by_close = true;
  return doc;
}

/** The reply of start-sprint (and the `data.start` of `sprint.started`) from a recorded start snapshot. */
export function startResultOf(s: StartSnapshotDoc, replayed: boolean): StartSprintResult {
  return {
    sprintId: s.sprint_id,
    started_at: s.taken_at,
    started_by: s.taken_by,
    member_count: s.member_count,
    total_points: s.total_points,
    pointedBoardIds: s.board_ids,
    skippedBoardIds: s.skipped_board_ids,
    replayed,
  };
}

/** The close of a sprint as close-sprint hands it to {@link recordCloseSnapshot}. */
export interface ClosingSprint {
  sprint: Pick<TaskDoc, '_id' | 'title' | 'boardId'>;
  /** Every member at close (finished and unfinished), oldest first. */
  members: readonly Member[];
  result: CloseSprintResult;
  /** The target sprint's title, when the rollover goes to a sprint (the report names it by title). */
  targetTitle?: string;
  /** Who closes it, and when (ISO 8601 UTC). */
  by: string;
  at: string;
}

/**
 * Records the close of a sprint, inside close-sprint's transaction `session`: reads the
 * start snapshot (writing one from the members at close when the sprint was never started), writes
 * the close snapshot with its figures, its frozen report and its velocity entry serialized once
 * ({@link CloseSnapshotDoc.report}, {@link CloseSnapshotDoc.velocity_entry}), and adds 1 to
 * `app.carried` of every rolled-over member ({@link carriedUpdates}). Three store round trips whatever the number of
 * members (the last one only when something rolls over). A store fault throws `STORE_UNAVAILABLE` and the transaction leaves
 * nothing written.
 */
export async function recordCloseSnapshot(store: DocumentStore, session: Session, c: ClosingSprint): Promise<void> {
  const snaps = snapshotsOf(store);
  const sprintId = c.sprint._id;
  const now = c.members.map(snapMember);
  const existing = (await snaps.findOne({ _id: startSnapshotId(sprintId) }, { session })) as StartSnapshotDoc | null;
  const start = existing ?? startSnapshot({ sprintId, members: now, at: c.at, by: c.by, eventsSeq: -1, byClose: true });
  const boards = new Set([...start.board_ids, ...c.result.rotatedBoardIds, ...c.result.skippedBoardIds]);
  if (c.sprint.boardId !== undefined) boards.add(c.sprint.boardId);
  const skipped = c.result.skippedTaskIds;
  const head = {
    kind: 'close' as const, taken_at: c.at, taken_by: c.by, members: now, member_count: now.length, total_points: pointsOf(now), target: c.result.target,
    ...(c.targetTitle !== undefined ? { target_title: c.targetTitle } : {}),
    ...(skipped.length > 0 ? { skipped_task_ids: [...skipped] } : {}),
  };
  const frozen = frozenReportOf(start, head);
  const close: CloseSnapshotDoc = {
    _id: `${sprintId}:close:${c.at}`,
    sprint_id: sprintId,
    sprint_title: c.sprint.title,
    ...head,
    board_ids: [...boards].sort(),
    ...figuresOf(frozen),
    report: JSON.stringify(frozen),
  };
  close.velocity_entry = JSON.stringify(velocityEntryOf(close));
  await snaps.insertMany(existing ? [close] : [start, close], { session });
  if (frozen.rolled_over.length > 0) {
    await store.collection<TaskDoc>(Collections.tasks).bulkWrite(carriedUpdates(frozen.rolled_over, c.members), { session });
  }
}

/**
 * The writes of `app.carried` for the rolled-over members (docs/sprints.md "Snapshots"): each
 * becomes its value as the close read it plus 1, a value that is not a number counting as 0. A
 * `$set` of the computed count, not an `$inc`: `app.carried` is metadata any user may set, and
 * MongoDB refuses an `$inc` of a string (a close that could never succeed again). One
 * `updateMany` per distinct new count, all in one bulk write (one round trip).
 */
export function carriedUpdates(rolled: readonly { id: string }[], members: readonly Member[]): BulkOp<TaskDoc>[] {
  const read = new Map(members.map((m) => [m.id, m.carried ?? 0]));
  const byCount = new Map<number, string[]>();
  for (const { id } of rolled) {
    const next = (read.get(id) ?? 0) + 1;
    const ids = byCount.get(next);
    if (ids) ids.push(id);
    else byCount.set(next, [id]);
  }
  return [...byCount].map(([count, ids]) => ({ updateMany: { filter: { _id: { $in: ids } }, update: { $set: { [CARRIED_PATH]: count } } } }));
}

/**
 * The start snapshot and the latest close snapshot of a sprint (either may be missing). One round
 * trip; index `sprint_id`.
 */
export async function latestSnapshots(store: DocumentStore, sprintId: string): Promise<{ start?: StartSnapshotDoc; close?: CloseSnapshotDoc }> {
  const docs = await snapshotsOf(store).find({ sprint_id: sprintId }, { sort: { taken_at: 1, _id: 1 } });
  const out: { start?: StartSnapshotDoc; close?: CloseSnapshotDoc } = {};
  for (const d of docs) {
    if (d.kind === 'start') out.start = d;
    else out.close = d;
  }
  return out;
}

/** What {@link frozenReportText} reads of a close snapshot. */
const FROZEN_PROJECTION = { _id: 1, report: 1 } as const;

/**
 * The JSON text of the frozen part of a closed sprint's report ({@link FrozenReport}), from its
 * latest close snapshot; `undefined` when the sprint has no close snapshot. One round trip reading
 * that snapshot's `report` alone (not its members); a close snapshot written before the text was
 * stored costs one more, reading both snapshots to rebuild it ({@link frozenReportOf}).
 */
export async function frozenReportText(store: DocumentStore, sprintId: string): Promise<string | undefined> {
  const [latest] = await snapshotsOf(store).find(
    { sprint_id: sprintId, kind: 'close' },
    { sort: { taken_at: -1, _id: -1 }, limit: 1, projection: FROZEN_PROJECTION },
  );
  if (!latest) return undefined;
  const text = (latest as Partial<CloseSnapshotDoc>).report;
  if (typeof text === 'string') return text;
  const { start, close } = await latestSnapshots(store, sprintId);
  return close ? JSON.stringify(frozenReportOf(start, close)) : undefined;
}
