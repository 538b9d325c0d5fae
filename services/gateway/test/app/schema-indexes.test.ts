import { describe, expect, it, vi } from 'vitest';
import { boardsService } from '@app/boards';
import { queryService } from '@app/query';
import { sprintsService } from '@app/sprints';
import { tasksService } from '@app/tasks';
import { MemoryBus } from '@app/shared/bus';
import { silentLogger } from '@app/shared/log';
import { serveServices } from '@app/shared/runtime';
import { SCHEMA_INDEXES, type IndexSpec } from '@app/shared/store';
import { testStore } from '@app/shared/testing';
import { testApp } from './helpers.js';

/**
 * One definition of each collection's unique and TTL indexes (docs/store.md "One definition per
 * collection"), ensured by every process that writes: a service started alone (its own replica,
 * on a fresh database) leaves no collection it writes without them, e.g. the Idempotency-Key
 * records' TTL index, which the query service's writes (webhooks, views) rely on as much as the
 * tasks service's.
 */
describe('every collection’s unique and TTL indexes, whichever process starts first', () => {
  const names = (calls: IndexSpec[][]) => new Set(calls.flat().map((s) => `${s.collection}.${s.name ?? JSON.stringify(s.keys)}`));
  const schema = SCHEMA_INDEXES.map((s) => `${s.collection}.${s.name}`);

  it.each([tasksService, boardsService, sprintsService, queryService].map((d) => [d.name, d] as const))('the %s service alone ensures them all', async (_name, def) => {
    await using store = await testStore();
    const ensure = vi.spyOn(store, 'ensureIndexes');
    const bus = new MemoryBus();
    const served = await serveServices([def], { bus, store, log: silentLogger() });
    try {
      expect([...names(ensure.mock.calls.map(([specs]) => specs))]).toEqual(expect.arrayContaining(schema));
      expect(schema).toEqual(expect.arrayContaining(['idempotency.idempotency_ttl', 'events.events_seq', 'users.username_unique']));
    } finally {
      for (const s of served) await s.close();
      await bus.close();
    }
  });

  it('the gateway alone ensures them all', async () => {
    const store = await testStore();
    const ensure = vi.spyOn(store, 'ensureIndexes');
    await using _app = await testApp({ store });
    expect([...names(ensure.mock.calls.map(([specs]) => specs))]).toEqual(expect.arrayContaining(schema));
  });
});
