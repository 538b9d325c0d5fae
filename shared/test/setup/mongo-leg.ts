import type { TestProject } from 'vitest/node';
import { startMongoContainer } from '../../src/testing/mongo.js';
// the `provide` keys (mongoUrl) are declared with the test store
import type {} from '../../src/testing/test-store.js';

/**
 * Global setup of the MongoDB leg (vitest project `mongo`): with `MONGO_URL` set the suites use
 * that server; otherwise one testcontainers replica set is started for the whole run (each suite
 * still gets its own database, dropped when its store closes) and stopped at the end.
 */
export default async function setup(project: TestProject): Promise<(() => Promise<void>) | undefined> {
  if (process.env.MONGO_URL) return undefined;
  const mongo = await startMongoContainer();
  project.provide('mongoUrl', mongo.url);
  return () => mongo.stop();
}
