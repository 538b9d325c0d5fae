import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { httpJson, ROOT, startAllInOne, startChild, tempDir, type AllInOne } from './child.js';

/**
 * Online backup and restore of the embedded default (docs/store.md "Backup and restore"), on the
 * built all-in-one over loopback: a backup taken by `npm run backup` while writers keep creating
 * tasks holds every write acknowledged before the backup started; `npm run restore` refuses a
 * DATA_DIR in use and restores into an empty one, where the service starts and answers. Bounded
 * in writers, requests and time; folders and processes are removed whatever happens.
 */

const ADMIN = { ADMIN_USERNAME: 'admin', ADMIN_PASSWORD: 'admin-password-123' };
const WRITERS = 4;
/** Each writer stops after this many creates, whatever happens. */
const MAX_PER_WRITER = 300;

/** Runs a project script (`scripts/<name>.mjs <file>`) to its end; its exit code and output. */
async function script(name: string, file: string, env: Record<string, string>) {
  const child = startChild(join(ROOT, 'scripts', `${name}.mjs`), [file], env);
  const { code } = await child.exited;
  return { code, out: child.stdout() + child.stderr() };
}

async function login(s: AllInOne): Promise<string> {
  const res = await httpJson(s, 'POST', '/auth/v2/login', { username: ADMIN.ADMIN_USERNAME, password: ADMIN.ADMIN_PASSWORD });
  if (res.status !== 200) throw new Error(`login: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.accessToken;
}

describe('backup during a write load, then restore', () => {
  it('restores every write acknowledged before the backup started, and the restored service answers', { timeout: 150_000 }, async () => {
    const data = await tempDir('backup-data-');
    const restored = await tempDir('backup-restored-');
    const out = await tempDir('backup-file-');
    const file = join(out.dir, 'board.backup');
    let server: AllInOne | undefined;
    let again: AllInOne | undefined;
    try {
      server = await startAllInOne(data.dir, { env: { ...ADMIN, LOG_LEVEL: 'warn' } });
      const token = await login(server);
      const acked: Array<{ id: string; at: number }> = [];
      let stop = false;
      const failures: string[] = [];
      const writer = async (w: number) => {
        for (let i = 0; i < MAX_PER_WRITER && !stop; i++) {
          const res = await httpJson(server!, 'POST', '/api/v1/tasks', { title: `w${w}-${i}`, tags: ['load'] }, token);
          if (res.status !== 201) failures.push(`${res.status} ${JSON.stringify(res.body)}`);
          else acked.push({ id: res.body.id, at: performance.now() });
        }
      };
      const writers = Array.from({ length: WRITERS }, (_, w) => writer(w));
      while (acked.length < 100 && failures.length === 0) await new Promise((r) => setTimeout(r, 10));
      const startedAt = performance.now();
      const backup = await script('backup', file, { DATA_DIR: data.dir, BACKUP_URL: server.base, BACKUP_TOKEN: token });
      const writesDuringBackup = acked.filter((a) => a.at > startedAt).length;
      stop = true;
      await Promise.all(writers);
      expect(failures).toEqual([]);
      expect(backup.code, backup.out).toBe(0);
      expect(backup.out).toMatch(/taken by the service/);
      // the service went on writing while the backup ran: no write was refused
      expect(writesDuringBackup).toBeGreaterThan(0);
      const before = acked.filter((a) => a.at <= startedAt).map((a) => a.id);

      // a restore never overwrites the DATA_DIR the service holds
      const refused = await script('restore', file, { DATA_DIR: data.dir });
      expect(refused.code).toBe(1);
      expect(refused.out).toMatch(/in use by a running service/);
      await server.child.stop('SIGTERM');
      server = undefined;

      const restore = await script('restore', file, { DATA_DIR: restored.dir });
      expect(restore.code, restore.out).toBe(0);
      expect(existsSync(join(restored.dir, 'store.sqlite'))).toBe(true);
      again = await startAllInOne(restored.dir, { env: { ...ADMIN, LOG_LEVEL: 'warn' } });
      const token2 = await login(again);
      const missing: string[] = [];
      for (const id of before) {
        const res = await httpJson(again, 'GET', `/api/v1/tasks/${id}`, undefined, token2);
        if (res.status !== 200) missing.push(`${id}: ${res.status}`);
      }
      expect(missing).toEqual([]);
      // and it takes writes
      expect((await httpJson(again, 'POST', '/api/v1/tasks', { title: 'after restore' }, token2)).status).toBe(201);
      console.log(`backup: ${before.length} writes acknowledged before it, ${writesDuringBackup} during it; all ${before.length} restored`);
    } finally {
      await server?.child.stop();
      await again?.child.stop();
      await Promise.all([data.remove(), restored.remove(), out.remove()]);
    }
  });

  it('backs up a stopped DATA_DIR from its file, and refuses to restore into a folder that is not empty', { timeout: 90_000 }, async () => {
    const data = await tempDir('backup-stopped-');
    const out = await tempDir('backup-file-');
    const file = join(out.dir, 'b.backup');
    try {
      const server = await startAllInOne(data.dir, { env: ADMIN });
      const token = await login(server);
      const task = (await httpJson(server, 'POST', '/api/v1/tasks', { title: 'kept' }, token)).body;
      await server.child.stop('SIGTERM');
      const backup = await script('backup', file, { DATA_DIR: data.dir });
      expect(backup.code, backup.out).toBe(0);
      expect(backup.out).toMatch(/from /);
      const notEmpty = await script('restore', file, { DATA_DIR: data.dir });
      expect(notEmpty.code).toBe(1);
      expect(notEmpty.out).toMatch(/not empty/);
      const notABackup = await script('restore', join(data.dir, 'store.sqlite'), { DATA_DIR: join(out.dir, 'x') });
      expect(notABackup.code).toBe(1);
      expect(notABackup.out).toMatch(/not a backup/);
      const target = join(out.dir, 'restored');
      expect((await script('restore', file, { DATA_DIR: target })).code).toBe(0);
      const again = await startAllInOne(target, { env: ADMIN });
      try {
        expect((await httpJson(again, 'GET', `/api/v1/tasks/${task.id}`, undefined, await login(again))).body.title).toBe('kept');
      } finally {
        await again.child.stop();
      }
    } finally {
      await Promise.all([data.remove(), out.remove()]);
    }
  });
});
