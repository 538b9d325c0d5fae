export { MongoStore, type MongoStoreOptions } from './mongo-store.js';
export { mapMongoError } from './errors.js';
