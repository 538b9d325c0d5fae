export { EmbeddedStore, MAX_TRANSACTION_ATTEMPTS, type EmbeddedStats, type EmbeddedStoreOptions } from './embedded-store.js';
