import { describe, expect, it } from 'vitest';
import { appendEvents, EVENTS_COUNTER, OUTBOX_PART_BYTES, type EventDoc, type NewEvent, type OutboxDoc } from '@app/shared/domain';
import { AppError } from '@app/shared/errors';
import { catchUpOutbox, causalOrder, EventRelay, relayOutbox } from '@app/shared/events';
import { Collections, EmbeddedStore, type Collection, type Doc, type DocumentStore } from '@app/shared/store';
import { FaultyStore, testStore } from '@app/shared/testing';

/**
 * The outbox relay (docs/concurrency.md "The events outbox"): writes store their events unnumbered;
 * the lease holder numbers them after commit, gapless, once, per task in commit order.
 */

const stamp = { actor: 'u1', request_id: 'r1', occurred_at: '2026-03-02T09:00:00.000Z' };

/** Commits one write's events to the outbox, as `runWrite` does. */
async function write(store: DocumentStore, ...events: NewEvent[]): Promise<void> {
  await store.withTransaction((session) => appendEvents(store, session, events, stamp));
}

const updated = (taskId: string, version: number): NewEvent => ({ type: 'task.updated', task_id: taskId, data: { task: { id: taskId, version }, changes: [] } });

const numbered = (store: DocumentStore) => store.collection<EventDoc>(Collections.events).find({}, { sort: { seq: 1 } });
const pending = (store: DocumentStore) => store.collection(Collections.outbox).countDocuments({});

