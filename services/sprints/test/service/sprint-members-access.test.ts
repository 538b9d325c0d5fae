import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { SprintsOps } from '@app/shared/contracts';
import type { DocumentStore } from '@app/shared/store';
import { EmbeddedStore, escapeKey } from '@app/shared/store';
import { aBoard, aGroup, aMember, aSprint, reads, seed, serveSprints, users } from '../fixtures.js';

let store: DocumentStore;
let svc: Awaited<ReturnType<typeof serveSprints>>;
let u: ReturnType<typeof users>;

beforeEach(async () => {
  store = await EmbeddedStore.memory();
  svc = await serveSprints(store);
  u = users();
});
afterEach(async () => {
  await svc.bus.close();
  await store.close();
});

const ids = (items: ReadonlyArray<{ id: string }>) => items.map((m) => m.id);

describe('sprint members the reader or closer may not read or write', () => {
  it('a member whose share was removed after planning is not counted, named or changed by the sprint owner', async () => {
    const sprint = aSprint({ owner: u.alice, status: 'todo' });
    const mine = aMember(sprint._id, { owner: u.alice, status: 'todo', points: 3 });
    // bob planned his private task into alice's sprint while it was shared with him; the share is gone
    const bobs = aMember(sprint._id, { owner: u.bob, title: 'bob secret', status: 'todo', points: 100 });
    await seed(store, { tasks: [sprint, mine, bobs] });

    const started = await svc.call(SprintsOps.start, u.alice, { sprintId: sprint._id });
    expect(started).toMatchObject({ member_count: 1, total_points: 3 });
    const live = await svc.call(SprintsOps.report, u.alice, { sprintId: sprint._id });
    expect(ids(live.committed)).toEqual([mine._id]);
    expect(live.remaining_points).toBe(3);
    const burndown = await svc.call(SprintsOps.burndown, u.alice, { sprintId: sprint._id });
    expect(burndown.days.at(-1)).toMatchObject({ scope: 3, remaining: 3 });
    const board = aBoard({ owner: u.alice, activeSprintId: sprint._id });
    await seed(store, { boards: [board] });
    const [listed] = await svc.call(SprintsOps.list, u.alice, { boardId: board._id });
    expect(listed).toMatchObject({ id: sprint._id, member_count: 1, points_committed: 3 });

    const out = await svc.close(u.alice, sprint._id, { rollover: 'backlog' });
    expect(out).toMatchObject({ completed: 0, rolledOver: 1, skippedTaskIds: [] });
    const after = await reads(store).task(bobs._id);
    expect(after).toEqual(bobs);
    const [note] = await reads(store).notesOf(sprint._id);
    expect(String(note?.content)).not.toContain('bob secret');
    expect(String(note?.content)).not.toContain(bobs._id);
    const closed = await svc.call(SprintsOps.report, u.alice, { sprintId: sprint._id });
    expect([...ids(closed.committed), ...ids(closed.rolled_over), ...ids(closed.remaining)]).not.toContain(bobs._id);
  });

  it('an unfinished member the closer can read but not write is left in the sprint and listed in skippedTaskIds', async () => {
    const group = aGroup(u.bob, u.alice);
    const sprint = aSprint({ owner: u.alice, status: 'todo' });
    const mine = aMember(sprint._id, { owner: u.alice, status: 'doing', points: 2 });
    const readOnly = aMember(sprint._id, { owner: u.bob, status: 'doing', points: 5, groupId: group._id, groupPermission: 'r' });
    await seed(store, { tasks: [sprint, mine, readOnly], groups: [group] });

    const out = await svc.close(u.alice, sprint._id, { rollover: 'backlog' });
    expect(out).toMatchObject({ rolledOver: 1, skippedTaskIds: [readOnly._id] });
    expect(await reads(store).task(readOnly._id)).toEqual(readOnly);
    expect((await reads(store).task(mine._id))?.metadata[escapeKey('app.carried')]).toBe(1);
    const report = await svc.call(SprintsOps.report, u.alice, { sprintId: sprint._id });
    expect(ids(report.rolled_over)).toEqual([mine._id]);
    expect(report.remaining).toEqual([{ id: readOnly._id, title: readOnly.title, points: 5, status: 'doing' }]);
    // the repeat close replays the same outcome
    expect(await svc.close(u.alice, sprint._id, { rollover: 'backlog' })).toEqual(out);
  });

  it('a closed sprint\'s report shows each reader only the members it can read', async () => {
    const team = aGroup(u.alice, u.carol);
    const sprint = aSprint({ owner: u.alice, status: 'todo', groupId: team._id, groupPermission: 'r' });
    const privateDone = aMember(sprint._id, { owner: u.alice, status: 'done', points: 2 });
    const sharedOpen = aMember(sprint._id, { owner: u.alice, status: 'todo', points: 5, groupId: team._id, groupPermission: 'r' });
    await seed(store, { tasks: [sprint, privateDone, sharedOpen], groups: [team] });
    await svc.close(u.alice, sprint._id, { rollover: 'backlog' });

    const owner = await svc.call(SprintsOps.report, u.alice, { sprintId: sprint._id });
    expect(ids(owner.committed)).toEqual([privateDone._id, sharedOpen._id]);
    expect(owner.velocity).toBe(2);
    const member = await svc.call(SprintsOps.report, u.carol, { sprintId: sprint._id });
    expect(ids(member.committed)).toEqual([sharedOpen._id]);
    expect(ids(member.completed)).toEqual([]);
    expect(member).toMatchObject({ velocity: 0, committed_points: 5, rolled_over_points: 5, close: { member_count: 1, total_points: 5 } });
  });
});
