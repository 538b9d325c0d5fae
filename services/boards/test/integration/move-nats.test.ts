import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NatsBus } from '@app/shared/bus';
import { BoardsOps, type CardMoveResult } from '@app/shared/contracts';
import { AppError } from '@app/shared/errors';
import { silentLogger } from '@app/shared/log';
import { startNatsServer, uniquePrefix, type NatsServer } from '@app/shared/testing';
import { ALICE, buildBoards } from '../service/fixture.js';

/**
 * Card move over a real nats-server (docs/architecture.md §3, §7): the boards service serves on one NatsBus
 * connection, requests come from another; the store is the suite's test store (`testStore`).
 */
let nats: NatsServer;
beforeAll(async () => {
  nats = await startNatsServer();
});
afterAll(async () => {
  await nats?.stop();
});

async function connectPair() {
  const prefix = uniquePrefix();
  const log = silentLogger();
  const [server, client] = await Promise.all(['boards', 'client'].map((name) => NatsBus.connect({ servers: nats.url, prefix, name, log })));
  return {
    server: server!,
    client: client!,
    async [Symbol.asyncDispose]() {
      await Promise.all([client!.close(), server!.close()]);
    },
  };
}

describe('boards.move over NATS', () => {
  it('lets exactly one of 20 concurrent identical moves win; the rest get 409 with the snapshot', async () => {
    await using buses = await connectPair();
    await using t = await buildBoards({ bus: buses.server });
    const board = await t.newBoard();
    const card = await t.newCard(board.id, { status: 'todo', tags: ['docs'] });
    const input = { boardId: board.id, taskId: card.id, from_column_id: 'todo', to_column_id: 'doing' };

    const results = await Promise.allSettled(Array.from({ length: 20 }, () => buses.client.request(BoardsOps.move, input, { userId: ALICE })));

    const won = results.filter((r): r is PromiseFulfilledResult<CardMoveResult> => r.status === 'fulfilled');
    const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected').map((r) => r.reason as AppError);
    expect(won).toHaveLength(1);
    expect(won[0]!.value).toEqual({
      task: { id: card.id, title: 'a card', status: 'doing', version: 2, tags: ['docs', 'wip'] },
      applied_actions: [{ op: 'set', field: 'status', from: 'todo', to: 'doing' }, { op: 'add_tags', value: ['wip'] }],
    });
    expect(lost).toHaveLength(19);
    for (const e of lost) {
      expect(AppError.is(e)).toBe(true);
      expect(e.code).toBe('KANBAN_TASK_NOT_IN_SOURCE_COLUMN');
      expect(e.extra).toEqual({ task: { id: card.id, status: 'doing', tags: ['docs', 'wip'] } });
    }
    expect(await t.stored(card.id)).toMatchObject({ status: 'doing', tags: ['docs', 'wip'] });
  });

  it('dry run over the wire writes nothing', async () => {
    await using buses = await connectPair();
    await using t = await buildBoards({ bus: buses.server });
    const board = await t.newBoard();
    const card = await t.newCard(board.id, { status: 'todo' });
    const before = JSON.stringify(await t.stored(card.id));
    const dry = await buses.client.request(
      BoardsOps.move, { boardId: board.id, taskId: card.id, from_column_id: 'todo', to_column_id: 'done', dry_run: true }, { userId: ALICE },
    );
    expect(dry.applied_actions).toEqual([{ op: 'set', field: 'status', from: 'todo', to: 'done' }]);
    expect(JSON.stringify(await t.stored(card.id))).toBe(before);
  });
});
