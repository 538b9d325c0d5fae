import { randomBytes } from 'node:crypto';
import { MongoClient } from 'mongodb';

/** Whether MongoDB-backed tests can run here, and from where (docs/architecture.md §2: never fake a pass). */
export type MongoAvailability =
  | { available: true; source: 'MONGO_URL' | 'docker' }
  | { available: false; reason: string };

/** A MongoDB for one test file: a server URL and a fresh database, dropped (and the container stopped) on dispose. */
export interface TestMongo extends AsyncDisposable {
  url: string;
  db: string;
}

/** Image of the replica-set container started when no `MONGO_URL` is given. */
export const MONGO_IMAGE = 'mongo:8';

/**
 * `MONGO_URL` set → available; else a reachable Docker engine (testcontainers) → available;
 * otherwise the reason to print when skipping.
 */
export async function mongoAvailability(): Promise<MongoAvailability> {
  if (process.env.MONGO_URL) return { available: true, source: 'MONGO_URL' };
  try {
    const { getContainerRuntimeClient } = await import('testcontainers');
    await getContainerRuntimeClient();
    return { available: true, source: 'docker' };
  } catch (e) {
    return { available: false, reason: `MONGO_URL is not set and no Docker engine is reachable (${(e as Error).message})` };
  }
}

/**
 * A MongoDB replica set for tests: the server at `opts.url`, else at `MONGO_URL`, else a `mongo:8`
 * testcontainers `MongoDBContainer` (single-node replica set, so transactions work). The database
 * name is unique per call; dispose drops it and stops the container (if this call started one).
 * Call only when {@link mongoAvailability} says available.
 */
export async function createTestMongo(opts: { url?: string } = {}): Promise<TestMongo> {
  const db = `test_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  let url = opts.url ?? process.env.MONGO_URL;
  let stop = async () => {};
  if (!url) {
    const started = await startMongoContainer();
    url = started.url;
    stop = started.stop;
  }
  const serverUrl = url;
  return {
    url: serverUrl,
    db,
    async [Symbol.asyncDispose]() {
      const client = new MongoClient(serverUrl, { serverSelectionTimeoutMS: 5000 });
      try {
        await client.db(db).dropDatabase();
      } finally {
        await client.close();
        await stop();
      }
    },
  };
}

/**
 * Starts a `mongo:8` testcontainers `MongoDBContainer` (a one-node replica set, so transactions
 * work): its URL (`directConnection=true`) and how to stop it. Needs a Docker engine.
 */
export async function startMongoContainer(): Promise<{ url: string; stop(): Promise<void> }> {
  const { MongoDBContainer } = await import('@testcontainers/mongodb');
  const container = await new MongoDBContainer(MONGO_IMAGE).start();
  return {
    url: `${container.getConnectionString()}/?directConnection=true`,
    stop: async () => {
      await container.stop();
    },
  };
}
