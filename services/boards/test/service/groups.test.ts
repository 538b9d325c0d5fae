import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { BoardsOps, GroupsOps } from '@app/shared/contracts';
import { Collections } from '@app/shared/store';
import { ALICE, BOB, CAROL, DAVE, T0, buildBoards, fields, raceBeforeWrite, rejects } from './fixture.js';

describe('groups', () => {
  it('creates a group whose creator is its owner member, visible to members only', async () => {
    await using t = await buildBoards();
    const group = await t.call(GroupsOps.create, { name: ' Platform ' });
    expect(group).toEqual({ id: group.id, name: 'Platform', owner_id: ALICE, members: [{ user_id: ALICE, role: 'owner' }], created_at: T0 });
    expect(await t.call(GroupsOps.get, { groupId: group.id })).toEqual(group);
    await rejects(t.call(GroupsOps.get, { groupId: group.id }, BOB), 'GROUP_NOT_FOUND');
    await rejects(t.call(GroupsOps.get, { groupId: randomUUID() }), 'GROUP_NOT_FOUND');
    expect(fields(await rejects(t.call(GroupsOps.create, { name: '  ' }), 'VALIDATION_FAILED'))).toEqual(['/name']);
  });

  it("lists the caller's groups, oldest first", async () => {
    await using t = await buildBoards();
    const a = await t.call(GroupsOps.create, { name: 'a' });
    t.clock.advance(1000);
    const b = await t.call(GroupsOps.create, { name: 'b' }, BOB);
    await t.call(GroupsOps.addMember, { groupId: b.id, user_id: ALICE }, BOB);
    expect((await t.call(GroupsOps.list, {})).map((g) => g.id)).toEqual([a.id, b.id]);
    expect((await t.call(GroupsOps.list, {}, BOB)).map((g) => g.id)).toEqual([b.id]);
    expect(await t.call(GroupsOps.list, {}, DAVE)).toEqual([]);
  });

  it('lets the owner and admins add members and change roles; plain members get 403', async () => {
    await using t = await buildBoards();
    const g = await t.call(GroupsOps.create, { name: 'g' });
    const withBob = await t.call(GroupsOps.addMember, { groupId: g.id, user_id: BOB, role: 'admin' });
    expect(withBob.members).toEqual([{ user_id: ALICE, role: 'owner' }, { user_id: BOB, role: 'admin' }]);
    const withCarol = await t.call(GroupsOps.addMember, { groupId: g.id, user_id: CAROL }, BOB);
    expect(withCarol.members).toContainEqual({ user_id: CAROL, role: 'member' });
    await rejects(t.call(GroupsOps.addMember, { groupId: g.id, user_id: DAVE }, CAROL), 'FORBIDDEN');
    await rejects(t.call(GroupsOps.addMember, { groupId: g.id, user_id: BOB }, DAVE), 'GROUP_NOT_FOUND');
    const demoted = await t.call(GroupsOps.addMember, { groupId: g.id, user_id: BOB, role: 'member' });
    expect(demoted.members.filter((m) => m.user_id === BOB)).toEqual([{ user_id: BOB, role: 'member' }]);
    expect(fields(await rejects(t.call(GroupsOps.addMember, { groupId: g.id, user_id: ALICE, role: 'member' }), 'VALIDATION_FAILED'))).toEqual(['/user_id']);
    await rejects(t.call(GroupsOps.addMember, { groupId: g.id, user_id: randomUUID() }), 'USER_NOT_FOUND');
  });

  it('removes members: managers remove anyone but the owner, members may leave', async () => {
    await using t = await buildBoards();
    const g = await t.newGroup([BOB, CAROL]);
    await rejects(t.call(GroupsOps.removeMember, { groupId: g, userId: CAROL }, BOB), 'FORBIDDEN');
    expect((await t.call(GroupsOps.removeMember, { groupId: g, userId: BOB }, BOB)).members.map((m) => m.user_id)).toEqual([ALICE, CAROL]);
    await rejects(t.call(GroupsOps.get, { groupId: g }, BOB), 'GROUP_NOT_FOUND');
    expect((await t.call(GroupsOps.removeMember, { groupId: g, userId: CAROL })).members.map((m) => m.user_id)).toEqual([ALICE]);
    await rejects(t.call(GroupsOps.removeMember, { groupId: g, userId: ALICE }), 'VALIDATION_FAILED');
  });

  it('never loses a member change that raced another one: the transaction reruns on top of it', async () => {
    let groupId = '';
    await using t = await buildBoards({
      serviceStore: raceBeforeWrite(Collections.groups, (s) => s.collection(Collections.groups).updateOne(
        { _id: groupId }, { $push: { members: { user_id: CAROL, role: 'member' } } },
      )),
    });
    groupId = (await t.call(GroupsOps.create, { name: 'g' })).id;
    // MongoDB answers the raced write with a write conflict and reruns the transaction, which then
    // reads carol's membership (the test store fails the first attempt the same way)
    await t.call(GroupsOps.addMember, { groupId, user_id: BOB });
    expect((await t.call(GroupsOps.get, { groupId })).members.map((m) => m.user_id)).toEqual([ALICE, CAROL, BOB]);
  });
});

describe('board members', () => {
  it("lists a shared board's owner and group members by name, to readers only", async () => {
    await using t = await buildBoards();
    const g = await t.newGroup([BOB, CAROL]);
    const board = await t.newBoard({ board_type: 'shared' });
    expect(await t.call(BoardsOps.members, { boardId: board.id })).toEqual([{ id: ALICE, username: 'user0', permission: 'owner' }]);
    await t.call(BoardsOps.share, { boardId: board.id, group_id: g, permission: 'r' });
    const people = [
      { id: ALICE, username: 'user0', permission: 'owner' },
      { id: BOB, username: 'user1', permission: 'r' },
      { id: CAROL, username: 'user2', permission: 'r' },
    ];
    expect(await t.call(BoardsOps.members, { boardId: board.id })).toEqual(people);
    expect(await t.call(BoardsOps.members, { boardId: board.id }, CAROL)).toEqual(people);
    await rejects(t.call(BoardsOps.members, { boardId: board.id }, DAVE), 'BOARD_NOT_FOUND');
    await rejects(t.call(BoardsOps.members, { boardId: randomUUID() }), 'BOARD_NOT_FOUND');
    // A member who leaves the group is no longer one of the board's people, and no longer reads it.
    await t.call(GroupsOps.removeMember, { groupId: g, userId: BOB }, BOB);
    expect((await t.call(BoardsOps.members, { boardId: board.id })).map((m) => m.id)).toEqual([ALICE, CAROL]);
    await rejects(t.call(BoardsOps.members, { boardId: board.id }, BOB), 'BOARD_NOT_FOUND');
  });

  it('lists only the owner of a private board', async () => {
    await using t = await buildBoards();
    const board = await t.newBoard();
    expect(await t.call(BoardsOps.members, { boardId: board.id })).toEqual([{ id: ALICE, username: 'user0', permission: 'owner' }]);
    await rejects(t.call(BoardsOps.members, { boardId: board.id }, BOB), 'BOARD_NOT_FOUND');
  });
});
