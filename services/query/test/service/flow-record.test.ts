import { describe, expect, test } from 'vitest';
import type { EventDoc } from '@app/shared/domain';
import { Collections, type DocumentStore } from '@app/shared/store';
import { testStore } from '@app/shared/testing';
import { migrateCardFlow } from '../../src/flow/history.js';
import { cardFlows, type CardMoveDoc } from '../../src/flow/reports.js';
import { FLOW_COUNTER, recordFromCursor } from '../../src/flow/work.js';

/** A numbered event as the relay stores it. */
const event = (seq: number, type: EventDoc['type'], extra: Partial<EventDoc> = {}): EventDoc => ({
  _id: `e${seq}`, seq, type, occurred_at: new Date(Date.UTC(2026, 4, 1, 0, 0, seq)).toISOString(), actor: 'alice', request_id: `r${seq}`, data: {}, ...extra,
});
const moved = (seq: number, taskId: string, from: string, to: string) =>
  event(seq, 'card.moved', { task_id: taskId, board_id: 'b', data: { from_column_id: from, to_column_id: to, task: { created_at: '2026-04-01T00:00:00.000Z' } } });

/** Each card's moves on board `b`, as the cycle time report reads them: [task, [[from, to, seq]…], deleted]. */
async function flows(store: DocumentStore) {
  const moves = await store.collection<CardMoveDoc>(Collections.cardMoves).find({ board_id: 'b' });
  return cardFlows(moves)
    .sort((a, b) => a.task_id.localeCompare(b.task_id))
    .map((c) => [c.task_id, c.moves.map((m) => [m.from, m.to, m.seq]), c.deleted ?? false]);
}

/** Runs `fn` on a fresh test store, closed afterwards. */
async function withStore(fn: (store: DocumentStore) => Promise<void>): Promise<void> {
  const store = await testStore();
  try {
    await fn(store);
  } finally {
    await store.close();
  }
}

/** The flow history's recording of numbered events (docs/flow.md "How the history is kept"). */
describe('flow history recording', () => {
  test('records the moves and deletes among 1,200 other events, and its cursor ends at the last event numbered', async () => {
    await withStore(async (store) => {
      const events: EventDoc[] = [];
      let seq = 0;
      for (let i = 0; i < 600; i++) events.push(event(++seq, 'task.updated', { task_id: 't1' }));
      events.push(moved(++seq, 't1', 'todo', 'doing'));
      for (let i = 0; i < 600; i++) events.push(event(++seq, 'task.updated', { task_id: 't2' }));
      events.push(moved(++seq, 't2', 'todo', 'done'), event(++seq, 'task.deleted', { task_id: 't2' }), event(++seq, 'task.updated'));
      await store.collection<EventDoc>(Collections.events).insertMany(events);

      await recordFromCursor(store);
      expect(await flows(store)).toEqual([
        ['t1', [['todo', 'doing', 601]], false],
        ['t2', [['todo', 'done', 1202]], true],
      ]);
      const counter = await store.collection<{ _id: string; seq: number }>(Collections.counters).findOne({ _id: FLOW_COUNTER });
      expect(counter?.seq).toBe(seq);

      // a later pass starts from there: a new move is recorded once, the old ones are not read again
      await store.collection<EventDoc>(Collections.events).insertMany([moved(++seq, 't1', 'doing', 'done')]);
      await recordFromCursor(store);
      await recordFromCursor(store);
      expect((await flows(store))[0]).toEqual(['t1', [['todo', 'doing', 601], ['doing', 'done', seq]], false]);
    });
  });

  test('1,100 moves between other events are recorded in passes of 500, each once, also when replayed', async () => {
    await withStore(async (store) => {
      const events: EventDoc[] = [];
      let seq = 0;
      for (let i = 0; i < 1_100; i++) events.push(event(++seq, 'task.updated', { task_id: `t${i}` }), moved(++seq, `t${i}`, 'todo', 'doing'));
      await store.collection<EventDoc>(Collections.events).insertMany(events);
      await recordFromCursor(store);
      expect(await store.collection(Collections.cardMoves).countDocuments({})).toBe(1_100);
      expect((await store.collection<{ _id: string; seq: number }>(Collections.counters).findOne({ _id: FLOW_COUNTER }))?.seq).toBe(seq);

      // a replay from the start (a cursor lost in a crash, a second replica) adds nothing
      await store.collection(Collections.counters).updateOne({ _id: FLOW_COUNTER }, { $set: { seq: 0 } });
      await recordFromCursor(store);
      expect(await store.collection(Collections.cardMoves).countDocuments({})).toBe(1_100);
    });
  });

  test('a card moved 3,000 times costs one small record per move, and its history reads back in order', async () => {
    await withStore(async (store) => {
      const events: EventDoc[] = [];
      for (let seq = 1; seq <= 3_000; seq++) events.push(seq % 2 ? moved(seq, 't1', 'doing', 'review') : moved(seq, 't1', 'review', 'doing'));
      await store.collection<EventDoc>(Collections.events).insertMany(events);
      await recordFromCursor(store);
      const [t1] = await flows(store);
      expect((t1![1] as unknown[]).length).toBe(3_000);
      expect((t1![1] as number[][]).map((m) => m[2])).toEqual(Array.from({ length: 3_000 }, (_, i) => i + 1));
      const largest = Math.max(...(await store.collection(Collections.cardMoves).find({})).map((d) => JSON.stringify(d).length));
      expect(largest).toBeLessThan(400);
    });
  });

  test('card histories of the earlier layout (one document per card) become move records, deleted marks kept', async () => {
    await withStore(async (store) => {
      const at = (h: number) => `2026-05-01T0${h}:00:00.000Z`;
      await store.collection(Collections.cardFlow).insertMany([
        { _id: 'b:t1', board_id: 'b', task_id: 't1', created_at: at(0), last_seq: 9, moves: [{ from: 'todo', to: 'doing', at: at(1), seq: 3 }, { from: 'doing', to: 'done', at: at(2), seq: 9 }] },
        { _id: 'b:t2', board_id: 'b', task_id: 't2', created_at: at(0), last_seq: 4, deleted: true, moves: [{ from: 'todo', to: 'done', at: at(3), seq: 4 }] },
      ]);
      expect(await migrateCardFlow(store)).toBe(2);
      expect(await flows(store)).toEqual([
        ['t1', [['todo', 'doing', 3], ['doing', 'done', 9]], false],
        ['t2', [['todo', 'done', 4]], true],
      ]);
      expect(await store.collection(Collections.cardFlow).countDocuments({})).toBe(0);
      expect(await migrateCardFlow(store)).toBe(0);
    });
  });
});
