import { describe, expect, it } from 'vitest';
import { BoardsOps } from '@app/shared/contracts';
import { AppError, ErrorCodes } from '@app/shared/errors';
import { ALICE, BOB, DAVE, buildBoards, type Fixture } from './fixture.js';

/**
 * The board access matrix (docs/architecture.md §4, §5, §9): every board route × caller × board kind → HTTP
 * status. Owner = alice; `member-r` / `member-rw` = bob, member of alice's group, the shared board
 * being shared with that group at `r` / `rw`; `non-member` = dave. A private board is never shared.
 */
type Caller = 'owner' | 'member-r' | 'member-rw' | 'non-member';
type Kind = 'private' | 'shared';
type Route = 'get' | 'list' | 'update' | 'delete' | 'share' | 'unshare' | 'create card' | 'move';

const ROUTES: Route[] = ['get', 'list', 'update', 'delete', 'share', 'unshare', 'create card', 'move'];
const USERS: Record<Caller, string> = { owner: ALICE, 'member-r': BOB, 'member-rw': BOB, 'non-member': DAVE };

// Expected HTTP status per route, in the order of ROUTES. `list` answers 200 when the board is
// listed for the caller and 404 when it is not.
const MATRIX: Record<Kind, Record<Caller, number[]>> = {
  //                          get  list  update delete share unshare card  move
  private: {
    owner:        /* */ [200, 200, 200, 204, 200, 200, 201, 200],
    'member-r':   /* */ [404, 404, 404, 404, 404, 404, 404, 404],
    'member-rw':  /* */ [404, 404, 404, 404, 404, 404, 404, 404],
    'non-member': /* */ [404, 404, 404, 404, 404, 404, 404, 404],
  },
  shared: {
    owner:        /* */ [200, 200, 200, 204, 200, 200, 201, 200],
    'member-r':   /* */ [200, 200, 403, 403, 403, 403, 403, 403],
    'member-rw':  /* */ [200, 200, 403, 403, 403, 403, 201, 200],
    'non-member': /* */ [404, 404, 404, 404, 404, 404, 404, 404],
  },
};

/** A board of `kind` with one card in `todo`, and the group (alice + bob). */
async function scene(t: Fixture, kind: Kind, caller: Caller) {
  const groupId = await t.newGroup([BOB]);
  const board = await t.newBoard({ board_type: kind });
  if (kind === 'shared') await t.call(BoardsOps.share, { boardId: board.id, group_id: groupId, permission: caller === 'member-r' ? 'r' : 'rw' });
  const card = await t.newCard(board.id, { status: 'todo' });
  return { boardId: board.id, groupId, cardId: card.id };
}

const SUCCESS: Record<Route, number> = { get: 200, list: 200, update: 200, delete: 204, share: 200, unshare: 200, 'create card': 201, move: 200 };

async function statusOf(t: Fixture, route: Route, s: { boardId: string; groupId: string; cardId: string }, userId: string): Promise<number> {
  const { boardId } = s;
  const calls: Record<Route, () => Promise<unknown>> = {
    get: () => t.call(BoardsOps.get, { boardId }, userId),
    list: async () => {
      const l = await t.call(BoardsOps.list, {}, userId);
      if (![...l.owned_boards, ...l.shared_boards].some((b) => b.id === boardId)) throw new AppError('BOARD_NOT_FOUND');
    },
    update: () => t.call(BoardsOps.update, { boardId, name: 'renamed' }, userId),
    delete: () => t.call(BoardsOps.remove, { boardId }, userId),
    share: () => t.call(BoardsOps.share, { boardId, group_id: s.groupId, permission: 'rw' }, userId),
    unshare: () => t.call(BoardsOps.unshare, { boardId }, userId),
    'create card': () => t.call(BoardsOps.createTask, { boardId, title: 'x' }, userId),
    move: () => t.call(BoardsOps.move, { boardId, taskId: s.cardId, from_column_id: 'todo', to_column_id: 'done' }, userId),
  };
  try {
    await calls[route]();
    return SUCCESS[route];
  } catch (e) {
    if (!AppError.is(e)) throw e;
    return ErrorCodes[e.code].status;
  }
}

describe('board access matrix', () => {
  for (const kind of ['private', 'shared'] as const) {
    for (const caller of Object.keys(USERS) as Caller[]) {
      it(`${kind} board, ${caller}`, async () => {
        const got: number[] = [];
        for (const route of ROUTES) {
          await using t = await buildBoards();
          got.push(await statusOf(t, route, await scene(t, kind, caller), USERS[caller]));
        }
        expect(Object.fromEntries(ROUTES.map((r, i) => [r, got[i]]))).toEqual(
          Object.fromEntries(ROUTES.map((r, i) => [r, MATRIX[kind][caller][i]])),
        );
      });
    }
  }

  it('writes nothing when refused', async () => {
    await using t = await buildBoards();
    const s = await scene(t, 'shared', 'member-r');
    const before = JSON.stringify([await t.boards.find({}), await t.tasks.find({})]);
    for (const route of ROUTES) await statusOf(t, route, s, BOB);
    expect(JSON.stringify([await t.boards.find({}), await t.tasks.find({})])).toBe(before);
  });

  it('refuses sharing with a group the owner does not belong to (403 NOT_GROUP_MEMBER)', async () => {
    await using t = await buildBoards();
    const bobsGroup = await t.newGroup([], BOB);
    const board = await t.newBoard();
    const e = await t.call(BoardsOps.share, { boardId: board.id, group_id: bobsGroup, permission: 'r' }).catch((x: AppError) => x);
    expect(AppError.is(e) && e.code).toBe('NOT_GROUP_MEMBER');
    expect(await t.boards.findOne({ _id: board.id })).not.toHaveProperty('groupId');
  });

  it('turns a private board shared on share, and leaves it visible to its owner only on unshare', async () => {
    await using t = await buildBoards();
    const groupId = await t.newGroup([BOB]);
    const board = await t.newBoard({ board_type: 'private' });
    expect(await t.call(BoardsOps.share, { boardId: board.id, group_id: groupId, permission: 'rw' })).toMatchObject({
      board_type: 'shared', group_id: groupId, permission: 'rw',
    });
    const unshared = await t.call(BoardsOps.unshare, { boardId: board.id });
    expect(unshared).toMatchObject({ board_type: 'shared' });
    expect(unshared).not.toHaveProperty('group_id');
    expect(unshared).not.toHaveProperty('permission');
    const e = await t.call(BoardsOps.get, { boardId: board.id }, BOB).catch((x: AppError) => x);
    expect(AppError.is(e) && e.code).toBe('BOARD_NOT_FOUND');
  });
});
