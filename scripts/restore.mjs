#!/usr/bin/env node
// `npm run restore -- <file>`: restores a backup (`npm run backup`) into an empty DATA_DIR
// (default ./data); refuses a DATA_DIR that holds a store, in use or not (docs/store.md
// "Backup and restore"). Then `npm start` with that DATA_DIR serves the restored data.
// Needs `npm run build` first.
import { restoreDataDir } from '@app/shared/store';

const file = process.argv[2];
if (!file) {
  console.error('usage: npm run restore -- <file>');
  process.exit(2);
}
const dataDir = process.env.DATA_DIR ?? './data';
try {
  const done = restoreDataDir(file, dataDir);
  console.log(`restored ${file} into ${dataDir} (${done.bytes} bytes${done.files.length ? `, with ${done.files.join(', ')}` : ''})`);
} catch (e) {
  console.error(`restore failed: ${e.message}`);
  process.exit(1);
}
