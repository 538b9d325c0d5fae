import { randomUUID } from 'node:crypto';
import { MemoryBus, type Bus, type Served } from '@app/shared/bus';
import { SprintsOps, type AnyOp, type CloseSprintBody, type CloseSprintResult, type In, type Out } from '@app/shared/contracts';
import { fixedClock, type BoardDoc, type GroupDoc, type Permission, type TaskDoc } from '@app/shared/domain';
import { silentLogger } from '@app/shared/log';
import { Collections, metadataPath, type DocumentStore } from '@app/shared/store';
import { aBoard as boardDoc, aGroup as groupDoc, aTask as taskDoc, insert } from '@app/shared/testing';
import { sprintsService } from '../src/index.js';
import { startupIndexes } from '@app/shared/runtime';

/** The instant every test's clock is frozen at. */
export const NOW = '2026-03-13T17:00:00.000Z';
const EARLIER = Date.parse('2026-03-01T09:00:00.000Z');

/** Fresh user ids for one test. */
export function users() {
  return { alice: randomUUID(), bob: randomUUID(), carol: randomUUID() };
}

let seq = 0;

/** A stored task; `meta` uses API keys (escaped here). Members get increasing `created_at`. */
export function aTask(o: {
  owner: string;
  title?: string;
  status?: string;
  meta?: Record<string, unknown>;
  groupId?: string;
  groupPermission?: Permission;
  deleted?: boolean;
  kickoff?: string;
  deadline?: string;
}): TaskDoc {
  const at = new Date(EARLIER + ++seq * 60_000).toISOString();
  return taskDoc({
    owner: o.owner,
    at,
    title: o.title ?? `task ${seq}`,
    status: o.status ?? 'todo',
    metadata: o.meta,
    deleted: o.deleted ?? false,
    ...(o.groupId === undefined ? {} : { groupId: o.groupId, groupPermission: o.groupPermission ?? 'rw' }),
    ...(o.kickoff === undefined ? {} : { kickoff: o.kickoff }),
    ...(o.deadline === undefined ? {} : { deadline: o.deadline }),
  });
}

/** A sprint task (metadata `app.type` = `sprint`). */
export function aSprint(o: Parameters<typeof aTask>[0]): TaskDoc {
  return aTask({ ...o, title: o.title ?? `sprint ${seq + 1}`, status: o.status ?? 'doing', meta: { 'app.type': 'sprint', ...o.meta } });
}

/** A member of `sprintId` with the given status and optional `app.points`. */
export function aMember(sprintId: string, o: Parameters<typeof aTask>[0] & { points?: unknown }): TaskDoc {
  const { points, ...rest } = o;
  return aTask({ ...rest, meta: { 'app.sprint': sprintId, ...(points === undefined ? {} : { 'app.points': points }), ...o.meta } });
}

/** A stored board owned by `owner`; shared with `group` when given. */
export function aBoard(o: { owner: string; activeSprintId?: string; group?: { id: string; permission: Permission } }): BoardDoc {
  return boardDoc({
    owner: o.owner,
    name: `board ${++seq}`,
    board_type: o.group ? 'shared' : 'private',
    ...(o.activeSprintId === undefined ? {} : { activeSprintId: o.activeSprintId }),
    ...(o.group ? { groupId: o.group.id, groupPermission: o.group.permission } : {}),
    created_at: NOW,
    updated_at: NOW,
  });
}

/** A stored group whose first member is its owner. */
export function aGroup(owner: string, ...members: string[]): GroupDoc {
  return groupDoc(owner, members, { name: `group ${++seq}`, created_at: NOW });
}

/** Inserts documents straight into the store (tests set up state without the other services). */
export const seed = insert;

/** Every document of the collections close-sprint touches (snapshots included), for "nothing changed" assertions. */
export async function snapshot(store: DocumentStore) {
  const all = (name: string) => store.collection(name).find({}, { sort: { _id: 1 } });
  return {
    tasks: await all(Collections.tasks),
    notes: await all(Collections.notes),
    boards: await all(Collections.boards),
    snapshots: await all(Collections.sprintSnapshots),
  };
}

/** Reads helpers over a store. */
export function reads(store: DocumentStore) {
  return {
    task: (id: string) => store.collection<TaskDoc>(Collections.tasks).findOne({ _id: id }),
    board: (id: string) => store.collection<BoardDoc>(Collections.boards).findOne({ _id: id }),
    notesOf: (taskId: string) => store.collection(Collections.notes).find({ task_id: taskId }, { sort: { created_at: 1, _id: 1 } }),
    /** Ids of the live tasks whose `app.sprint` is `sprintId`, sorted. */
    membersOf: async (sprintId: string) =>
      (await store.collection<TaskDoc>(Collections.tasks).find({ deleted: false, [metadataPath('app.sprint')]: sprintId })).map((t) => t._id).sort(),
  };
}

/** The sprints service served on a bus over `store` with a fixed clock; `close` calls `sprints.close`. */
export async function serveSprints(store: DocumentStore, bus: Bus = new MemoryBus()) {
  const clock = fixedClock(NOW);
  const log = silentLogger();
  await store.ensureIndexes(startupIndexes(sprintsService));
  const served: Served = await bus.serve(sprintsService.bindings({ store, clock, log }), { queue: sprintsService.name, log });
  const close = (userId: string, sprintId: string, body: CloseSprintBody = {}): Promise<CloseSprintResult> =>
    bus.request(SprintsOps.close, { sprintId, ...body }, { userId });
  /** Calls any op of the sprints service as `userId`. */
  const call = <O extends AnyOp>(op: O, userId: string, input: In<O>): Promise<Out<O>> => bus.request(op, input, { userId });
  return { bus, clock, served, close, call };
}
