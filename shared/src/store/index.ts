export type {
  BulkOp, BulkResult, Collection, Doc, DocumentStore, Filter, FindOneAndUpdateOptions, FindOptions, IndexSpec,
  Projection, Session, SessionOption, Sort, StoreStats, Update, UpdateOptions, UpdateResult, WriteOptions,
} from './port.js';
export { escapeKey, unescapeKey, encodeMetadata, decodeMetadata, metadataPath } from './keys.js';
export { Collections } from './collections.js';
export { COLLECTION_INDEXES, SCHEMA_INDEXES, ttlFieldOf } from './schema.js';
export { QUERY_TIME_LIMIT_MS, TRANSACTION_DEADLINE_MS } from './port.js';
/** Tests a filter against documents in memory, with MongoDB semantics (the embedded store's matcher). */
export { compileFilter, type Matcher } from './embedded/matcher.js';
export { EmbeddedStore, MAX_TRANSACTION_ATTEMPTS, StoreInUseError, type CommitStep, type EmbeddedStats, type EmbeddedStoreOptions, type JournalSync } from './embedded/index.js';
export { MongoStore, NotAReplicaSetError, COMMIT_BUDGET_MS, type MongoStoreOptions } from './mongo/index.js';
export { backupStore, backupDataDir, restoreDataDir, DataDirInUseError, STORE_FILE, BACKUP_FORMAT, type BackupResult } from './embedded/index.js';
