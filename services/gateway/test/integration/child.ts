import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

/**
 * Built entry points run as child processes (start-up refusals, the crash tests). Needs
 * `npm run build` first (`npm test` builds). Every child is killed when the test process exits.
 */

/** The repository root. */
export const ROOT = fileURLToPath(new URL('../../../../', import.meta.url));
/** A built entry point, e.g. `services/gateway/dist/main.js`. */
export const entry = (service: string) => join(ROOT, 'services', service, 'dist', 'main.js');

/** A running (or exited) child process with its captured output. */
export interface Child {
  readonly proc: ChildProcess;
  /** Everything written to stdout / stderr so far. */
  stdout(): string;
  stderr(): string;
  /** Settles when the process has exited. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Sends `signal` (default SIGKILL) and waits for the exit; no-op when already exited. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

const running = new Set<ChildProcess>();
let hooked = false;

/**
 * Spawns `node <script> ...args` with only `env` (plus PATH and HOME), in `cwd`. Output is kept
 * (the last 64 KiB of each stream) so a test can assert what an operator would see.
 */
export function startChild(script: string, args: string[], env: Record<string, string>, cwd = ROOT): Child {
  const proc = spawn(process.execPath, [script, ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(proc);
  if (!hooked) {
    hooked = true;
    process.once('exit', () => {
      for (const p of running) p.kill('SIGKILL');
    });
  }
  let out = '';
  let err = '';
  proc.stdout!.on('data', (c: Buffer) => (out = (out + c.toString()).slice(-65_536)));
  proc.stderr!.on('data', (c: Buffer) => (err = (err + c.toString()).slice(-65_536)));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    proc.once('exit', (code, signal) => {
      running.delete(proc);
      // let the last output chunks arrive before reporting the exit
      proc.stdout!.once('close', () => resolve({ code, signal }));
      if (proc.stdout!.closed) resolve({ code, signal });
    });
  });
  return {
    proc,
    stdout: () => out,
    stderr: () => err,
    exited,
    async stop(signal = 'SIGKILL') {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
      await exited;
    },
  };
}

/** A port that was free a moment ago on 127.0.0.1. */
export async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  server.close();
  await once(server, 'close');
  return port;
}

/** A fresh temporary directory and its remover. */
export async function tempDir(prefix: string): Promise<{ dir: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

/**
 * Polls `GET <base>/health/ready` until 200 (every 50 ms, at most `timeoutMs`, 60 s by default: a loaded CI machine starts slowly); rejects with the
 * child's output when it exits or the time is up.
 */
export async function waitReady(base: string, child: Child, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.proc.exitCode !== null || child.proc.signalCode !== null) {
      throw new Error(`the server exited before it was ready: ${child.stderr() || child.stdout()}`);
    }
    try {
      const res = await fetch(`${base}/health/ready`);
      if (res.status === 200) return;
    } catch {
      // not listening yet
    }
    await sleep(50);
  }
  throw new Error(`the server was not ready within ${timeoutMs} ms: ${child.stderr() || child.stdout()}`);
}

/** The built all-in-one process (`--all`), serving HTTP at `base` (`http://127.0.0.1:<port>`). */
export interface AllInOne {
  child: Child;
  port: number;
  base: string;
}

/** The JWT secret of every all-in-one started here: a token stays valid across a restart on the same folder. */
const ALL_IN_ONE_SECRET = 'crash-test-secret-0123456789';

/**
 * Starts the built all-in-one process (`services/gateway/dist/main.js --all`: gateway, services,
 * in-process bus and embedded store) on `dataDir`, on 127.0.0.1 at a free port, with a fixed JWT
 * secret, `NODE_ENV=test` and silent logs; `env` adds or replaces variables. Resolves once
 * `/health/ready` answers 200, or at once with `ready: false` (to kill it while it starts). Rejects
 * with the child's output when it exits first; `child.stop()` kills it (SIGKILL by default).
 */
export async function startAllInOne(dataDir: string, opts: { env?: Record<string, string>; ready?: boolean } = {}): Promise<AllInOne> {
  const port = await freePort();
  const env = { HOST: '127.0.0.1', JWT_SECRET: ALL_IN_ONE_SECRET, LOG_LEVEL: 'silent', NODE_ENV: 'test', ...opts.env, DATA_DIR: dataDir, PORT: String(port) };
  const child = startChild(entry('gateway'), ['--all'], env);
  const base = `http://127.0.0.1:${port}`;
  if (opts.ready !== false) await waitReady(base, child);
  return { child, port, base };
}

/**
 * One JSON request to `server`: `body` (when given) sent as JSON, `token` as the bearer token.
 * Resolves to the status and the parsed body (`undefined` when empty); rejects on a transport
 * error (the server died under the request).
 */
export async function httpJson(
  server: { base: string },
  method: string,
  path: string,
  body?: unknown,
  token?: string,
): Promise<{ status: number; body: any }> {
  const headers: Record<string, string> = {};
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(server.base + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, body: text === '' ? undefined : JSON.parse(text) };
}
