import { afterEach, describe, expect, it } from 'vitest';
import { sweepEvents, eventIndexes } from '../events/feed.js';
import { Collections } from '../store/collections.js';
import type { DocumentStore } from '../store/port.js';

/** An event document as the outbox stores it (shared/src/domain/events.ts), for these tests. */
interface EventRow extends Record<string, unknown> {
  _id: string;
  seq: number;
  type: string;
  occurred_at: string;
  task_id: string;
  board_id?: string;
  data: Record<string, unknown>;
}

const DAY = 86_400_000;
const START = Date.parse('2026-01-01T00:00:00.000Z');

/** Event `seq`: one per minute from START, on boards b0/b1/b2 and tasks t0..t6. */
const event = (seq: number, at = START + seq * 60_000): EventRow => ({
  _id: `e${String(seq).padStart(6, '0')}`,
  seq,
  type: seq % 5 === 0 ? 'task.created' : 'task.updated',
  occurred_at: new Date(at).toISOString(),
  task_id: `t${seq % 7}`,
  ...(seq % 4 === 3 ? {} : { board_id: `b${seq % 3}` }),
  data: { n: seq, text: `event ${seq}` },
});

const seqs = (docs: { seq: number }[]) => docs.map((d) => d.seq);
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

/**
 * Contract of the history collections (the events outbox, Idempotency-Key records, webhook
 * deliveries; docs/store.md "History collections"), run against every backend: `open` is called
 * for every store of a test and must open the same data each time (the same data folder or
 * database), so a test can close its store and read again after a restart. The collections are
 * emptied at the start of each test.
 */
