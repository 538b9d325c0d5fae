export { EmbeddedStore, MAX_TRANSACTION_ATTEMPTS, type EmbeddedStats, type EmbeddedStoreOptions } from './embedded-store.js';
/** In-memory MongoDB filter and sort evaluation with the embedded store's semantics (board summary). */
export { compileFilter, type Matcher } from './matcher.js';
export { cloneJson, sortDocs } from './values.js';
