export {};
export { startNatsServer, uniquePrefix, type NatsServer } from './nats-server.js';
export { busContract, captureLog, rejection, type BusFixture } from './bus-contract.js';
export { storeContract } from './store-contract.js';
export { FaultyStore, type StoreCall, type StoreOp } from './faulty-store.js';
export { createTestMongo, mongoAvailability, type MongoAvailability, type TestMongo } from './mongo.js';
