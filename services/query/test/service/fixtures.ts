import { MemoryBus } from '@app/shared/bus';
import { fixedClock, type BoardDoc, type ColumnDef, type GroupDoc, type TaskDoc } from '@app/shared/domain';
import { silentLogger } from '@app/shared/log';
import { Collections, EmbeddedStore, encodeMetadata } from '@app/shared/store';
import { queryService } from '../../src/index.js';

export const NOW = '2026-03-02T12:00:00.000Z';
export const ALICE = 'user-alice';
export const BOB = 'user-bob';
export const CAROL = 'user-carol';
export const TEAM = 'group-team';

let seq = 0;
/** A deterministic UUID-shaped id. */
export const id = (): string => `00000000-0000-4000-8000-${String(++seq).padStart(12, '0')}`;

/** A live task owned by ALICE; `metadata` takes API keys. Timestamps default to NOW. */
export function aTask(over: Partial<Omit<TaskDoc, 'metadata'>> & { metadata?: Record<string, unknown> } = {}): TaskDoc {
  const { metadata, ...rest } = over;
  return {
    _id: id(),
    title: 'a task',
    description: 'the body',
    status: 'todo',
    path: '',
    tags: [],
    checkInCount: 0,
    created_at: NOW,
    created_by: ALICE,
    updated_at: NOW,
    updated_by: ALICE,
    linkedToIds: [],
    resourceIds: [],
    deleted: false,
    ...rest,
    metadata: encodeMetadata(metadata),
  };
}

/** A column; `actions` are irrelevant to reads. */
export const aColumn = (id: string, query: string, extra: Partial<ColumnDef> = {}): ColumnDef => ({ id, name: id, query, actions: [], ...extra });

/** A private board owned by ALICE. */
export function aBoard(over: Partial<BoardDoc> = {}): BoardDoc {
  return {
    _id: id(),
    name: 'Sprint board',
    board_type: 'private',
    owner_id: ALICE,
    columns: [],
    default_tags: [],
    metadata: {},
    created_at: NOW,
    created_by: ALICE,
    updated_at: NOW,
    updated_by: ALICE,
    ...over,
  };
}

/** The group TEAM with ALICE and BOB as members (CAROL is outside). */
export const team = (): GroupDoc => ({
  _id: TEAM,
  name: 'team',
  owner_id: ALICE,
  members: [
    { user_id: ALICE, role: 'owner' },
    { user_id: BOB, role: 'member' },
  ],
  created_at: NOW,
});

/** The query service on a MemoryBus over an in-memory store, with seeding helpers. */
export async function queryFixture() {
  const store = EmbeddedStore.memory();
  const bus = new MemoryBus();
  const log = silentLogger();
  await bus.serve(queryService.bindings({ store, clock: fixedClock(NOW), log }), { queue: queryService.name, log });
  return {
    store,
    bus,
    tasks: (...docs: TaskDoc[]) => store.collection<TaskDoc>(Collections.tasks).insertMany(docs),
    boards: (...docs: BoardDoc[]) => store.collection<BoardDoc>(Collections.boards).insertMany(docs),
    groups: (...docs: GroupDoc[]) => store.collection<GroupDoc>(Collections.groups).insertMany(docs),
    async [Symbol.asyncDispose]() {
      await bus.close();
      await store.close();
    },
  };
}
