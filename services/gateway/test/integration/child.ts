import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

/**
 * Built entry points run as child processes (start-up refusals, the crash test). Needs
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