describe('outbox relay', () => {
  it('a write stores its events unnumbered; a pass numbers every pending write in order, gapless, and empties the outbox', async () => {
    await using store = EmbeddedStore.memory();
    await write(store, updated('a', 2), updated('b', 2));
    await write(store, updated('c', 2));
    expect(await numbered(store)).toEqual([]);
    expect(await pending(store)).toBe(2);

    const pass = await relayOutbox(store, { holder: 'p1', hold: true });
    expect(pass.busy).toBe(false);
    expect(pass.numbered.map((e) => [e.seq, e.task_id])).toEqual([[1, 'a'], [2, 'b'], [3, 'c']]);
    expect((await numbered(store)).map((e) => [e.seq, e.task_id])).toEqual([[1, 'a'], [2, 'b'], [3, 'c']]);
    expect(await pending(store)).toBe(0);

    await write(store, updated('d', 2));
    expect((await relayOutbox(store, { holder: 'p1', hold: true, leaseUntil: pass.leaseUntil })).numbered.map((e) => e.seq)).toEqual([4]);
  });

  it('one holder at a time: another holder waits while the lease runs, then takes over from the last seq, without gap or repeat', async () => {
    await using store = EmbeddedStore.memory();
    let clock = 1_000_000;
    const now = () => clock;
    await write(store, updated('a', 2));
    expect((await relayOutbox(store, { holder: 'first', hold: true, leaseMs: 3_000, now })).numbered.map((e) => e.seq)).toEqual([1]);

    // the first holder "dies" here; writes go on
    await write(store, updated('b', 2));
    await write(store, updated('c', 2));
    const waiting = await relayOutbox(store, { holder: 'second', hold: true, leaseMs: 3_000, now });
    expect(waiting).toMatchObject({ busy: true, numbered: [] });
    // a reader's one-off help is refused too while the lease runs
    expect((await relayOutbox(store, { holder: 'reader', now })).busy).toBe(true);
    expect(await pending(store)).toBe(2);

    clock += 3_001;
    const takeover = await relayOutbox(store, { holder: 'second', hold: true, leaseMs: 3_000, now });
    expect(takeover.numbered.map((e) => [e.seq, e.task_id])).toEqual([[2, 'b'], [3, 'c']]);
    expect(await store.collection(Collections.counters).findOne({ _id: EVENTS_COUNTER })).toMatchObject({ seq: 3, holder: 'second', lease_until: clock + 3_000 });
    expect((await relayOutbox(store, { holder: 'first', hold: true, leaseMs: 3_000, now })).busy).toBe(true);
    expect((await numbered(store)).map((e) => e.seq)).toEqual([1, 2, 3]);
  });

  it('a pass that fails before its commit numbers nothing; the next pass numbers the same events once', async () => {
    const store = new FaultyStore(EmbeddedStore.memory());
    await using _ = store;
    await write(store, updated('a', 2));
    await write(store, updated('b', 2));
    // the last write of the pass (the counter) fails: the events inserted before it roll back
    store.failOn((c) => c.inTransaction && c.collection === Collections.counters && (c.op === 'updateOne' || c.op === 'insertOne'));
    await expect(relayOutbox(store, { holder: 'p1', hold: true })).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
    expect(await numbered(store)).toEqual([]);
    expect(await pending(store)).toBe(2);

    expect((await relayOutbox(store, { holder: 'p1', hold: true })).numbered.map((e) => [e.seq, e.task_id])).toEqual([[1, 'a'], [2, 'b']]);
    expect(await pending(store)).toBe(0);
  });

  it('concurrent passes of one process and readers catching up number every event exactly once', async () => {
    await using store = EmbeddedStore.memory();
    const writes = Array.from({ length: 40 }, (_, i) => write(store, updated(`t${i}`, 2)));
    const passes = Array.from({ length: 6 }, () => relayOutbox(store, { hold: true, batch: 7 }).catch(() => undefined));
    await Promise.all([...writes, ...passes, catchUpOutbox(store)]);
    await catchUpOutbox(store);
    const seqs = (await numbered(store)).map((e) => e.seq);
    expect(seqs).toEqual(Array.from({ length: 40 }, (_, i) => i + 1));
    expect(new Set((await numbered(store)).map((e) => e.task_id)).size).toBe(40);
  });

  it('writes to one task come out in version order even when their ids say otherwise (clocks of different processes)', () => {
    const entry = (id: string, ...events: NewEvent[]): OutboxDoc => ({
      _id: id,
      events: events.map((e, i) => ({ _id: `${id}-${i}`, ...stamp, ...e, data: e.data })),
    });
    const entries = [entry('01', updated('a', 3)), entry('02', updated('b', 2)), entry('03', updated('a', 2), updated('c', 5)), entry('04', updated('c', 4))];
    // a: 03 (v2) before 01 (v3); c: 04 (v4) before 03 (v5); b is free to keep its place
    expect(causalOrder(entries).map((e) => e._id)).toEqual(['02', '04', '03', '01']);
    // in order already: unchanged
    const inOrder = [entry('01', updated('a', 2)), entry('02', updated('a', 3)), entry('03', updated('b', 7))];
    expect(causalOrder(inOrder).map((e) => e._id)).toEqual(['01', '02', '03']);
  });

  it('a running relay numbers what is committed and tells its listeners; close gives the lease up', async () => {
    await using store = EmbeddedStore.memory();
    const relay = new EventRelay(store, { holder: 'loop', intervalMs: 5 }).start();
    const seen: number[] = [];
    relay.onRelayed((events) => seen.push(...events.map((e) => e.seq)));
    await write(store, updated('a', 2));
    await write(store, updated('b', 2));
    await expect.poll(() => seen, { timeout: 2_000 }).toEqual([1, 2]);
    expect(relay.leading).toBe(true);
    await relay.close();
    expect(await store.collection(Collections.counters).findOne({ _id: EVENTS_COUNTER })).toMatchObject({ holder: 'loop', lease_until: 0 });
    // the lease is free at once: another holder numbers without waiting for it to expire
    await write(store, updated('c', 2));
    expect((await relayOutbox(store, { holder: 'next', hold: true })).numbered.map((e) => e.seq)).toEqual([3]);
  });

  it('a relay told of each commit numbers it at once, without polling for it', async () => {
    await using store = EmbeddedStore.memory();
    const relay = new EventRelay(store, { holder: 'signalled', pollMs: 60_000 }).start();
    const seen: number[] = [];
    relay.onRelayed((events) => seen.push(...events.map((e) => e.seq)));
    await expect.poll(() => relay.leading, { timeout: 2_000 }).toBe(true); // its first pass took the lease
    await write(store, updated('a', 2));
    relay.nudge();
    await expect.poll(() => seen, { timeout: 2_000 }).toEqual([1]);
    await write(store, updated('b', 2));
    await write(store, updated('c', 2));
    relay.nudge();
    relay.nudge();
    await expect.poll(() => seen, { timeout: 2_000 }).toEqual([1, 2, 3]);
    await relay.close();
  });

  it('a write whose events pass one outbox document is stored in several, in its transaction; the relay numbers them all in order', async () => {
    await using store = await testStore();
    // 30 updates of tasks with 200,000-character CJK descriptions: 18 MB of events, past MongoDB's 16 MiB document limit
    const description = '漢'.repeat(200_000);
    const big = (i: number): NewEvent => ({ type: 'task.updated', task_id: `t${i}`, data: { task: { id: `t${i}`, version: 2, description }, changes: [] } });
    await write(store, ...Array.from({ length: 30 }, (_, i) => big(i)));
    const parts = await store.collection<OutboxDoc>(Collections.outbox).find({}, { sort: { _id: 1 }, projection: { event_count: 1, bytes: 1 } });
    expect(parts.length).toBeGreaterThan(1);
    expect(parts.reduce((n, p) => n + p.event_count!, 0)).toBe(30);
    for (const p of parts) expect(p.bytes).toBeLessThanOrEqual(OUTBOX_PART_BYTES);

    const seen: Array<[number, string | undefined]> = [];
    for (let more = true; more;) {
      const pass = await relayOutbox(store, { holder: 'p1' });
      seen.push(...pass.numbered.map((e): [number, string | undefined] => [e.seq, e.task_id]));
      more = pass.more;
    }
    expect(seen).toEqual(Array.from({ length: 30 }, (_, i) => [i + 1, `t${i}`]));
    expect(await pending(store)).toBe(0);
  });

  it('a pass numbers at most maxEvents events and maxBytes bytes (at least one write); the backlog drains in further passes', async () => {
    await using store = await testStore();
    for (let i = 0; i < 25; i++) await write(store, updated(`t${i}`, 2));
    const counts: number[] = [];
    for (let more = true; more;) {
      const pass = await relayOutbox(store, { holder: 'p1', maxEvents: 10 });
      counts.push(pass.numbered.length);
      more = pass.more;
    }
    expect(counts).toEqual([10, 10, 5]);
    expect((await numbered(store)).map((e) => e.seq)).toEqual(Array.from({ length: 25 }, (_, i) => i + 1));

    // bytes: writes of ~300 KB each, 700 KB a pass; a write larger than the bound still goes, alone
    const text = (n: number) => 'x'.repeat(n);
    for (let i = 0; i < 4; i++) await write(store, { type: 'task.created', task_id: `b${i}`, data: { task: { id: `b${i}`, description: text(100_000) } } });
    await write(store, { type: 'task.created', task_id: 'huge', data: { task: { id: 'huge', description: text(400_000) } } });
    const sizes: number[] = [];
    for (let more = true; more;) {
      const pass = await relayOutbox(store, { holder: 'p1', maxBytes: 700_000 });
      sizes.push(pass.numbered.length);
      more = pass.more;
    }
    expect(sizes).toEqual([2, 2, 1]);
    expect(await pending(store)).toBe(0);
  });

  it('a running relay whose passes fail for their size takes smaller passes until the backlog drains', async () => {
    // the store refuses to insert more than 16 events at once, as a pass past the transaction deadline fails every time
    await using inner = EmbeddedStore.memory();
    const store = refusingLargeInserts(inner, Collections.events, 16);
    for (let i = 0; i < 100; i++) await write(store, updated(`t${i}`, 2));
    const relay = new EventRelay(store, { holder: 'loop', intervalMs: 1 }).start();
    await expect.poll(() => pending(store), { timeout: 10_000 }).toBe(0);
    await relay.close();
    expect((await numbered(store)).map((e) => e.seq)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
  });

  it("a reader's catch-up gives up by the clock of its options while another holder keeps the lease", async () => {
    await using store = EmbeddedStore.memory();
    let clock = 1_000_000;
    await write(store, updated('a', 2));
    expect((await relayOutbox(store, { holder: 'other', hold: true, leaseMs: 1e12, now: () => clock })).numbered).toHaveLength(1);
    await write(store, updated('b', 2));
    // every reading of the clock moves it 30 s: a one-minute wait ends after a few looks
    await catchUpOutbox(store, { holder: 'reader', waitMs: 60_000, now: () => (clock += 30_000) });
    expect(await pending(store)).toBe(1);
  });
});

/** `store` whose collection `name` refuses an `insertMany` of more than `most` documents (503), as a store past its deadline would. */
function refusingLargeInserts(store: DocumentStore, name: string, most: number): DocumentStore {
  const wrap = (c: Collection<Doc>): Collection<Doc> =>
    new Proxy(c, {
      get(target, prop) {
        if (prop === 'insertMany') {
          return async (docs: Doc[], opts?: Parameters<Collection<Doc>['insertMany']>[1]) => {
            if (docs.length > most) throw new AppError('STORE_UNAVAILABLE', { message: 'The transaction passed its deadline' });
            return target.insertMany(docs, opts);
          };
        }
        const v = Reflect.get(target, prop) as unknown;
        return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
      },
    });
  return new Proxy(store, {
    get(target, prop) {
      if (prop === 'collection') return (n: string) => (n === name ? wrap(target.collection(n)) : target.collection(n));
      const v = Reflect.get(target, prop) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}
