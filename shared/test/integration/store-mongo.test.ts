import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MongoStore } from '@app/shared/store';
import { createTestMongo, historyContract, mongoAvailability, rejection, storeContract, type TestMongo } from '@app/shared/testing';

const availability = await mongoAvailability();
if (!availability.available) console.warn(`[store-mongo] MongoDB contract suite skipped: ${availability.reason}`);

describe.skipIf(!availability.available)('MongoStore against a real MongoDB replica set', () => {
  let mongo: TestMongo | undefined;
  beforeAll(async () => {
    mongo = await createTestMongo();
  });
  afterAll(async () => {
    await mongo?.[Symbol.asyncDispose]();
  });

  storeContract('MongoStore', () => MongoStore.connect({ url: mongo!.url, db: mongo!.db }));
  historyContract('MongoStore', () => MongoStore.connect({ url: mongo!.url, db: mongo!.db }));
});

/** A local port with nothing listening on it. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

describe('MongoStore without a server', () => {
  it('rejects connect with STORE_UNAVAILABLE after the server selection timeout instead of hanging', async () => {
    const url = `mongodb://127.0.0.1:${await closedPort()}/?directConnection=true`;
    const err = await rejection(MongoStore.connect({ url, db: 'none', serverSelectionTimeoutMS: 300 }));
    expect(err.code).toBe('STORE_UNAVAILABLE');
    expect(err.status).toBe(503);
  });
});
