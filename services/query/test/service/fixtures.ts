import { MemoryBus } from '@app/shared/bus';
import { fixedClock, type BoardDoc, type ColumnDef, type GroupDoc, type TaskDoc } from '@app/shared/domain';
import { silentLogger } from '@app/shared/log';
import { aBoard as boardDoc, aGroup, aTask as taskDoc, insert, testStore, type TaskFields } from '@app/shared/testing';
import { queryService } from '../../src/index.js';

export const NOW = '2026-03-02T12:00:00.000Z';
export const ALICE = 'user-alice';
export const BOB = 'user-bob';
export const CAROL = 'user-carol';
export const TEAM = 'group-team';

let seq = 0;
/** A deterministic UUID-shaped id. */
export const id = (): string => `00000000-0000-4000-8000-${String(++seq).padStart(12, '0')}`;

/** A live task owned by ALICE with a deterministic id and a description; `metadata` takes API keys. Timestamps default to NOW. */
export const aTask = (over: TaskFields = {}): TaskDoc => taskDoc({ _id: id(), description: 'the body', owner: ALICE, at: NOW, ...over });

/** A column; `actions` are irrelevant to reads. */
export const aColumn = (id: string, query: string, extra: Partial<ColumnDef> = {}): ColumnDef => ({ id, name: id, query, actions: [], ...extra });

/** A private board owned by ALICE. */
export const aBoard = (over: Partial<BoardDoc> = {}): BoardDoc =>
  boardDoc({ _id: id(), name: 'Sprint board', owner: ALICE, created_at: NOW, updated_at: NOW, ...over });

/** The group TEAM with ALICE and BOB as members (CAROL is outside). */
export const team = (): GroupDoc => aGroup(ALICE, [BOB], { _id: TEAM, name: 'team', created_at: NOW });

/** The query service on a MemoryBus over the suite's test store (`testStore`), with seeding helpers. */
export async function queryFixture() {
  const store = await testStore();
  const bus = new MemoryBus();
  const log = silentLogger();
  await bus.serve(queryService.bindings({ store, clock: fixedClock(NOW), log }), { queue: queryService.name, log });
  return {
    store,
    bus,
    tasks: (...tasks: TaskDoc[]) => insert(store, { tasks }),
    boards: (...boards: BoardDoc[]) => insert(store, { boards }),
    groups: (...groups: GroupDoc[]) => insert(store, { groups }),
    async [Symbol.asyncDispose]() {
      await bus.close();
      await store.close();
    },
  };
}
