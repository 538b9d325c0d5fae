import { defineConfig } from 'vitest/config';
import { fileURLToPath } from 'node:url';
import { mongoAvailability } from './shared/src/testing/mongo.ts';

const r = (p: string) => fileURLToPath(new URL(p, import.meta.url));

// Tests run from source: @app/* resolve to each package's src/ (no build needed for vitest).
const alias = [
  { find: /^@app\/shared\/(.*)$/, replacement: r('./shared/src/$1/index.ts') },
  { find: /^@app\/(tasks|boards|sprints|query|gateway)$/, replacement: r('./services/$1/src/index.ts') },
];

// The store legs (docs/store.md "Transactions under test"): the service, app and integration
// suites get their store from `testStore()`. In the `unit` and `integration` projects that is the
// embedded store under MongoDB's transaction rules; where MongoDB can run (MONGO_URL, or a Docker
// engine for testcontainers) the `mongo` project runs the same suites on MongoDB. A leg that
// cannot run is left out and the summary line says why (never a faked pass).
const SERVICE_SUITES = ['services/*/test/{service,app}/**/*.test.ts', 'services/*/test/integration/**/*.test.ts'];
// Suites about the embedded store's own files: crash and restart of a DATA_DIR, start-up rules of
// a process without MONGO_URL. They start processes or reopen files, and have no MongoDB form.
const EMBEDDED_ONLY = [
  'services/gateway/test/integration/crash.test.ts',
  'services/gateway/test/integration/events-crash.test.ts',
  'services/gateway/test/integration/startup.test.ts',
  'services/sprints/test/integration/close-nats.test.ts',
  'services/boards/test/integration/leases-nats.test.ts',
  'services/gateway/test/integration/backup.test.ts',
  'services/gateway/test/integration/isolation.test.ts',
];
const mongo = await mongoAvailability();
const mongoProject = {
  resolve: { alias },
  test: {
    name: 'mongo',
    include: SERVICE_SUITES,
    exclude: EMBEDDED_ONLY,
    provide: { storeLeg: 'mongo' as const },
    globalSetup: ['./shared/test/setup/mongo-leg.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
};
// The snapshot-isolation leg (docs/store.md "Snapshot isolation"): the service and app suites of
// tasks, boards, sprints and the gateway once more over the embedded store under MongoDB's
// concurrency (SnapshotIsolationStore), on every run: what only concurrent transactions can break.
const SNAPSHOT_SUITES = ['services/{tasks,boards,sprints}/test/{service,app}/**/*.test.ts', 'services/gateway/test/app/**/*.test.ts'];
const snapshotProject = {
  resolve: { alias },
  test: {
    name: 'snapshot',
    include: SNAPSHOT_SUITES,
    provide: { storeLeg: 'snapshot' as const },
    testTimeout: 20_000,
  },
};
const storeLegs = {
  embedded: { projects: ['unit', 'integration'] },
  snapshot: { projects: ['snapshot'] },
  mongo: mongo.available ? { projects: ['mongo'], source: mongo.source } : { skipped: mongo.reason },
};

export default defineConfig({
  resolve: { alias },
  test: {
    reporters: ['default', ['./scripts/summary-reporter.mjs', { storeLegs }]],
    restoreMocks: true,
    unstubEnvs: true,
    projects: [
      {
        resolve: { alias },
        test: {
          name: 'unit',
          include: ['shared/test/unit/**/*.test.ts', 'services/*/test/{unit,service,app}/**/*.test.ts', 'web/test/*.test.ts'],
          testTimeout: 20_000,
        },
      },
      {
        resolve: { alias },
        test: {
          name: 'integration',
          include: ['shared/test/integration/**/*.test.ts', 'services/*/test/integration/**/*.test.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
      {
        // The web board in Debian's Chromium against the built all-in-one server (docs/web.md).
        resolve: { alias },
        test: {
          name: 'browser',
          include: ['web/test/browser/**/*.test.ts'],
          testTimeout: 120_000,
          hookTimeout: 120_000,
        },
      },
      snapshotProject,
      ...(mongo.available ? [mongoProject] : []),
    ],
  },
});
