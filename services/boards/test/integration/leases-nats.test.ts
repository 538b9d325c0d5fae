import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NatsBus } from '@app/shared/bus';
import { BoardsOps, HealthOps, LeasesOps, type AnyOp, type In, type Out } from '@app/shared/contracts';
import { silentLogger } from '@app/shared/log';
import { rejects, startNatsServer, uniquePrefix, type NatsServer } from '@app/shared/testing';
import { entry, startChild, tempDir, type Child } from '../../../gateway/test/integration/child.js';

/**
 * Cards claimed under a lease with the boards service in its own process (the built
 * `services/boards/dist/main.js`, alone on its own DATA_DIR with the embedded store) and the
 * claimers in this one, each on its own NATS connection to a private nats-server: the claim's
 * guarantees hold across processes and connections, and a lease ends on the service's own clock.
 * Needs `npm run build` first (`npm test` builds).
 */
const ALICE = randomUUID();
const BOB = randomUUID();
const CLAIMERS = 20;

let nats: NatsServer;
let dataDir: Awaited<ReturnType<typeof tempDir>>;
let service: Child;
let buses: NatsBus[] = [];

/** Sends `op` as `userId` on claimer connection `i`. */
const call = <O extends AnyOp>(i: number, op: O, input: In<O>, userId = ALICE): Promise<Out<O>> =>
  buses[i % buses.length]!.request(op, input, { userId });

/** Polls `fn` every 50 ms until it returns a value other than undefined (at most `timeoutMs`). */
async function until<T>(fn: () => Promise<T | undefined>, what: string, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${timeoutMs} ms: ${service.stderr() || service.stdout()}`);
    await sleep(50);
  }
}

beforeAll(async () => {
  nats = await startNatsServer();
  dataDir = await tempDir('leases-nats-');
  const prefix = uniquePrefix();
  service = startChild(entry('boards'), [], {
    NATS_URL: nats.url, BUS_PREFIX: prefix, EMBEDDED_STANDALONE: 'true', DATA_DIR: dataDir.dir, LOG_LEVEL: 'silent', NODE_ENV: 'test',
    METRICS_ENABLED: 'false',
  });
  const log = silentLogger();
  buses = await Promise.all(Array.from({ length: CLAIMERS }, (_, i) => NatsBus.connect({ servers: nats.url, prefix, name: `claimer-${i}`, log })));
  await until(() => buses[0]!.request(HealthOps.boards, {}, {}), 'the boards service answering');
}, 120_000);

afterAll(async () => {
  for (const b of buses) await b.close();
  await service?.stop('SIGTERM');
  await nats?.stop();
  await dataDir?.remove();
});

/** A board with a To Do column ordered by `metadata.order` and `n` cards in it, created over the bus. */
async function boardWith(n: number): Promise<{ boardId: string; cards: string[] }> {
  const columns = [{ id: 'todo', name: 'To Do', query: "status = 'todo' ORDER BY metadata.order ASC" }, { id: 'done', name: 'Done', query: "status = 'done'" }];
  const board = await call(0, BoardsOps.create, { name: 'agents', board_type: 'private', columns });
  const cards: string[] = [];
  for (let i = 0; i < n; i++) cards.push((await call(0, BoardsOps.createTask, { boardId: board.id, title: `card ${i}`, status: 'todo', metadata: { order: i } })).id);
  return { boardId: board.id, cards };
}

describe('claiming cards over NATS, the boards service in its own process', () => {
  it('20 claimers on 20 connections take a column of 100 cards: every card exactly once, none twice', async () => {
    const { boardId, cards } = await boardWith(100);
    const claimAll = async (i: number) => {
      const got: string[] = [];
      for (;;) {
        const r = await call(i, LeasesOps.claim, { boardId, columnId: 'todo', lease_seconds: 600 });
        if (r === null) return got;
        expect(r.task.lease).toMatchObject({ id: r.lease_id, holder: ALICE, column_id: 'todo' });
        got.push(r.task.id);
      }
    };
    const perClaimer = await Promise.all(Array.from({ length: CLAIMERS }, (_, i) => claimAll(i)));
    const claimed = perClaimer.flat();
    expect(claimed).toHaveLength(100);
    expect(new Set(claimed).size).toBe(100);
    expect([...claimed].sort()).toEqual([...cards].sort());
    expect(perClaimer.filter((mine) => mine.length > 0).length).toBeGreaterThan(1);
  });

  it('a claimer that stops renewing loses the card when its lease ends, and another takes it', async () => {
    const { boardId, cards: [card] } = await boardWith(1);
    const first = (await call(0, LeasesOps.claim, { boardId, columnId: 'todo', lease_seconds: 1 }))!;
    expect(first.task.id).toBe(card);
    // the card stays taken until the service's clock passes the lease's end; then the other claimer gets it
    const second = await until(async () => (await call(1, LeasesOps.claim, { boardId, columnId: 'todo', lease_seconds: 600 })) ?? undefined, 'the lease ending');
    expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(first.expires_at));
    expect([second.task.id, second.task.lease?.holder, second.lease_id === first.lease_id]).toEqual([card, ALICE, false]);
    await rejects(call(0, LeasesOps.renew, { taskId: card!, lease_id: first.lease_id }), 'LEASE_NOT_HELD');
    const done = await call(1, LeasesOps.complete, { taskId: card!, lease_id: second.lease_id, to_column_id: 'done' });
    expect(done.task).toMatchObject({ id: card, status: 'done' });
    expect(done.task).not.toHaveProperty('lease');
    // a user who cannot read the card learns nothing about it
    await rejects(call(2, LeasesOps.release, { taskId: card!, lease_id: second.lease_id }, BOB), 'TASK_NOT_FOUND');
  });
});
