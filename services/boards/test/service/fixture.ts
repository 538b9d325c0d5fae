import { randomUUID } from 'node:crypto';
import { MemoryBus, type Bus } from '@app/shared/bus';
import { BoardsOps, GroupsOps, type AnyOp, type Board, type ColumnInput, type In, type Out } from '@app/shared/contracts';
import { fixedClock, type BoardDoc, type GroupDoc, type TaskDoc } from '@app/shared/domain';
import { silentLogger } from '@app/shared/log';
import { Collections, type Doc, type DocumentStore } from '@app/shared/store';
import { testStore, type TestStoreOptions } from '@app/shared/testing';
import { boardsService } from '../../src/index.js';
import { startupIndexes } from '@app/shared/runtime';

/** Error assertions shared by every service's tests. */
export { fields, rejects } from '@app/shared/testing';

export const T0 = '2026-11-22T10:00:00.000Z';

/** Users of every test: alice owns boards, bob and carol are other users, dave is in no group. */
export const ALICE = randomUUID();
export const BOB = randomUUID();
export const CAROL = randomUUID();
export const DAVE = randomUUID();

/** A todo → doing → done board: status columns, `Doing` also tags `wip`. */
export const STATUS_COLUMNS: ColumnInput[] = [
  { id: 'todo', name: 'To Do', query: "status = 'todo'" },
  { id: 'doing', name: 'Doing', query: "status = 'doing' AND 'wip' IN tags" },
  { id: 'done', name: 'Done', query: "status = 'done'" },
];

/**
 * The boards service on a bus + the suite's test store (`testStore`; both may be given: the NATS
 * integration test passes its own bus and serves elsewhere) with a fixed clock and four stored
 * users. `call`
 * sends an op as a user (alice by default). `serviceStore` wraps the store the service sees (to
 * inject a concurrent writer, see {@link raceBeforeWrite}); `storeOptions` go to `testStore`.
 */
export async function buildBoards(
  opts: { bus?: Bus; store?: DocumentStore; serviceStore?: (store: DocumentStore) => DocumentStore; storeOptions?: TestStoreOptions } = {},
) {
  const store = opts.store ?? (await testStore(opts.storeOptions));
  const bus = opts.bus ?? new MemoryBus();
  const clock = fixedClock(T0);
  const log = silentLogger();
  await store.ensureIndexes(startupIndexes(boardsService));
  await store.collection<Doc>(Collections.users).insertMany([ALICE, BOB, CAROL, DAVE].map((_id, i) => ({ _id, username: `user${i}` })));
  const serviceStore = opts.serviceStore?.(store) ?? store;
  const served = await bus.serve(boardsService.bindings({ store: serviceStore, clock, log }), { queue: 'boards', log });

  const call = <O extends AnyOp>(op: O, input: In<O>, userId: string | undefined = ALICE): Promise<Out<O>> =>
    bus.request(op, input, userId === undefined ? {} : { userId });
  const tasks = store.collection<TaskDoc>(Collections.tasks);
  const boards = store.collection<BoardDoc>(Collections.boards);
  return {
    store, bus, clock, call, tasks, boards,
    /** Creates a board as alice (status columns unless given). */
    newBoard: (extra: Partial<In<typeof BoardsOps.create>> = {}, userId = ALICE): Promise<Board> =>
      call(BoardsOps.create, { name: 'Team board', board_type: 'private', columns: STATUS_COLUMNS, ...extra }, userId),
    /** A group owned by `owner` with `members` as plain members, created through the API. */
    newGroup: async (members: string[], owner = ALICE) => {
      const group = await call(GroupsOps.create, { name: 'team' }, owner);
      for (const user_id of members) await call(GroupsOps.addMember, { groupId: group.id, user_id }, owner);
      return group.id;
    },
    /** Creates a card on a board (as alice). */
    newCard: (boardId: string, fields: Partial<In<typeof BoardsOps.createTask>> = {}, userId = ALICE) =>
      call(BoardsOps.createTask, { boardId, title: 'a card', ...fields }, userId),
    /** The stored document of a task. */
    stored: async (id: string) => (await tasks.findOne({ _id: id }))!,
    groups: store.collection<GroupDoc>(Collections.groups),
    async [Symbol.asyncDispose]() {
      await served.close();
      if (!opts.bus) await bus.close();
      if (!opts.store) await store.close();
    },
  };
}

export type Fixture = Awaited<ReturnType<typeof buildBoards>>;

/**
 * Wraps `store` so that the first `findOneAndUpdate` on `collection` first runs `concurrent` (a
 * write by "another client" between the service's read and its conditional write).
 */
export function raceBeforeWrite(collection: string, concurrent: (store: DocumentStore) => Promise<unknown>) {
  return (store: DocumentStore): DocumentStore => {
    let raced = false;
    return new Proxy(store, {
      get(target, prop, receiver) {
        if (prop !== 'collection') {
          // methods run on the store itself (its transactions know their store by identity)
          const v = Reflect.get(target, prop, receiver) as unknown;
          return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
        }
        return (name: string) => {
          const coll = target.collection(name);
          if (name !== collection) return coll;
          return new Proxy(coll, {
            get(c, p, r) {
              if (p !== 'findOneAndUpdate') return Reflect.get(c, p, r);
              return async (...args: Parameters<typeof coll.findOneAndUpdate>) => {
                if (!raced) {
                  raced = true;
                  await concurrent(target);
                }
                return c.findOneAndUpdate(...args);
              };
            },
          });
        };
      },
    });
  };
}
