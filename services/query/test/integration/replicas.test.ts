import { afterAll, beforeAll, expect, test } from 'vitest';
import { NatsBus } from '@app/shared/bus';
import { QueryOps } from '@app/shared/contracts';
import type { Clock, TaskDoc } from '@app/shared/domain';
import { silentLogger } from '@app/shared/log';
import { Collections } from '@app/shared/store';
import { startNatsServer, testStore, uniquePrefix, type NatsServer } from '@app/shared/testing';
import { queryService } from '../../src/index.js';
import { ALICE, aTask, BOB, NOW } from '../service/fixtures.js';

const log = silentLogger();
const N = 40;

/** A replica's clock that counts the requests it served (each query read asks for the time once). */
function countingClock(): Clock & { calls: number } {
  const clock = { calls: 0, now: () => (clock.calls++, new Date(NOW)) };
  return clock;
}

let nats: NatsServer;
beforeAll(async () => {
  nats = await startNatsServer();
});
afterAll(async () => {
  await nats?.stop();
});

test('two query replicas in queue group `query` share the requests, and one carries on alone', async () => {
  const prefix = uniquePrefix();
  const store = await testStore();
  const mine = Array.from({ length: 3 }, (_, i) => aTask({ title: `mine ${i}` }));
  await store.collection<TaskDoc>(Collections.tasks).insertMany([...mine, aTask({ title: 'not mine', created_by: BOB })]);

  const connect = () => NatsBus.connect({ servers: nats.url, prefix, name: 'query-itest', log });
  const [client, busA, busB] = await Promise.all([connect(), connect(), connect()]);
  const clocks = [countingClock(), countingClock()] as const;
  try {
    const [servedA] = await Promise.all(
      [busA, busB].map((bus, i) => bus.serve(queryService.bindings({ store, clock: clocks[i]!, log }), { queue: queryService.name, log })),
    );
    const ask = () => client.request(QueryOps.tasks, { query: 'ORDER BY title ASC' }, { userId: ALICE });

    const replies = await Promise.all(Array.from({ length: N }, ask));
    for (const r of replies) expect(r.data.map((t) => t.title)).toEqual(['mine 0', 'mine 1', 'mine 2']);
    const [a, b] = clocks.map((c) => c.calls);
    expect(a! + b!).toBe(N); // each request answered exactly once
    expect(a).toBeGreaterThan(0);
    expect(b).toBeGreaterThan(0);

    await servedA!.close();
    await Promise.all(Array.from({ length: 10 }, ask));
    expect(clocks[0].calls).toBe(a);
    expect(clocks[1].calls).toBe(b! + 10);
  } finally {
    await Promise.all([client.close(), busA.close(), busB.close()]);
    await store.close();
  }
});
