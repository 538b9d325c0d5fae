#!/usr/bin/env node
// `npm run backup -- <file>`: a consistent copy of the embedded store's DATA_DIR (docs/store.md
// "Backup and restore"). When no process holds DATA_DIR, the store file is copied with SQLite's
// online backup API; when the service runs, the running service takes it (POST /api/v1/admin/backup,
// no write refused meanwhile) and this script saves the answer. Needs `npm run build` first.
//   DATA_DIR       the folder (default ./data)
//   BACKUP_URL     the running service (default http://127.0.0.1:$PORT, PORT default 8080)
//   BACKUP_TOKEN   an administrator's bearer token (an access token with the admin scope, or a login
//                  token); else ADMIN_USERNAME / ADMIN_PASSWORD are used to log in
import { writeFile, rename } from 'node:fs/promises';
import { backupDataDir, DataDirInUseError } from '@app/shared/store';

const file = process.argv[2];
if (!file) {
  console.error('usage: npm run backup -- <file>');
  process.exit(2);
}
const dataDir = process.env.DATA_DIR ?? './data';

async function token(base) {
  if (process.env.BACKUP_TOKEN) return process.env.BACKUP_TOKEN;
  const { ADMIN_USERNAME: username, ADMIN_PASSWORD: password } = process.env;
  if (!username || !password) throw new Error('the service holds DATA_DIR: set BACKUP_TOKEN (an administrator\'s token) or ADMIN_USERNAME and ADMIN_PASSWORD');
  const res = await fetch(`${base}/auth/v2/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ username, password }) });
  if (!res.ok) throw new Error(`login as ${username} failed: ${res.status} ${await res.text()}`);
  return (await res.json()).accessToken;
}

async function throughService() {
  const base = process.env.BACKUP_URL ?? `http://127.0.0.1:${process.env.PORT ?? 8080}`;
  const res = await fetch(`${base}/api/v1/admin/backup`, { method: 'POST', headers: { authorization: `Bearer ${await token(base)}` } });
  if (!res.ok) throw new Error(`${base}/api/v1/admin/backup answered ${res.status}: ${await res.text()}`);
  const tmp = `${file}.tmp`;
  await writeFile(tmp, Buffer.from(await res.arrayBuffer()));
  await rename(tmp, file);
  return { file, bytes: Number(res.headers.get('content-length')), via: base };
}

try {
  let done;
  try {
    done = await backupDataDir(dataDir, file);
  } catch (e) {
    if (!(e instanceof DataDirInUseError)) throw e;
    done = await throughService();
  }
  console.log(`backup written: ${done.file} (${done.bytes} bytes${done.via ? `, taken by the service at ${done.via}` : `, from ${dataDir}`})`);
} catch (e) {
  console.error(`backup failed: ${e.message}`);
  process.exit(1);
}
