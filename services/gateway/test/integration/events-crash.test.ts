import { afterAll, describe, expect, it } from 'vitest';
import { entry, freePort, startChild, tempDir, waitReady, type Child } from './child.js';

/**
 * Issue 10: a committed write never loses its event, also across a crash right after the commit.
 * The all-in-one process (`services/gateway/dist/main.js --all`, built by `npm test`) on a temp
 * DATA_DIR acknowledges task creates, is killed with SIGKILL right after the last answer, and the
 * restarted process's feed has every acknowledged create's event.
 */
const children: Child[] = [];
let removeDir: (() => Promise<void>) | undefined;

afterAll(async () => {
  for (const c of children) await c.stop();
  await removeDir?.();
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
    removeDir = tmp.remove;
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
    const feed = await call(port2, 'GET', '/api/v1/events?types=task.created&limit=500', undefined, token2);
    expect(feed.status).toBe(200);
    expect(feed.body.data.map((e: { task_id: string }) => e.task_id)).toEqual(acknowledged);
    const seqs = feed.body.data.map((e: { seq: number }) => e.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
  }, 90_000);
});
