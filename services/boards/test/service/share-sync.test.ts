import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { BoardsOps } from '@app/shared/contracts';
import type { TaskDoc } from '@app/shared/domain';
import { silentLogger } from '@app/shared/log';
import { Collections, type BulkResult, type DocumentStore, type Session, type UpdateResult } from '@app/shared/store';
import { eventually, FaultyStore } from '@app/shared/testing';
import { recordShareSync, resumeShareSyncs, SHARE_ANSWER_WAIT_MS, SHARE_SYNC_BATCH, SHARE_SYNC_IDLE_MS } from '../../src/share-sync.js';
import { BOB, CAROL, buildBoards, type Fixture } from './fixture.js';

/**
 * Sharing a board with many cards (docs/boards.md "Sharing a board with many cards"): the cards
 * take the board's group and permission in transactions of bounded size; share waits for them a
 * short while (on the service's clock, frozen here unless a test moves it) and answers with
 * `cards_sharing: "pending"` while the rest goes on in the background; a share interrupted between two of those transactions is completed by a
 * retry, by the next share or unshare of the board, or by the boards service's background pass.
 */

const CARDS = 2_500;

/** Documents each transaction wrote, per collection; one entry per run of a transaction's function. */
type TxnWrites = Record<string, number>;

/** Position of the options argument (with `session`) of each collection write. */
const WRITE_OPTIONS: Record<string, number> = { insertOne: 1, insertMany: 1, updateOne: 2, updateMany: 2, findOneAndUpdate: 2, deleteOne: 1, deleteMany: 1, bulkWrite: 1 };

/** Documents a collection write touched, from its arguments and its result. */
function touched(op: string, args: unknown[], result: unknown): number {
  switch (op) {
    case 'insertOne': return 1;
    case 'insertMany': return (args[0] as unknown[]).length;
    case 'updateOne':
    case 'updateMany': {
      const r = result as UpdateResult;
      return r.matchedCount + (r.upsertedId === undefined ? 0 : 1);
    }
    case 'findOneAndUpdate': return result === null ? 0 : 1;
    case 'bulkWrite': {
      const r = result as BulkResult;
      return r.insertedCount + r.matchedCount + r.deletedCount;
    }
    default: return (result as { deletedCount: number }).deletedCount;
  }
}

