import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * Issue 10: a committed write never loses its event, also across a crash right after the commit.
 * The all-in-one process (`services/gateway/dist/main.js --all`, built by `npm test`) on a temp
 * DATA_DIR acknowledges task creates, is killed with SIGKILL right after the last answer, and the
 * restarted process's feed has every acknowledged create's event.
 */
const MAIN = new URL('../../dist/main.js', import.meta.url).pathname;
let dir = '';
const children = new Set<ChildProcess>();

afterAll(async () => {
  for (const c of children) c.kill('SIGKILL');
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function freePort(): Promise<number> {
  const srv = createServer();
  srv.listen(0, '127.0.0.1');
  await once(srv, 'listening');
  const { port } = srv.address() as { port: number };
  srv.close();
  await once(srv, 'close');
  return port;
}

async function startAllInOne(dataDir: string, port: number): Promise<ChildProcess> {
  const child = spawn(process.execPath, [MAIN, '--all'], {
    env: { ...process.env, DATA_DIR: dataDir, PORT: String(port), HOST: '127.0.0.1', JWT_SECRET: 'crash-test-secret-0123456789', LOG_LEVEL: 'silent', NATS_URL: '', MONGO_URL: '', NODE_ENV: 'test' },
    stdio: 'ignore',
  });
  children.add(child);
  child.once('exit', () => children.delete(child));
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/health`)).ok) return child;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline || child.exitCode !== null) throw new Error('all-in-one did not start');
    await new Promise((r) => setTimeout(r, 100));
  }
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
    dir = await mkdtemp(join(tmpdir(), 'events-crash-'));
    const port = await freePort();
    const first = await startAllInOne(dir, port);
    const creds = { username: 'crash', password: 'crash test password' };
    expect((await call(port, 'POST', '/auth/v2/register', creds)).status).toBe(201);
    const token = (await call(port, 'POST', '/auth/v2/login', creds)).body.accessToken as string;
    const acknowledged: string[] = [];
    for (let i = 0; i < 20; i++) {
      const res = await call(port, 'POST', '/api/v1/tasks', { title: `task ${i}` }, token);
      expect(res.status).toBe(201);
      acknowledged.push(res.body.id);
    }
    first.kill('SIGKILL');
    await once(first, 'exit');

    const port2 = await freePort();
    await startAllInOne(dir, port2);
    const token2 = (await call(port2, 'POST', '/auth/v2/login', creds)).body.accessToken as string;
    const feed = await call(port2, 'GET', '/api/v1/events?types=task.created&limit=500', undefined, token2);
    expect(feed.status).toBe(200);
    expect(feed.body.data.map((e: { task_id: string }) => e.task_id)).toEqual(acknowledged);
    const seqs = feed.body.data.map((e: { seq: number }) => e.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
  }, 90_000);
});
