import { describe, expect, it } from 'vitest';
import { MemoryBus } from '@app/shared/bus';
import { CommonConfig, loadConfig } from '@app/shared/config';
import { fixedClock } from '@app/shared/domain';
import { sweptSeq } from '@app/shared/events';
import { silentLogger } from '@app/shared/log';
import { Collections } from '@app/shared/store';
import { appendTestEvents, testStore } from '@app/shared/testing';
import { eventWork } from '../../src/events/background.js';

/** The query service's background retention sweep: old events and finished deliveries go, the rest stays. */
describe('event retention sweep (background work)', () => {
  it('removes events and finished deliveries older than EVENT_RETENTION_DAYS when it starts', async () => {
    await using store = await testStore();
    const now = new Date('2026-03-10T00:00:00.000Z');
    await appendTestEvents(store, [{ type: 'task.created' }, { type: 'task.updated' }], new Date('2026-03-01T00:00:00.000Z'));
    await appendTestEvents(store, [{ type: 'task.updated' }], new Date('2026-03-09T00:00:00.000Z'));
    const delivery = (id: string, status: string, updated_at: string) => ({ _id: id, webhook_id: 'w', status, updated_at });
    await store.collection(Collections.webhookDeliveries).insertMany([
      delivery('old-delivered', 'delivered', '2026-03-01T00:00:00.000Z'),
      delivery('old-failed', 'failed', '2026-03-01T00:00:00.000Z'),
      delivery('old-pending', 'pending', '2026-03-01T00:00:00.000Z'),
      delivery('new-delivered', 'delivered', '2026-03-09T00:00:00.000Z'),
    ]);
    const work = await eventWork({ tickMs: 10_000 })({
      store, clock: fixedClock(now.toISOString()), log: silentLogger(), bus: new MemoryBus(), config: loadConfig(CommonConfig, { EVENT_RETENTION_DAYS: '5' }),
    });
    await work.close(); // waits for the sweep it started with
    expect(await sweptSeq(store)).toBe(2);
    expect((await store.collection(Collections.events).find({}, { sort: { seq: 1 } })).map((e) => e.seq)).toEqual([3]);
    expect((await store.collection(Collections.webhookDeliveries).find({}, { sort: { _id: 1 } })).map((d) => d._id)).toEqual(['new-delivered', 'old-pending']);
  });
});
