import { describe, expect, it } from 'vitest';
import { BoardsOps, GroupsOps } from '@app/shared/contracts';
import { ALICE, BOB, CAROL, DAVE, buildBoards, fields, rejects } from './fixture.js';

const people = (list: Array<{ id: string; permission?: string }>) => list.map((m) => [m.id, m.permission]);

describe('board members (invite by name, r or rw, remove; owner only)', () => {
  it('invites by name into a group made for the board, which is then shared with it; each member reads or writes as given', async () => {
    await using t = await buildBoards();
    const board = await t.newBoard();
    const card = await t.newCard(board.id);
    await rejects(t.call(BoardsOps.get, { boardId: board.id }, BOB), 'BOARD_NOT_FOUND');

    expect(people(await t.call(BoardsOps.addMember, { boardId: board.id, username: 'user1', permission: 'rw' }))).toEqual([[ALICE, 'owner'], [BOB, 'rw']]);
    expect(people(await t.call(BoardsOps.addMember, { boardId: board.id, username: 'user2', permission: 'r' }))).toEqual([[ALICE, 'owner'], [BOB, 'rw'], [CAROL, 'r']]);
    const shared = await t.call(BoardsOps.get, { boardId: board.id });
    expect(shared).toMatchObject({ board_type: 'shared', permission: 'rw', group_id: expect.any(String) });
    expect((await t.call(GroupsOps.get, { groupId: shared.group_id! })).members).toEqual([
      { user_id: ALICE, role: 'owner' }, { user_id: BOB, role: 'member' }, { user_id: CAROL, role: 'reader' },
    ]);

    // bob writes; carol reads the board and its card but writes neither, and her board says `r`.
    expect((await t.newCard(board.id, { title: 'by bob' }, BOB)).title).toBe('by bob');
    expect((await t.call(BoardsOps.get, { boardId: board.id }, CAROL)).permission).toBe('r');
    expect((await t.call(BoardsOps.list, {}, CAROL)).shared_boards.map((b) => [b.id, b.permission])).toEqual([[board.id, 'r']]);
    await rejects(t.newCard(board.id, { title: 'by carol' }, CAROL), 'FORBIDDEN');
    await rejects(t.call(BoardsOps.move, { boardId: board.id, taskId: card.id, from_column_id: 'todo', to_column_id: 'doing' }, CAROL), 'FORBIDDEN');
    expect((await t.stored(card.id)).groupId).toBe(shared.group_id); // the card followed its board

    // PATCH turns carol into a writer, bob into a reader; each change is a new version of the board
    // (what a member reads of it, its `permission`, changed), so a cached copy is read again.
    const before = (await t.call(BoardsOps.get, { boardId: board.id }, CAROL)).version;
    expect(people(await t.call(BoardsOps.updateMember, { boardId: board.id, userId: CAROL, permission: 'rw' }))).toEqual([[ALICE, 'owner'], [BOB, 'rw'], [CAROL, 'rw']]);
    const after = await t.call(BoardsOps.get, { boardId: board.id }, CAROL);
    expect([after.version > before, after.permission]).toEqual([true, 'rw']);
    await t.call(BoardsOps.updateMember, { boardId: board.id, userId: BOB, permission: 'r' });
    expect((await t.newCard(board.id, { title: 'by carol' }, CAROL)).title).toBe('by carol');
    await rejects(t.newCard(board.id, { title: 'by bob again' }, BOB), 'FORBIDDEN');

    // DELETE: bob no longer sees the board; removing him again changes nothing.
    expect(people(await t.call(BoardsOps.removeMember, { boardId: board.id, userId: BOB }))).toEqual([[ALICE, 'owner'], [CAROL, 'rw']]);
    await rejects(t.call(BoardsOps.get, { boardId: board.id }, BOB), 'BOARD_NOT_FOUND');
    expect(people(await t.call(BoardsOps.removeMember, { boardId: board.id, userId: BOB }))).toEqual([[ALICE, 'owner'], [CAROL, 'rw']]);
  });

  it('answers 403 to anyone but the owner, 404 to who cannot read the board, and names the bad input', async () => {
    await using t = await buildBoards();
    const board = await t.newBoard();
    await t.call(BoardsOps.addMember, { boardId: board.id, username: 'user1', permission: 'rw' });
    await rejects(t.call(BoardsOps.addMember, { boardId: board.id, username: 'user2', permission: 'r' }, BOB), 'FORBIDDEN');
    await rejects(t.call(BoardsOps.updateMember, { boardId: board.id, userId: BOB, permission: 'r' }, BOB), 'FORBIDDEN');
    await rejects(t.call(BoardsOps.removeMember, { boardId: board.id, userId: BOB }, BOB), 'FORBIDDEN');
    await rejects(t.call(BoardsOps.addMember, { boardId: board.id, username: 'user2', permission: 'r' }, DAVE), 'BOARD_NOT_FOUND');
    await rejects(t.call(BoardsOps.addMember, { boardId: board.id, username: 'nobody', permission: 'r' }), 'USER_NOT_FOUND');
    await rejects(t.call(BoardsOps.updateMember, { boardId: board.id, userId: CAROL, permission: 'r' }), 'USER_NOT_FOUND');
    expect(fields(await rejects(t.call(BoardsOps.addMember, { boardId: board.id, username: 'user0', permission: 'r' }), 'VALIDATION_FAILED'))).toEqual(['/username']);
    expect(fields(await rejects(t.call(BoardsOps.removeMember, { boardId: board.id, userId: ALICE }), 'VALIDATION_FAILED'))).toEqual(['/userId']);
  });

  it('on a board already shared read-only with a group, keeps every member a reader when the share becomes rw', async () => {
    await using t = await buildBoards();
    const g = await t.newGroup([BOB]);
    const board = await t.newBoard({ board_type: 'shared' });
    await t.call(BoardsOps.share, { boardId: board.id, group_id: g, permission: 'r' });
    expect(people(await t.call(BoardsOps.addMember, { boardId: board.id, username: 'user2', permission: 'rw' }))).toEqual([[ALICE, 'owner'], [BOB, 'r'], [CAROL, 'rw']]);
    expect((await t.call(BoardsOps.get, { boardId: board.id })).group_id).toBe(g);
    await rejects(t.newCard(board.id, {}, BOB), 'FORBIDDEN');
    expect((await t.newCard(board.id, {}, CAROL)).id).toEqual(expect.any(String));
  });
});
