import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root (web/test/browser → ../../..). */
export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
export const MAIN = join(ROOT, 'services/gateway/dist/main.js');
export const WEB_DIST = join(ROOT, 'web/dist');

/** A free TCP port on 127.0.0.1 (the OS picks it; released before the server binds it). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });
}

export interface RunningServer {
  base: string;
  dataDir: string;
  stop(): Promise<void>;
}

/**
 * Starts the built all-in-one server (`node services/gateway/dist/main.js --all`, as `npm start`
 * does) on a free port of 127.0.0.1 with a fresh temp `DATA_DIR`, the in-process bus and the
 * embedded store (`opts.port` instead of a free port, `opts.env` added to the environment);
 * resolves once `/health/ready` answers 200 (at most `readyMs`). `stop()` ends it
 * (SIGTERM, then SIGKILL after 10 s) and removes the data dir. Needs `npm run build` first.
 */
export async function startServer(readyMs = 60_000, opts: { port?: number; env?: Record<string, string> } = {}): Promise<RunningServer> {
  if (!existsSync(MAIN) || !existsSync(join(WEB_DIST, 'index.html'))) {
    throw new Error(`The built server or web board is missing (${MAIN}, ${WEB_DIST}): run npm run build first`);
  }
  const dataDir = mkdtempSync(join(tmpdir(), 'web-board-'));
  const port = opts.port ?? (await freePort());
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATA_DIR: dataDir, LOG_LEVEL: 'warn', ...opts.env };
  env.RATE_LIMIT_AUTH_MAX = '1000';
  delete env.NATS_URL;
  delete env.MONGO_URL;
  delete env.NODE_ENV;
  delete env.JWT_SECRET;
  const child: ChildProcess = spawn(process.execPath, [MAIN, '--all'], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-4000)));
  child.stderr!.on('data', (d: Buffer) => (output = (output + d.toString()).slice(-4000)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const base = `http://127.0.0.1:${port}`;

  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(killer);
    }
    rmSync(dataDir, { recursive: true, force: true });
  };

  const deadline = Date.now() + readyMs;
  for (;;) {
    if (child.exitCode !== null) {
      await stop();
      throw new Error(`server exited with ${child.exitCode}:\n${output}`);
    }
    try {
      const res = await fetch(`${base}/health/ready`, { signal: AbortSignal.timeout(1_000) });
      if (res.ok) break;
    } catch {
      /* not listening yet */
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`server not ready within ${readyMs} ms:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 150));
  }
  return { base, dataDir, stop };
}

/** A small API client for test set-up and checks (the page is what is under test). */
export function apiAs(base: string, token?: string) {
  return async <T = any>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> => {
    const headers: Record<string, string> = {};
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (token) headers.authorization = `Bearer ${token}`;
    const res = await fetch(base + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T };
  };
}

/** Registers and logs in `username`; returns its token and id. */
export async function userToken(base: string, username: string, password: string): Promise<{ token: string; userId: string }> {
  const call = apiAs(base);
  await call('POST', '/auth/v2/register', { username, password });
  const login = await call<{ accessToken: string; userId: string }>('POST', '/auth/v2/login', { username, password });
  if (login.status !== 200) throw new Error(`login of ${username} failed: ${JSON.stringify(login.body)}`);
  return { token: login.body.accessToken, userId: login.body.userId };
}
