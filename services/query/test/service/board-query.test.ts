import { describe, expect, test } from 'vitest';
import { QueryOps, type In } from '@app/shared/contracts';
import { rejection } from '@app/shared/testing';
import { aBoard, ALICE, aTask, BOB, CAROL, queryFixture, team, TEAM } from './fixtures.js';

type Fixture = Awaited<ReturnType<typeof queryFixture>>;
const ask = (f: Fixture, userId: string, input: In<typeof QueryOps.board>) => f.bus.request(QueryOps.board, input, { userId });

async function seeded() {
  const f = await queryFixture();
  const privateBoard = aBoard({ default_tags: ['web'] });
  const sharedBoard = aBoard({ board_type: 'shared', groupId: TEAM, groupPermission: 'r', default_tags: [] });
  const aliceWeb = aTask({ title: 'alice web', tags: ['web'], status: 'todo' });
  const aliceApi = aTask({ title: 'alice api', tags: ['api'] });
  const teamWeb = aTask({ title: 'team web', tags: ['web'], created_by: BOB, groupId: TEAM, status: 'doing' });
  const bobWeb = aTask({ title: 'bob web', tags: ['web'], created_by: BOB });
  const deletedWeb = aTask({ title: 'deleted web', tags: ['web'], deleted: true });
  await f.groups(team());
  await f.boards(privateBoard, sharedBoard);
  await f.tasks(aliceWeb, aliceApi, teamWeb, bobWeb, deletedWeb);
  return { f, privateBoard, sharedBoard, aliceWeb, aliceApi, teamWeb, bobWeb };
}

describe('POST /boards/:boardId/query', () => {
  test('a private board shows what its owner can read, narrowed by default_tags', async () => {
    const { f, privateBoard, aliceWeb, teamWeb } = await seeded();
    await using _ = f;
    const res = await ask(f, ALICE, { boardId: privateBoard._id, query: 'ORDER BY title ASC' });
    expect(res.data.map((t) => t.id)).toEqual([aliceWeb._id, teamWeb._id]);
    expect(res).toMatchObject({ total: 2, page: 1 });
    expect(res.data[0]!.description).toBe('the body'); // full task objects
  });

  test('a shared board shows its group’s tasks to every member, and only those', async () => {
    const { f, sharedBoard, teamWeb } = await seeded();
    await using _ = f;
    for (const user of [ALICE, BOB]) expect((await ask(f, user, { boardId: sharedBoard._id })).data.map((t) => t.id)).toEqual([teamWeb._id]);
  });

  test('the query narrows within the board scope and paginates with page_size', async () => {
    const { f, privateBoard, aliceWeb, teamWeb } = await seeded();
    await using _ = f;
    expect((await ask(f, ALICE, { boardId: privateBoard._id, query: "status = 'todo'" })).data.map((t) => t.id)).toEqual([aliceWeb._id]);
    const page2 = await ask(f, ALICE, { boardId: privateBoard._id, query: 'ORDER BY title ASC', page: 2, page_size: 1 });
    expect(page2).toMatchObject({ total: 2, page: 2 });
    expect(page2.data.map((t) => t.id)).toEqual([teamWeb._id]);
  });

  test('a board the caller cannot read answers exactly like a missing one: 404', async () => {
    const { f, privateBoard, sharedBoard } = await seeded();
    await using _ = f;
    for (const [user, boardId] of [[BOB, privateBoard._id], [CAROL, sharedBoard._id], [ALICE, 'no-such-board']] as const) {
      const err = await rejection(ask(f, user, { boardId }));
      expect(err.code).toBe('BOARD_NOT_FOUND');
      expect(err.status).toBe(404);
    }
  });

  test('page_size outside 1..200 is a 400', async () => {
    const { f, privateBoard } = await seeded();
    await using _ = f;
    for (const page_size of [0, 201]) {
      const err = await rejection(ask(f, ALICE, { boardId: privateBoard._id, page_size }));
      expect(err.validationErrors?.map((v) => v.field)).toContain('/page_size');
    }
  });
});
