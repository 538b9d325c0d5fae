import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** A private nats-server for one test file (docs/architecture.md §10: tests own their infrastructure). */
export interface NatsServer extends AsyncDisposable {
  /** `nats://127.0.0.1:<port>`. */
  readonly url: string;
  /** Kills the server (SIGKILL: to clients this is a crash) and removes its files; idempotent. */
  stop(): Promise<void>;
}

const STARTUP_TIMEOUT_MS = 10_000;
const MISSING = 'nats-server is not on PATH; install it (Debian: `apt-get install nats-server`) to run the integration tests';

/** Servers still running; killed when the test process exits, whatever the tests did. */
const running = new Set<ChildProcess>();
let exitHookInstalled = false;

function track(child: ChildProcess): void {
  running.add(child);
  child.once('exit', () => running.delete(child));
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.once('exit', () => {
    for (const c of running) c.kill('SIGKILL');
  });
}

/**
 * Spawns `nats-server -a 127.0.0.1 -p -1 --ports_file_dir <tmp>` (a free port chosen by the
 * server) and resolves once its ports file names the client URL. `jetstream: true` adds `-js` with
 * its store in the same temporary directory. Rejects with a clear message when
 * nats-server is missing, exits early, or is not ready within 10 s.
 */
export async function startNatsServer(opts: { jetstream?: boolean } = {}): Promise<NatsServer> {
  const dir = await mkdtemp(join(tmpdir(), 'nats-test-'));
  const js = opts.jetstream ? ['-js', '--store_dir', join(dir, 'js')] : [];
  const child = spawn('nats-server', ['-a', '127.0.0.1', '-p', '-1', '--ports_file_dir', dir, ...js], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  track(child);
  let stderr = '';
  // Keep only the tail: the pipe must be drained or a chatty server would block on it.
  child.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-2_000)));

  let stopping: Promise<void> | undefined;
  const stop = () =>
    (stopping ??= (async () => {
      if (child.exitCode === null && child.signalCode === null) {
        const exited = once(child, 'exit');
        child.kill('SIGKILL');
        await exited;
      }
      await rm(dir, { recursive: true, force: true });
    })());

  const failed = new Promise<never>((_, reject) => {
    child.once('error', (e: NodeJS.ErrnoException) => reject(e.code === 'ENOENT' ? new Error(MISSING) : e));
    child.once('exit', (code, signal) =>
      reject(new Error(`nats-server exited before it was ready (${signal ?? `code ${code}`}): ${stderr.trim()}`)),
    );
  });
  failed.catch(() => undefined); // settles after a successful start too (on stop)
  const ready = { done: false };
  try {
    const url = await Promise.race([readPortsFile(dir, ready), failed]);
    return { url, stop, [Symbol.asyncDispose]: stop };
  } catch (e) {
    await stop();
    throw e;
  } finally {
    ready.done = true;
  }
}

/** Polls `dir` for the server's `<executable>_<pid>.ports` file: `{"nats":["nats://host:port"]}`. */
async function readPortsFile(dir: string, ready: { done: boolean }): Promise<string> {
  const deadline = Date.now() + STARTUP_TIMEOUT_MS;
  while (!ready.done && Date.now() < deadline) {
    const file = (await readdir(dir)).find((f) => f.endsWith('.ports'));
    if (file) {
      try {
        const url = (JSON.parse(await readFile(join(dir, file), 'utf8')) as { nats?: string[] }).nats?.[0];
        if (url) return url;
      } catch {
        // written but not complete yet: read again
      }
    }
    await sleep(20);
  }
  throw new Error(`nats-server did not write its ports file within ${STARTUP_TIMEOUT_MS} ms`);
}

/** A fresh `BUS_PREFIX` (`t` + 12 hex digits) so tests sharing one server never see each other. */
export function uniquePrefix(): string {
  return `t${randomBytes(6).toString('hex')}`;
}
