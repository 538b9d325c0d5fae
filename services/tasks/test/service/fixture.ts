import { randomUUID } from 'node:crypto';
import { MemoryBus } from '@app/shared/bus';
import type { AnyOp, In, Out } from '@app/shared/contracts';
import { TasksOps } from '@app/shared/contracts';
import { fixedClock, type GroupDoc, type Permission, type TaskDoc } from '@app/shared/domain';
import { silentLogger } from '@app/shared/log';
import { Collections, type Doc } from '@app/shared/store';
import { testStore, type TestStoreOptions } from '@app/shared/testing';
import { tasksService } from '../../src/index.js';
import { startupIndexes } from '@app/shared/runtime';

/** Error assertions shared by every service's tests. */
export { fields, rejects } from '@app/shared/testing';

export const T0 = '2026-11-22T10:00:00.000Z';

/** Users of every test: alice owns tasks, bob and carol are other users. */
export const ALICE = randomUUID();
export const BOB = randomUUID();
export const CAROL = randomUUID();

/**
 * The tasks service on a MemoryBus + the suite's test store (`testStore`: the leg's store under
 * MongoDB's transaction rules; `opts` go to it) with a fixed clock, three users
 * stored in `users`. `call` sends an op as a user (alice by default, null for none).
 */
export async function buildTasks(opts: TestStoreOptions = {}) {
  const store = await testStore(opts);
  const bus = new MemoryBus();
  const clock = fixedClock(T0);
  const log = silentLogger();
  await store.ensureIndexes(startupIndexes(tasksService));
  await store.collection<Doc>(Collections.users).insertMany([ALICE, BOB, CAROL].map((_id, i) => ({ _id, username: `user${i}` })));
  await bus.serve(tasksService.bindings({ store, clock, log }), { queue: 'tasks', log });

  /** `userId` null sends no caller. */
  const call = <O extends AnyOp>(op: O, input: In<O>, userId: string | null = ALICE): Promise<Out<O>> =>
    bus.request(op, input, userId === null ? {} : { userId });
  const tasks = store.collection<TaskDoc>(Collections.tasks);
  const notes = store.collection<Doc>(Collections.notes);
  return {
    store, bus, clock, call, tasks, notes,
    /** Creates a task as `userId` (alice) and returns the API task. */
    newTask: (title = 'a task', userId = ALICE, extra: Partial<In<typeof TasksOps.create>> = {}) =>
      call(TasksOps.create, { title, ...extra }, userId),
    /** The stored document of a task. */
    stored: async (id: string) => (await tasks.findOne({ _id: id }))!,
    /** Puts `members` in a new group and shares task `taskId` with it at `permission`. */
    share: async (taskId: string, permission: Permission, members: string[]) => {
      const group: GroupDoc = {
        _id: randomUUID(), name: 'team', owner_id: ALICE, created_at: T0,
        members: members.map((user_id) => ({ user_id, role: 'member' as const })),
      };
      await store.collection<GroupDoc>(Collections.groups).insertOne(group);
      await tasks.updateOne({ _id: taskId }, { $set: { groupId: group._id, groupPermission: permission } });
      return group._id;
    },
    async [Symbol.asyncDispose]() {
      await bus.close();
      await store.close();
    },
  };
}