export function historyContract(label: string, open: () => Promise<DocumentStore>): void {
  describe(`history collections: ${label}`, () => {
    const opened: DocumentStore[] = [];
    const start = async () => {
      const store = await open();
      opened.push(store);
      await store.ensureIndexes(eventIndexes);
      return store;
    };
    const fresh = async () => {
      const store = await start();
      for (const name of [Collections.events, Collections.idempotency, Collections.webhookDeliveries]) await store.collection(name).deleteMany({});
      await store.collection(Collections.counters).deleteMany({ _id: 'events_swept' });
      return store;
    };
    afterEach(async () => {
      for (const s of opened.splice(0)) await s.close();
    });

    it('reads events by seq, board and task after a restart', async () => {
      const first = await fresh();
      const all = range(1, 600).map((s) => event(s));
      // written as the writers do: a few per transaction, the others one by one
      await first.withTransaction(async (session) => first.collection<EventRow>(Collections.events).insertMany(all.slice(0, 300), { session }));
      for (const e of all.slice(300)) await first.collection<EventRow>(Collections.events).insertOne(e);
      await first.close();

      const store = await start();
      const events = store.collection<EventRow>(Collections.events);
      expect(seqs(await events.find({ seq: { $gt: 590 } }, { sort: { seq: 1 }, limit: 100 }))).toEqual(range(591, 600));
      expect(seqs(await events.find({}, { sort: { seq: -1 }, limit: 1, projection: { seq: 1 } }))).toEqual([600]);
      const onBoard = all.filter((e) => e.board_id === 'b1' && e.seq > 100).map((e) => e.seq);
      expect(seqs(await events.find({ seq: { $gt: 100 }, board_id: 'b1' }, { sort: { seq: 1 }, limit: 20 }))).toEqual(onBoard.slice(0, 20));
      expect(seqs(await events.find({ seq: { $gt: 100 }, board_id: 'b1' }, { sort: { seq: 1 }, skip: 20, limit: 20 }))).toEqual(onBoard.slice(20, 40));
      const typed = all.filter((e) => e.type === 'task.created' && e.task_id === 't3').map((e) => e.seq);
      expect(seqs(await events.find({ task_id: 't3', type: { $in: ['task.created'] } }, { sort: { seq: 1 } }))).toEqual(typed);
      expect(await events.countDocuments({ board_id: { $exists: false } })).toBe(all.filter((e) => e.board_id === undefined).length);
      expect(await events.findOne({ _id: event(42)._id })).toEqual(event(42));
      expect(seqs(await events.find({ 'data.n': { $gte: 598 } }, { sort: { seq: -1 } }))).toEqual([600, 599, 598]);
    });

    it('keeps a unique seq unique across a restart', async () => {
      const first = await fresh();
      await first.collection<EventRow>(Collections.events).insertMany(range(1, 5).map((s) => event(s)));
      await first.close();
      const store = await start();
      const events = store.collection<EventRow>(Collections.events);
      await expect(events.insertOne({ ...event(3), _id: 'other' })).rejects.toMatchObject({ code: 'CONFLICT' });
      expect(await events.countDocuments({})).toBe(5);
    });

    it('retention removes expired events, keys and delivery logs for good', async () => {
      const store = await fresh();
      const events = store.collection<EventRow>(Collections.events);
      await events.insertMany(range(1, 1_500).map((s) => event(s)));
      const keys = store.collection(Collections.idempotency);
      const deliveries = store.collection(Collections.webhookDeliveries);
      for (let i = 0; i < 30; i++) {
        await keys.insertOne({ _id: `k${i}`, state: 'done', expires_at: new Date(START + (i - 15) * DAY).toISOString() });
        await deliveries.insertOne({ _id: `d${i}`, webhook_id: 'w1', seq: i + 1, status: i % 3 === 0 ? 'pending' : 'delivered', updated_at: new Date(START + (i - 15) * DAY).toISOString() });
      }
      // every event of the first 1,000 minutes is older than 7 days at START + 7 days + 1,000 minutes
      const now = new Date(START + 7 * DAY + 1_000 * 60_000 + 30_000);
      expect(await sweepEvents(store, now, 7)).toBe(1_000);
      expect(await keys.deleteMany({ expires_at: { $lt: new Date(START).toISOString() } })).toEqual({ deletedCount: 15 });
      const cutoff = new Date(START).toISOString();
      const finished = range(0, 14).filter((i) => i % 3 !== 0).length;
      expect(await deliveries.deleteMany({ status: { $in: ['delivered', 'failed'] }, updated_at: { $lt: cutoff } })).toEqual({ deletedCount: finished });
      const check = async (s: DocumentStore) => {
        const ev = s.collection<EventRow>(Collections.events);
        expect(await ev.countDocuments({})).toBe(500);
        expect(seqs(await ev.find({ seq: { $gt: 0 } }, { sort: { seq: 1 }, limit: 3 }))).toEqual([1_001, 1_002, 1_003]);
        expect(await ev.findOne({ _id: event(999)._id })).toBeNull();
        expect(await ev.countDocuments({ seq: { $lte: 1_000 } })).toBe(0);
        expect(await s.collection(Collections.idempotency).countDocuments({})).toBe(15);
        expect(await s.collection(Collections.webhookDeliveries).countDocuments({})).toBe(30 - finished);
      };
      await check(store);
      await store.close();
      await check(await start());
    });

    it('never hands out an uncommitted or deleted event', async () => {
      const store = await fresh();
      const events = store.collection<EventRow>(Collections.events);
      await events.insertMany(range(1, 50).map((s) => event(s)));
      const newest = () => events.find({ seq: { $gt: 40 } }, { sort: { seq: 1 }, limit: 100 });
      expect(seqs(await newest())).toEqual(range(41, 50)); // read once: what readers touch now
      let inside: number[] = [];
      let outside: number[] = [];
      await expect(
        store.withTransaction(async (session) => {
          await events.insertOne(event(51), { session });
          await events.deleteOne({ seq: 45 }, { session });
          inside = seqs(await events.find({ seq: { $gt: 40 } }, { sort: { seq: 1 }, session }));
          outside = seqs(await newest());
          throw new Error('abort');
        }),
      ).rejects.toThrow('abort');
      expect(inside).toEqual([...range(41, 44), ...range(46, 51)]);
      expect(outside).toEqual(range(41, 50));
      expect(seqs(await newest())).toEqual(range(41, 50));
      expect(await events.findOne({ seq: 51 })).toBeNull();

      await events.deleteOne({ seq: 45 });
      await events.deleteMany({ seq: { $in: [48, 49] } });
      const left = [...range(41, 44), 46, 47, 50];
      expect(seqs(await newest())).toEqual(left);
      expect(await events.findOne({ _id: event(45)._id })).toBeNull();
      expect(await events.countDocuments({ seq: { $gt: 40 } })).toBe(left.length);
      await events.updateOne({ seq: 46 }, { $set: { type: 'task.deleted' } });
      expect((await events.findOne({ seq: 46 }))?.type).toBe('task.deleted');
      await store.close();
      const again = await start();
      expect(seqs(await again.collection<EventRow>(Collections.events).find({ seq: { $gt: 40 } }, { sort: { seq: 1 } }))).toEqual(left);
      expect((await again.collection<EventRow>(Collections.events).findOne({ seq: 46 }))?.type).toBe('task.deleted');
    });

    it('applies a transaction on history and other collections all or nothing', async () => {
      const store = await fresh();
      const events = store.collection<EventRow>(Collections.events);
      const keys = store.collection<{ _id: string; state: string; expires_at: string }>(Collections.idempotency);
      await keys.insertOne({ _id: 'k', state: 'running', expires_at: new Date(START).toISOString() });
      await store.withTransaction(async (session) => {
        await store.collection(Collections.counters).updateOne({ _id: 'events_test' }, { $inc: { seq: 2 } }, { upsert: true, session });
        await events.insertMany([event(1), event(2)], { session });
        await keys.updateOne({ _id: 'k', state: 'running' }, { $set: { state: 'done' } }, { session });
      });
      const upserted = await keys.findOneAndUpdate({ _id: 'k2' }, { $set: { state: 'running', expires_at: 'x' } }, { upsert: true });
      expect(upserted?._id).toBe('k2');
      await store.close();
      const again = await start();
      expect(seqs(await again.collection<EventRow>(Collections.events).find({}, { sort: { seq: 1 } }))).toEqual([1, 2]);
      expect((await again.collection<{ _id: string; state: string }>(Collections.idempotency).find({}, { sort: { _id: 1 } })).map((k) => [k._id, k.state])).toEqual([['k', 'done'], ['k2', 'running']]);
      await again.collection(Collections.counters).deleteMany({ _id: 'events_test' });
    });
  });
}
