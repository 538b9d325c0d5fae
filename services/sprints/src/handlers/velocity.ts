import { callerId, jsonText, type EncodedJson, type Handler } from '@app/shared/bus';
import { VELOCITY_LAST, type SprintsOps, type VelocityResult } from '@app/shared/contracts';
import { loadBoard, type ServiceDeps, type TaskDoc } from '@app/shared/domain';
import { Collections } from '@app/shared/store';
import { DONE } from '../domain/members.js';
import { round6, snapshotsOf, velocityEntryOf, type CloseSnapshotDoc } from '../domain/snapshots.js';

/** Median of `xs` (0 when empty): the middle value, or the mean of the two middle values, 6 decimals. */
export function median(xs: readonly number[]): number {
  if (xs.length === 0) return 0;
  const s = Float64Array.from(xs).sort(); // numeric order, without a comparator call per pair
  const mid = Math.floor(s.length / 2);
  return round6(s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2);
}

/** What the history reads of each close snapshot: its sprint, velocity and serialized entry (no members, no report). */
type Row = Pick<CloseSnapshotDoc, '_id' | 'sprint_id' | 'velocity' | 'velocity_entry'>;
const ROW_PROJECTION = { _id: 1, sprint_id: 1, velocity: 1, velocity_entry: 1 } as const;
/** The fields of a close snapshot written before `velocity_entry` existed, to build its entry. */
const ENTRY_PROJECTION = { _id: 1, sprint_id: 1, sprint_title: 1, taken_at: 1, committed_points: 1, completed_points: 1, velocity: 1 } as const;

/**
 * `sprints.velocity` — `GET /api/v1/boards/{boardId}/velocity?last=N` (`last` 1..50,
 * default 6, checked by the contract: out of range → 400 `VALIDATION_FAILED` naming `last`). The
 * board's closed sprints are the close snapshots that name the board (its own sprints, the sprints
 * started on it, and those it pointed at when they closed) whose sprint is still live and `done`;
 * each sprint counts once, with its latest close. Returns the `last` most recently closed, oldest
 * first, with the mean and median of their velocities. Read from the frozen close snapshots only,
 * projected to each one's sprint, velocity and entry text (serialized at close; the reply is put
 * together from those texts).
 *
 * The closes are read newest first, `last` at a time: a page whose sprints are all still closed
 * and distinct is the answer, so the cost follows `last`, not the board's whole history. Store
 * round trips: the board, then two per page (the closes, their sprints' status) — one page unless
 * sprints among the latest were reopened, deleted or closed twice — plus one when close snapshots
 * written before the entry text existed are among the picked ones. The last reply is kept with the
 * ids of the closes it was made of (frozen documents): a read that picks the same closes answers it
 * again without putting the text together.
 *
 * Errors: 404 `BOARD_NOT_FOUND`, 400 `VALIDATION_FAILED`, 503 `STORE_UNAVAILABLE`.
 */
export function boardVelocity({ store }: ServiceDeps): Handler<typeof SprintsOps.velocity> {
  const tasks = store.collection<TaskDoc>(Collections.tasks);
  const snaps = snapshotsOf(store);
  /** The last reply made, with what it was made of (the ids of its close snapshots, in order). */
  let recent: { boardId: string; last: number; closes: string[]; reply: EncodedJson<VelocityResult> } | undefined;

  return async ({ boardId, last = VELOCITY_LAST.default }, ctx) => {
    await loadBoard(store, callerId(ctx), boardId, 'read');
    const seen = new Set<string>(); // sprints whose latest close was met (picked or not)
    const picked: Row[] = [];
    for (let skip = 0; picked.length < last; skip += last) {
      const page = (await snaps.find(
        { board_ids: boardId, kind: 'close' },
        { sort: { taken_at: -1, _id: -1 }, skip, limit: last, projection: ROW_PROJECTION },
      )) as Row[];
      // the latest close of each sprint not met on an earlier page
      const latest: Row[] = [];
      const ids: string[] = [];
      for (const c of page) {
        if (seen.has(c.sprint_id)) continue;
        seen.add(c.sprint_id);
        latest.push(c);
        ids.push(c.sprint_id);
      }
      if (latest.length > 0) {
        const closed = new Set<string>();
        for (const t of await tasks.find({ _id: { $in: ids }, deleted: false, status: DONE }, { projection: { _id: 1 } })) closed.add(t._id);
        for (const c of latest) if (picked.length < last && closed.has(c.sprint_id)) picked.push(c);
      }
      if (page.length < last) break;
    }
    picked.reverse();
    // a close snapshot never changes: the same board, `last` and closes make the same reply
    if (recent && recent.boardId === boardId && recent.last === last && sameIds(recent.closes, picked)) return recent.reply;
    const entries = await entryTexts(picked);
    const velocities = picked.map((c) => c.velocity);
    const mean = velocities.length === 0 ? 0 : round6(velocities.reduce((a, b) => a + b, 0) / velocities.length);
    const reply = jsonText<VelocityResult>(
      `{"board_id":${JSON.stringify(boardId)},"last":${JSON.stringify(last)},"sprints":[${entries.join(',')}],"mean":${JSON.stringify(mean)},"median":${JSON.stringify(median(velocities))}}`,
    );
    recent = { boardId, last, closes: picked.map((c) => c._id), reply };
    return reply;
  };

  /** True when `rows` are the close snapshots `ids`, in that order. */
  function sameIds(ids: readonly string[], rows: readonly Row[]): boolean {
    if (ids.length !== rows.length) return false;
    for (let i = 0; i < ids.length; i++) if (ids[i] !== rows[i]!._id) return false;
    return true;
  }

  /** The entry texts of `rows`, in order; entries of close snapshots without one are built from one more read. */
  async function entryTexts(rows: readonly Row[]): Promise<string[]> {
    const missing = rows.filter((r) => typeof r.velocity_entry !== 'string').map((r) => r._id);
    const built = new Map<string, string>();
    if (missing.length > 0) {
      const docs = (await snaps.find({ _id: { $in: missing } }, { projection: ENTRY_PROJECTION })) as CloseSnapshotDoc[];
      for (const d of docs) built.set(d._id, JSON.stringify(velocityEntryOf(d)));
    }
    return rows.map((r) => r.velocity_entry ?? built.get(r._id)!);
  }
}
