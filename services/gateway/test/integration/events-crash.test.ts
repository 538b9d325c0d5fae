import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { entry, freePort, startChild, tempDir, waitReady, type Child } from './child.js';

/**
 * A committed write never loses its event, also across a crash right after the commit
 * or in the middle of the relay numbering the outbox. The all-in-one process
 * (`services/gateway/dist/main.js --all`, built by `npm test`) on a temp DATA_DIR acknowledges
 * task creates, is killed with SIGKILL, and the restarted process's feed has every acknowledged
 * create's event, numbered without gap or repeat. The restarted relay takes over once the dead
 * process's relay lease has run out (3 s), so the feed is read until it has them all.
 */
const children: Child[] = [];
const removers: Array<() => Promise<void>> = [];

afterAll(async () => {
  for (const c of children) await c.stop();
  for (const remove of removers) await remove();
});

async function startAllInOne(dataDir: string, port: number): Promise<Child> {
  const env = { DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', JWT_SECRET: 'crash-test-secret-0123456789', LOG_LEVEL: 'silent', NODE_ENV: 'test' };
  const child = startChild(entry('gateway'), ['--all'], env);
  children.push(child);
  await waitReady(`http://127.0.0.1:${port}`, child);
  return child;
}

async function call(port: number, method: string, path: string, body?: unknown, token?: string) {
  const res = await fetch(`http://127.0.0.1:${port}${path}`, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

describe('events outbox across a crash', () => {
  it('the feed after a SIGKILL and restart has the event of every acknowledged write', async () => {
    const tmp = await tempDir('events-crash-');
    removers.push(tmp.remove);
    const port = await freePort();
    const first = await startAllInOne(tmp.dir, port);
    const creds = { username: 'crash', password: 'crash test password' };
    expect((await call(port, 'POST', '/auth/v2/register', creds)).status).toBe(201);
    const token = (await call(port, 'POST', '/auth/v2/login', creds)).body.accessToken as string;
    const acknowledged: string[] = [];
    for (let i = 0; i < 20; i++) {
      const res = await call(port, 'POST', '/api/v1/tasks', { title: `task ${i}` }, token);
      expect(res.status).toBe(201);
      acknowledged.push(res.body.id);
    }
    await first.stop('SIGKILL');

    const port2 = await freePort();
    await startAllInOne(tmp.dir, port2);
    const token2 = (await call(port2, 'POST', '/auth/v2/login', creds)).body.accessToken as string;
    const events = await feedUntil(port2, token2, acknowledged);
    expect(events.map((e) => e.task_id)).toEqual(acknowledged);
    const seqs = events.map((e) => e.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
  }, 90_000);

  it('a SIGKILL while writes commit and the relay numbers them: after restart every acknowledged write is in the feed once, seq gapless', async () => {
    const tmp = await tempDir('events-crash-relay-');
    removers.push(tmp.remove);
    const creds = { username: 'crash', password: 'crash test password' };
    const acknowledged: string[] = [];
    let port = await freePort();
    let proc = await startAllInOne(tmp.dir, port);
    expect((await call(port, 'POST', '/auth/v2/register', creds)).status).toBe(201);
    // two crashes: each one while 8 clients keep writing (the relay numbers every 20 ms or so)
    for (let round = 0; round < 2; round++) {
      const token = (await call(port, 'POST', '/auth/v2/login', creds)).body.accessToken as string;
      let stop = false;
      const clients = Array.from({ length: 8 }, async (_, c) => {
        for (let i = 0; !stop; i++) {
          const res = await call(port, 'POST', '/api/v1/tasks', { title: `r${round} c${c} #${i}` }, token).catch(() => undefined);
          if (res?.status === 201 && !stop) acknowledged.push(res.body.id);
        }
      });
      await expect.poll(() => acknowledged.length, { timeout: 30_000, interval: 5 }).toBeGreaterThanOrEqual(60 * (round + 1));
      stop = true;
      await proc.stop('SIGKILL');
      await Promise.all(clients);
      port = await freePort();
      proc = await startAllInOne(tmp.dir, port);
    }
    const token = (await call(port, 'POST', '/auth/v2/login', creds)).body.accessToken as string;
    const events = await feedUntil(port, token, acknowledged);
    const ids = events.map((e) => e.task_id);
    for (const id of acknowledged) expect(ids).toContain(id);
    // no repeat, no gap: one event per created task, seq 1, 2, 3, … (the user's own creates are every event)
    expect(new Set(ids).size).toBe(ids.length);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
  }, 120_000);
});

/** Reads the whole `task.created` feed until it holds every id of `want` (at most 20 s); returns it. */
async function feedUntil(port: number, token: string, want: readonly string[]): Promise<Array<{ seq: number; task_id: string }>> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const events: Array<{ seq: number; task_id: string }> = [];
    let after = 0;
    for (;;) {
      const page = await call(port, 'GET', `/api/v1/events?types=task.created&limit=500&after=${after}`, undefined, token);
      expect(page.status).toBe(200);
      events.push(...page.body.data);
      if (page.body.data.length === 0) break;
      after = page.body.next_after;
    }
    const have = new Set(events.map((e) => e.task_id));
    if (want.every((id) => have.has(id)) || Date.now() > deadline) return events;
    await sleep(100);
  }
}
