export { startNatsServer, uniquePrefix, type NatsServer } from './nats-server.js';
export { busContract, captureLog, type BusFixture } from './bus-contract.js';
export { rejection, rejects, fields, thrown } from './assertions.js';
export { aTask, aBoard, aGroup, insert, BUILT_AT, BUILDER, type TaskFields } from './builders.js';
export { storeContract } from './store-contract.js';
export { historyContract } from './history-contract.js';
export { FaultyStore, type StoreCall, type StoreOp } from './faulty-store.js';
export { createTestMongo, mongoAvailability, startMongoContainer, type MongoAvailability, type TestMongo } from './mongo.js';
export { appendTestEvents, type TestEvent } from './events.js';
export {
  TransactionRulesStore, TransactionRuleError, commonWrites, writtenDocuments,
  type CommittedTransaction, type TransactionRulesOptions, type TransactionWrite,
} from './transaction-rules.js';
export { testStore, storeLeg, type StoreLeg, type TestStoreOptions } from './test-store.js';
export { traceIntoMemory, type MemoryTracing } from './tracing.js';
export { eventually, type EventuallyOptions } from './eventually.js';
export { SnapshotIsolationStore, type SnapshotCounts, type SnapshotIsolationOptions } from './isolation/index.js';
