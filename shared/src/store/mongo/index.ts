export { MongoStore, NotAReplicaSetError, COMMIT_BUDGET_MS, type MongoStoreOptions } from './mongo-store.js';
export { mapMongoError } from './errors.js';
