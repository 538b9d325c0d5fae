import { createReadStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { AppError } from '@app/shared/errors';
import { assertAdmin } from '../auth/audit.js';
import type { LocalRoute } from './local.js';

/**
 * `POST /api/v1/admin/backup` (docs/store.md "Backup and restore"), administrators only: a
 * consistent copy of the running embedded store and its `DATA_DIR` files, taken with SQLite's
 * online backup API while writes go on, answered as the backup file itself
 * (`application/vnd.sqlite3`), which `npm run restore -- <file>` restores. `npm run backup` calls
 * it when the service holds `DATA_DIR`. A MongoDB deployment answers 409 `BACKUP_NOT_SUPPORTED`.
 */
export const adminRoutes: LocalRoute[] = [
  {
    method: 'POST',
    url: '/api/v1/admin/backup',
    summary: 'Back up the embedded store while the service runs (administrators only): the answer is the backup file, restored with `npm run restore -- <file>`',
    tag: 'admin',
    authenticated: true,
    scope: 'admin',
    produces: ['application/vnd.sqlite3'],
    async stream(req, reply, deps) {
      if (!req.user) throw new AppError('UNAUTHORIZED');
      await assertAdmin(deps.store, deps.config, req.user.sub);
      if (!deps.backup) throw new AppError('BACKUP_NOT_SUPPORTED');
      const file = join(tmpdir(), `board-backup-${randomUUID()}.sqlite`);
      const done = await deps.backup(file);
      const stream = createReadStream(file);
      stream.on('close', () => void rm(file, { force: true }));
      req.log.info({ bytes: done.bytes, files: done.files }, 'backup taken');
      await reply
        .code(200)
        .header('content-type', 'application/vnd.sqlite3')
        .header('content-disposition', `attachment; filename="backup-${new Date().toISOString().replace(/[:.]/g, '-')}.sqlite"`)
        .header('content-length', String(done.bytes))
        .send(stream);
    },
  },
];
