import { afterAll, describe, expect, it } from 'vitest';
import { eventually } from '@app/shared/testing';
import { httpJson, startAllInOne, tempDir, type AllInOne } from './child.js';

/**
 * A committed write never loses its event, also across a crash right after the commit
 * or in the middle of the relay numbering the outbox. The all-in-one process
 * (`services/gateway/dist/main.js --all`, built by `npm test`) on a temp DATA_DIR acknowledges
 * task creates, is killed with SIGKILL, and the restarted process's feed has every acknowledged
 * create's event, numbered without gap or repeat. The restarted relay takes over once the dead
 * process's relay lease has run out (3 s), so the feed is read until it has them all.
 */
const servers: AllInOne[] = [];
const removers: Array<() => Promise<void>> = [];

afterAll(async () => {
  for (const s of servers) await s.child.stop();
  for (const remove of removers) await remove();
});

async function start(dataDir: string): Promise<AllInOne> {
  const server = await startAllInOne(dataDir);
  servers.push(server);
  return server;
}

describe('events outbox across a crash', () => {
  it('the feed after a SIGKILL and restart has the event of every acknowledged write', async () => {
    const tmp = await tempDir('events-crash-');
    removers.push(tmp.remove);
    const first = await start(tmp.dir);
    const creds = { username: 'crash', password: 'crash test password' };
    expect((await httpJson(first, 'POST', '/auth/v2/register', creds)).status).toBe(201);
    const token = (await httpJson(first, 'POST', '/auth/v2/login', creds)).body.accessToken as string;
    const acknowledged: string[] = [];
    for (let i = 0; i < 20; i++) {
      const res = await httpJson(first, 'POST', '/api/v1/tasks', { title: `task ${i}` }, token);
      expect(res.status).toBe(201);
      acknowledged.push(res.body.id);
    }
    await first.child.stop('SIGKILL');

    const second = await start(tmp.dir);
    const token2 = (await httpJson(second, 'POST', '/auth/v2/login', creds)).body.accessToken as string;
    const events = await feedUntil(second, token2, acknowledged);
    expect(events.map((e) => e.task_id)).toEqual(acknowledged);
    const seqs = events.map((e) => e.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
  }, 90_000);

  it('a SIGKILL while writes commit and the relay numbers them: after restart every acknowledged write is in the feed once, seq gapless', async () => {
    const tmp = await tempDir('events-crash-relay-');
    removers.push(tmp.remove);
    const creds = { username: 'crash', password: 'crash test password' };
    const acknowledged: string[] = [];
    let server = await start(tmp.dir);
    expect((await httpJson(server, 'POST', '/auth/v2/register', creds)).status).toBe(201);
    // two crashes: each one while 8 clients keep writing (the relay numbers every 20 ms or so)
    for (let round = 0; round < 2; round++) {
      const token = (await httpJson(server, 'POST', '/auth/v2/login', creds)).body.accessToken as string;
      const s = server;
      let stop = false;
      const clients = Array.from({ length: 8 }, async (_, c) => {
        for (let i = 0; !stop; i++) {
          const res = await httpJson(s, 'POST', '/api/v1/tasks', { title: `r${round} c${c} #${i}` }, token).catch(() => undefined);
          if (res?.status === 201 && !stop) acknowledged.push(res.body.id);
        }
      });
      await expect.poll(() => acknowledged.length, { timeout: 30_000, interval: 5 }).toBeGreaterThanOrEqual(60 * (round + 1));
      stop = true;
      await s.child.stop('SIGKILL');
      await Promise.all(clients);
      server = await start(tmp.dir);
    }
    const token = (await httpJson(server, 'POST', '/auth/v2/login', creds)).body.accessToken as string;
    const events = await feedUntil(server, token, acknowledged);
    const ids = events.map((e) => e.task_id);
    for (const id of acknowledged) expect(ids).toContain(id);
    // no repeat, no gap: one event per created task, seq 1, 2, 3, … (the user's own creates are every event)
    expect(new Set(ids).size).toBe(ids.length);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
  }, 120_000);
});

/** Reads the whole `task.created` feed until it holds every id of `want` (at most 20 s); returns it. */
function feedUntil(server: AllInOne, token: string, want: readonly string[]): Promise<Array<{ seq: number; task_id: string }>> {
  return eventually(
    `the ${want.length} acknowledged creates in the feed`,
    async () => {
      const events: Array<{ seq: number; task_id: string }> = [];
      let after = 0;
      for (;;) {
        const page = await httpJson(server, 'GET', `/api/v1/events?types=task.created&limit=500&after=${after}`, undefined, token);
        if (page.status !== 200) throw new Error(`feed answered ${page.status}`);
        events.push(...page.body.data);
        if (page.body.data.length === 0) return events;
        after = page.body.next_after;
      }
    },
    (events) => {
      const have = new Set(events.map((e) => e.task_id));
      return want.every((id) => have.has(id));
    },
    { timeoutMs: 20_000, intervalMs: 100 },
  );
}