/** Wraps `store` so that `txns` lists, for every transaction run, the documents it wrote per collection. */
function recordTransactions(store: DocumentStore): { store: DocumentStore; txns: TxnWrites[] } {
  const txns: TxnWrites[] = [];
  const bySession = new WeakMap<Session, TxnWrites>();
  const wrapped = new Proxy(store, {
    get(target, prop, receiver) {
      if (prop === 'withTransaction') {
        return <R>(fn: (s: Session) => Promise<R>) =>
          target.withTransaction((session) => {
            const writes: TxnWrites = {};
            bySession.set(session, writes);
            txns.push(writes);
            return fn(session);
          });
      }
      if (prop === 'collection') {
        return (name: string) => {
          const coll = target.collection(name);
          return new Proxy(coll, {
            get(c, p, r) {
              const v = Reflect.get(c, p, r) as unknown;
              if (typeof v !== 'function' || typeof p !== 'string' || !(p in WRITE_OPTIONS)) return typeof v === 'function' ? v.bind(c) : v;
              return async (...args: unknown[]) => {
                const result = await (v as (...a: unknown[]) => Promise<unknown>).apply(c, args);
                const session = (args[WRITE_OPTIONS[p]!] as { session?: Session } | undefined)?.session;
                const writes = session && bySession.get(session);
                if (writes) writes[name] = (writes[name] ?? 0) + touched(p, args, result);
                return result;
              };
            },
          });
        };
      }
      const v = Reflect.get(target, prop, receiver) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
  return { store: wrapped, txns };
}

/** Wraps `store` so that `before()` runs ahead of every transaction (its function's first run). */
const beforeTransactions = (before: () => Promise<void>) => (store: DocumentStore): DocumentStore =>
  new Proxy(store, {
    get(target, prop, receiver) {
      if (prop === 'withTransaction') {
        return async <R>(fn: (s: Session) => Promise<R>) => {
          await before();
          return target.withTransaction(fn);
        };
      }
      const v = Reflect.get(target, prop, receiver) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });

/**
 * Puts `count` cards on `boardId` straight into the store (clones of one card created through the
 * API), plus a deleted card of the board and a card of another board, both unshared. Returns the
 * ids of those two.
 */
async function seedCards(t: Fixture, boardId: string, count: number): Promise<{ deleted: string; elsewhere: string }> {
  const model = await t.stored((await t.newCard(boardId, { title: 'card 0' })).id);
  const docs: TaskDoc[] = [];
  for (let i = 1; i < count; i++) docs.push({ ...structuredClone(model), _id: randomUUID(), title: `card ${i}` });
  for (let i = 0; i < docs.length; i += 500) await t.tasks.insertMany(docs.slice(i, i + 500));
  const deleted = randomUUID();
  const elsewhere = randomUUID();
  await t.tasks.insertMany([
    { ...structuredClone(model), _id: deleted, deleted: true },
    { ...structuredClone(model), _id: elsewhere, boardId: randomUUID() },
  ]);
  return { deleted, elsewhere };
}

/** Live cards of `boardId` carrying `groupId` with `permission`. */
const cardsWith = (t: Fixture, boardId: string, groupId: string, permission: string) =>
  t.tasks.countDocuments({ boardId, deleted: false, groupId, groupPermission: permission });

/** Pending sharing updates in the store. */
const pending = (t: Fixture) => t.store.collection(Collections.boardShareSync).countDocuments({});

/**
 * A boards fixture whose service store fails the `failAt`-th card batch (a transaction's
 * `updateMany` on tasks). Each batch's transaction runs once here (no simulated write conflict):
 * the count is of batches, not of attempts.
 */
async function crashingAt(failAt: number) {
  let faulty: FaultyStore | undefined;
  const t = await buildBoards({ serviceStore: (s) => (faulty = new FaultyStore(s)), storeOptions: { failFirstAttempt: false } });
  let batches = 0;
  faulty!.failOn((c) => c.collection === Collections.tasks && c.op === 'updateMany' && c.inTransaction && ++batches === failAt);
  return t;
}

/**
 * Shares `boardId` on a fixture of {@link crashingAt} and asserts the injected fault interrupted
 * the share (it answers 503 `STORE_UNAVAILABLE`), so a case never passes on a share that completed.
 */
async function interruptedShare(t: Fixture, input: { boardId: string; group_id: string; permission: 'r' | 'rw' }): Promise<void> {
  const outcome = await t.call(BoardsOps.share, input).then(
    () => 'answered',
    (e: unknown) => e,
  );
  expect(outcome, 'the injected fault interrupts the share').toMatchObject({ code: 'STORE_UNAVAILABLE' });
}

describe('sharing a board with many cards', () => {
  it(`gives ${CARDS} cards the group in transactions of at most ${SHARE_SYNC_BATCH} cards, all of them before share answers within its wait`, async () => {
    let rec: ReturnType<typeof recordTransactions> | undefined;
    await using t = await buildBoards({ serviceStore: (s) => (rec = recordTransactions(s)).store });
    const group = await t.newGroup([BOB]);
    const board = await t.newBoard();
    const { deleted, elsewhere } = await seedCards(t, board.id, CARDS);
    rec!.txns.length = 0;

    await t.call(BoardsOps.share, { boardId: board.id, group_id: group, permission: 'r' });

    const cardWrites = rec!.txns.map((w) => w[Collections.tasks] ?? 0);
    expect(Math.max(...cardWrites)).toBeLessThanOrEqual(SHARE_SYNC_BATCH);
    expect(cardWrites.reduce((a, b) => a + b, 0)).toBe(CARDS);
    // every transaction stays bounded, whatever it writes beside the cards (board, events, progress)
    const totals = rec!.txns.map((w) => Object.values(w).reduce((a, b) => a + b, 0));
    expect(Math.max(...totals)).toBeLessThanOrEqual(SHARE_SYNC_BATCH + 5);
    expect(await cardsWith(t, board.id, group, 'r')).toBe(CARDS);
    expect(await pending(t)).toBe(0);
    // a deleted card and another board's card are not the board's live cards
    expect((await t.stored(deleted)).groupId).toBeUndefined();
    expect((await t.stored(elsewhere)).groupId).toBeUndefined();

    // a change of permission touches every card again, in the same bounded transactions
    rec!.txns.length = 0;
    await t.call(BoardsOps.share, { boardId: board.id, group_id: group, permission: 'rw' });
    expect(Math.max(...rec!.txns.map((w) => w[Collections.tasks] ?? 0))).toBeLessThanOrEqual(SHARE_SYNC_BATCH);
    expect(await cardsWith(t, board.id, group, 'rw')).toBe(CARDS);
  });

  it('answers a share once it committed while later card batches still run, and the board read says cards_sharing "pending" until every card carries the group', async () => {
    let gate: Promise<void> | undefined;
    let reached: () => void = () => undefined;
    let txns = 0;
    // holds every transaction from the share's second card batch on (its third transaction) at `gate`
    const slowed = beforeTransactions(async () => {
      if (gate && ++txns >= 3) {
        reached();
        await gate;
      }
    });
    await using t = await buildBoards({ serviceStore: slowed });
    const group = await t.newGroup([BOB]);
    const board = await t.newBoard();
    const cards = 3 * SHARE_SYNC_BATCH;
    await seedCards(t, board.id, cards);
    let release: () => void = () => undefined;
    gate = new Promise((resolve) => (release = resolve));
    const held = new Promise<void>((resolve) => (reached = resolve));

    const answer = t.call(BoardsOps.share, { boardId: board.id, group_id: group, permission: 'rw' });
    await held;
    // the share's wait for its cards runs out while the second batch is held
    t.clock.advance(SHARE_ANSWER_WAIT_MS);
    expect(await answer).toMatchObject({ group_id: group, permission: 'rw', board_type: 'shared', cards_sharing: 'pending' });
    expect(await cardsWith(t, board.id, group, 'rw')).toBe(SHARE_SYNC_BATCH);
    expect(await t.call(BoardsOps.get, { boardId: board.id })).toMatchObject({ group_id: group, cards_sharing: 'pending' });
    expect(await t.call(BoardsOps.get, { boardId: board.id }, BOB)).toMatchObject({ cards_sharing: 'pending' });
    // lists never carry it
    const { owned_boards } = await t.call(BoardsOps.list, {});
    expect(owned_boards.find((b) => b.id === board.id)).not.toHaveProperty('cards_sharing');

    release();
    const after = await eventually('the board read without cards_sharing', () => t.call(BoardsOps.get, { boardId: board.id }), (b) => !('cards_sharing' in b));
    expect(after).toMatchObject({ group_id: group, permission: 'rw' });
    expect(await cardsWith(t, board.id, group, 'rw')).toBe(cards);
    expect(await pending(t)).toBe(0);
  });

  it('leaves a share interrupted between two card batches shared, and completes it when the share is retried', async () => {
    await using t = await crashingAt(3);
    const group = await t.newGroup([BOB]);
    const board = await t.newBoard();
    await seedCards(t, board.id, CARDS);

    await interruptedShare(t, { boardId: board.id, group_id: group, permission: 'rw' });
    // the board committed; two batches did, the third rolled back
    expect(await t.boards.findOne({ _id: board.id })).toMatchObject({ groupId: group, groupPermission: 'rw', board_type: 'shared' });
    expect(await cardsWith(t, board.id, group, 'rw')).toBe(2 * SHARE_SYNC_BATCH);
    expect(await pending(t)).toBe(1);

    expect(await t.call(BoardsOps.share, { boardId: board.id, group_id: group, permission: 'rw' })).toMatchObject({ group_id: group, permission: 'rw' });
    expect(await cardsWith(t, board.id, group, 'rw')).toBe(CARDS);
    expect(await pending(t)).toBe(0);
  });

  it('completes an interrupted share in the background pass once nobody has worked on it for a while', async () => {
    await using t = await crashingAt(2);
    const group = await t.newGroup([BOB]);
    const board = await t.newBoard();
    await seedCards(t, board.id, CARDS);
    await interruptedShare(t, { boardId: board.id, group_id: group, permission: 'r' });
    expect(await cardsWith(t, board.id, group, 'r')).toBe(SHARE_SYNC_BATCH);

    const deps = { store: t.store, clock: t.clock, log: silentLogger() };
    // a share still at work (its request may be running) is left alone
    expect(await resumeShareSyncs(deps)).toEqual([]);
    t.clock.advance(SHARE_SYNC_IDLE_MS);
    expect(await resumeShareSyncs(deps)).toEqual([board.id]);
    expect(await cardsWith(t, board.id, group, 'r')).toBe(CARDS);
    expect(await pending(t)).toBe(0);
  });

  it('ends with the last share\'s group on every card when a newer share supersedes an interrupted one', async () => {
    await using t = await crashingAt(2);
    const first = await t.newGroup([BOB]);
    const second = await t.newGroup([CAROL]);
    const board = await t.newBoard();
    await seedCards(t, board.id, CARDS);
    await interruptedShare(t, { boardId: board.id, group_id: first, permission: 'rw' });
    expect(await cardsWith(t, board.id, first, 'rw')).toBe(SHARE_SYNC_BATCH);

    await t.call(BoardsOps.share, { boardId: board.id, group_id: second, permission: 'r' });
    // no card is left to the first group's members once the second share has answered
    expect(await cardsWith(t, board.id, second, 'r')).toBe(CARDS);
    expect(await t.tasks.countDocuments({ boardId: board.id, groupId: first })).toBe(0);
  });

  it('follows a share committed elsewhere while its batches run: every card ends with the newer group', async () => {
    let before: (() => Promise<void>) | undefined;
    let txns = 0;
    // runs `before` ahead of the share's third transaction (its second card batch)
    const hooked = beforeTransactions(async () => {
      if (++txns === 3 && before) await before();
    });
    await using t = await buildBoards({ serviceStore: hooked });
    const first = await t.newGroup([BOB]);
    const second = await t.newGroup([CAROL]);
    const board = await t.newBoard();
    await seedCards(t, board.id, CARDS);
    // another boards replica commits a share of the same board to the second group (its own
    // batches not started yet)
    before = () =>
      t.store.withTransaction(async (session) => {
        await t.boards.updateOne({ _id: board.id }, { $set: { groupId: second, groupPermission: 'r' } }, { session });
        await recordShareSync(t.store, session, board.id, second, 'r', t.clock.now());
      });
    txns = 0;

    await t.call(BoardsOps.share, { boardId: board.id, group_id: first, permission: 'rw' });
    expect(await cardsWith(t, board.id, second, 'r')).toBe(CARDS);
    expect(await pending(t)).toBe(0);
  });

  it('completes an interrupted share before unshare answers; the cards keep that share\'s group', async () => {
    await using t = await crashingAt(2);
    const group = await t.newGroup([BOB]);
    const board = await t.newBoard();
    await seedCards(t, board.id, CARDS);
    await interruptedShare(t, { boardId: board.id, group_id: group, permission: 'r' });
    // one card batch committed before the fault, the rest waits for whoever completes the share
    expect(await cardsWith(t, board.id, group, 'r')).toBe(SHARE_SYNC_BATCH);
    expect(await pending(t)).toBe(1);

    const unshared = await t.call(BoardsOps.unshare, { boardId: board.id });
    expect(unshared).not.toHaveProperty('group_id');
    expect(await cardsWith(t, board.id, group, 'r')).toBe(CARDS);
    expect(await pending(t)).toBe(0);
  });
});
