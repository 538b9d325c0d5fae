import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EmbeddedStore, type DocumentStore } from '@app/shared/store';
import { readableIds } from '../../src/domain/snapshots.js';
import { aTask, seed, users } from '../fixtures.js';

let store: DocumentStore;
let u: ReturnType<typeof users>;

beforeEach(async () => {
  store = await EmbeddedStore.memory();
  u = users();
});
afterEach(async () => {
  await store.close();
});

describe('which of a list of tasks a reader can read (the report and burndown check)', () => {
  it('every task readable: all, whether owned, shared with a group of the reader or soft-deleted', async () => {
    const group = randomUUID();
    const own = aTask({ owner: u.alice });
    const shared = aTask({ owner: u.bob, groupId: group });
    const deleted = aTask({ owner: u.alice, deleted: true });
    await seed(store, { tasks: [own, shared, deleted] });
    const r = await readableIds(store, { userId: u.alice, groupIds: [group] }, [own._id, shared._id, deleted._id]);
    expect(r.all).toBe(true);
    expect([own, shared, deleted].every((t) => r.has(t._id))).toBe(true);
  });

  it('a task of another user outside the reader\'s groups is not readable; the rest are', async () => {
    const own = aTask({ owner: u.alice });
    const bobs = aTask({ owner: u.bob });
    await seed(store, { tasks: [own, bobs] });
    const r = await readableIds(store, { userId: u.alice, groupIds: [] }, [own._id, bobs._id]);
    expect(r.all).toBe(false);
    expect(r.has(own._id)).toBe(true);
    expect(r.has(bobs._id)).toBe(false);
  });

  it('an id no task has is not readable', async () => {
    const own = aTask({ owner: u.alice });
    await seed(store, { tasks: [own] });
    const missing = randomUUID();
    const r = await readableIds(store, { userId: u.alice, groupIds: [] }, [own._id, missing]);
    expect(r.all).toBe(false);
    expect(r.has(own._id)).toBe(true);
    expect(r.has(missing)).toBe(false);
  });

  it('an id given twice is read once and answered like the others', async () => {
    const own = aTask({ owner: u.alice });
    const bobs = aTask({ owner: u.bob });
    await seed(store, { tasks: [own, bobs] });
    const twice = await readableIds(store, { userId: u.alice, groupIds: [] }, [own._id, own._id]);
    expect(twice.has(own._id)).toBe(true);
    // a repeated readable id does not stand in for an unreadable one
    const mixed = await readableIds(store, { userId: u.alice, groupIds: [] }, [own._id, own._id, bobs._id]);
    expect(mixed.all).toBe(false);
    expect(mixed.has(bobs._id)).toBe(false);
  });

  it('no ids: all (nothing to hide), with no read', async () => {
    const r = await readableIds(store, { userId: u.alice, groupIds: [] }, []);
    expect(r.all).toBe(true);
  });
});
