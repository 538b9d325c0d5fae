export { EmbeddedStore, MAX_TRANSACTION_ATTEMPTS, type EmbeddedStats, type EmbeddedStoreOptions } from './embedded-store.js';
export type { CommitStep } from './collection-state.js';
export { StoreInUseError, type JournalSync } from './journal.js';
export { backupStore, backupDataDir, restoreDataDir, DataDirInUseError, STORE_FILE, BACKUP_FORMAT, type BackupResult } from './backup.js';
