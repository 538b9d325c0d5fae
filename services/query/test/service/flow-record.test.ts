import { describe, expect, test } from 'vitest';
import type { EventDoc } from '@app/shared/domain';
import { Collections } from '@app/shared/store';
import { testStore } from '@app/shared/testing';
import { FLOW_COUNTER, recordFromCursor } from '../../src/flow/work.js';

/** A numbered event as the relay stores it. */
const event = (seq: number, type: EventDoc['type'], extra: Partial<EventDoc> = {}): EventDoc => ({
  _id: `e${seq}`, seq, type, occurred_at: new Date(Date.UTC(2026, 4, 1, 0, 0, seq)).toISOString(), actor: 'alice', request_id: `r${seq}`, data: {}, ...extra,
});
const moved = (seq: number, taskId: string, from: string, to: string) =>
  event(seq, 'card.moved', { task_id: taskId, board_id: 'b', data: { from_column_id: from, to_column_id: to } });

/** The flow history's recording of numbered events (docs/flow.md "How the history is kept"). */
describe('flow history recording', () => {
  test('records the moves and deletes among 1,200 other events, and its cursor ends at the last event numbered', async () => {
    const store = await testStore();
    try {
      const events: EventDoc[] = [];
      let seq = 0;
      for (let i = 0; i < 600; i++) events.push(event(++seq, 'task.updated', { task_id: 't1' }));
      events.push(moved(++seq, 't1', 'todo', 'doing'));
      for (let i = 0; i < 600; i++) events.push(event(++seq, 'task.updated', { task_id: 't2' }));
      events.push(moved(++seq, 't2', 'todo', 'done'), event(++seq, 'task.deleted', { task_id: 't2' }), event(++seq, 'task.updated'));
      await store.collection<EventDoc>(Collections.events).insertMany(events);

      await recordFromCursor(store);
      const cards = await store.collection<{ _id: string; moves: { from: string; to: string; seq: number }[]; deleted?: boolean }>(Collections.cardFlow).find({}, { sort: { _id: 1 } });
      expect(cards.map((c) => [c._id, c.moves.map((m) => [m.from, m.to, m.seq]), c.deleted ?? false])).toEqual([
        ['b:t1', [['todo', 'doing', 601]], false],
        ['b:t2', [['todo', 'done', 1202]], true],
      ]);
      const counter = await store.collection<{ _id: string; seq: number }>(Collections.counters).findOne({ _id: FLOW_COUNTER });
      expect(counter?.seq).toBe(seq);

      // a later pass starts from there: a new move is recorded once, the old ones are not read again
      await store.collection<EventDoc>(Collections.events).insertMany([moved(++seq, 't1', 'doing', 'done')]);
      await recordFromCursor(store);
      await recordFromCursor(store);
      const t1 = await store.collection<{ _id: string; moves: unknown[] }>(Collections.cardFlow).findOne({ _id: 'b:t1' });
      expect(t1?.moves).toHaveLength(2);
    } finally {
      await store.close();
    }
  });
  test('1,100 moves between other events are recorded in passes of 500, each once, also when replayed', async () => {
    const store = await testStore();
    try {
      const events: EventDoc[] = [];
      let seq = 0;
      for (let i = 0; i < 1_100; i++) events.push(event(++seq, 'task.updated', { task_id: `t${i}` }), moved(++seq, `t${i}`, 'todo', 'doing'));
      await store.collection<EventDoc>(Collections.events).insertMany(events);
      await recordFromCursor(store);
      expect(await store.collection(Collections.cardFlow).countDocuments({})).toBe(1_100);
      expect((await store.collection<{ _id: string; seq: number }>(Collections.counters).findOne({ _id: FLOW_COUNTER }))?.seq).toBe(seq);

      // a replay from the start (a cursor lost in a crash, a second replica) adds nothing
      await store.collection(Collections.counters).updateOne({ _id: FLOW_COUNTER }, { $set: { seq: 0 } });
      await recordFromCursor(store);
      const records = await store.collection<{ _id: string; moves: unknown[] }>(Collections.cardFlow).find({});
      expect(records.filter((r) => r.moves.length !== 1)).toEqual([]);
    } finally {
      await store.close();
    }
  });
});
