import { defineConfig } from 'vitest/config';
import { fileURLToPath } from 'node:url';

const r = (p: string) => fileURLToPath(new URL(p, import.meta.url));

// Tests run from source: @app/* resolve to each package's src/ (no build needed for vitest).
const alias = [
  { find: /^@app\/shared\/(.*)$/, replacement: r('./shared/src/$1/index.ts') },
  { find: /^@app\/(tasks|boards|sprints|query|gateway)$/, replacement: r('./services/$1/src/index.ts') },
];

export default defineConfig({
  resolve: { alias },
  test: {
    reporters: ['default', './scripts/summary-reporter.mjs'],
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
    ],
  },
});
