import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, startNatsServer, type NatsServer } from '@app/shared/testing';
import { entry, freePort, startChild, tempDir, waitReady, type Child } from './child.js';

/**
 * Start-up refusals of the built entry points, as an operator sees them: one line on
 * stderr, no stack, a non-zero exit code, and nothing else started.
 */

const JWT_SECRET = 'startup-test-secret-0123456789';
let nats: NatsServer;

beforeAll(async () => {
  nats = await startNatsServer();
});
afterAll(async () => {
  await nats?.stop();
});

/** Asserts a start-up refusal: exit code 1, exactly `line` on stderr (one line), no stack anywhere. */
async function expectRefused(child: Child, line: string | RegExp): Promise<void> {
  const { code } = await child.exited;
  expect(code, child.stderr()).toBe(1);
  const err = child.stderr();
  expect(err.endsWith('\n')).toBe(true);
  expect(err.trimEnd().split('\n')).toHaveLength(1);
  if (typeof line === 'string') expect(err.trimEnd()).toBe(line);
  else expect(err.trimEnd()).toMatch(line);
  expect(err + child.stdout()).not.toMatch(/\n\s+at |SQLITE_BUSY|Error:/);
}

describe('a DATA_DIR already in use', () => {
  it('refuses a second process with one line naming DATA_DIR; the first keeps serving', { timeout: 120_000 }, async () => {
    const data = await tempDir('startup-lock-');
    const port = await freePort();
    const env = { DATA_DIR: data.dir, JWT_SECRET, HOST: '127.0.0.1', LOG_LEVEL: 'warn' };
    const first = startChild(entry('gateway'), ['--all'], { ...env, PORT: String(port) });
    try {
      await waitReady(`http://127.0.0.1:${port}`, first);
      const second = startChild(entry('gateway'), ['--all'], { ...env, PORT: String(await freePort()) });
      await expectRefused(second, `DATA_DIR ${data.dir} is in use by another process`);
      // a service process on it is refused the same way (with the opt-in that lets it use an embedded store)
      const service = startChild(entry('tasks'), [], { ...env, NATS_URL: nats.url, EMBEDDED_STANDALONE: '1' });
      await expectRefused(service, `DATA_DIR ${data.dir} is in use by another process`);
      expect((await fetch(`http://127.0.0.1:${port}/health/ready`)).status).toBe(200);
    } finally {
      await first.stop();
      await data.remove();
    }
  });
});

describe('a separately started process without MONGO_URL', () => {
  const refusal = (name: string) =>
    new RegExp(`^MONGO_URL is required for a separately started ${name} \\(the embedded store is single-process; .*EMBEDDED_STANDALONE=1`);

  it('refuses to start, for every service and the gateway alone', { timeout: 120_000 }, async () => {
    const data = await tempDir('startup-alone-');
    try {
      const env = { DATA_DIR: data.dir, JWT_SECRET, NATS_URL: nats.url, LOG_LEVEL: 'warn' };
      for (const name of ['tasks', 'boards', 'sprints', 'query']) {
        await expectRefused(startChild(entry(name), [], env), refusal(`${name} service`));
      }
      await expectRefused(startChild(entry('gateway'), [], { ...env, PORT: String(await freePort()) }), refusal('gateway'));
    } finally {
      await data.remove();
    }
  });

  it('starts with the documented opt-in EMBEDDED_STANDALONE=1, and stops cleanly', { timeout: 120_000 }, async () => {
    const data = await tempDir('startup-optin-');
    const child = startChild(entry('tasks'), [], { DATA_DIR: data.dir, JWT_SECRET, NATS_URL: nats.url, EMBEDDED_STANDALONE: '1', LOG_LEVEL: 'info' });
    try {
      await eventually('the service ready or exited', () => child.stdout().includes('service ready') || child.proc.exitCode !== null, Boolean, {
        timeoutMs: 60_000, intervalMs: 50,
      }).catch(() => undefined);
      expect(child.stdout(), child.stderr()).toContain('service ready');
      await child.stop('SIGTERM');
      expect((await child.exited).code).toBe(0);
    } finally {
      await child.stop();
      await data.remove();
    }
  });

  it('reports a bad EMBEDDED_SYNC or EMBEDDED_STANDALONE with the other configuration faults, without a stack', { timeout: 120_000 }, async () => {
    const child = startChild(entry('gateway'), ['--all'], { EMBEDDED_SYNC: 'fast', EMBEDDED_STANDALONE: 'maybe', PORT: '1' });
    const { code } = await child.exited;
    expect(code).toBe(1);
    expect(child.stderr()).toMatch(/^Invalid configuration:\n/);
    expect(child.stderr()).toContain('EMBEDDED_SYNC: Expected one of full, normal (got "fast")');
    expect(child.stderr()).toContain('EMBEDDED_STANDALONE');
    expect(child.stderr()).not.toMatch(/\n\s+at /);
  });
});
