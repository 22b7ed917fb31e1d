import { configDefaults, defineConfig } from 'vitest/config';

/**
 * `npm test` runs every suite but the slow ones under test/slow/ (real server processes started,
 * killed and restarted); `npm run test:slow` (BERTH_TEST_SLOW=1) runs those alone. `.ci/run` runs both.
 */
const slow = process.env.BERTH_TEST_SLOW === '1';

export default defineConfig({
  test: {
    include: slow ? ['test/slow/**/*.test.ts'] : ['test/**/*.test.ts'],
    exclude: slow ? configDefaults.exclude : [...configDefaults.exclude, 'test/slow/**'],
    // Room for a loaded machine (CI shares two cores): a test waits for conditions, never for time.
    testTimeout: 120_000,
    hookTimeout: 180_000,
    pool: 'forks',
    isolate: false,
    // Every JSON response the document declares must be produced by some test (see the file).
    globalSetup: ['test/helpers/response-coverage.ts', 'test/helpers/pglite-image.ts'],
    setupFiles: ['test/helpers/record-responses.ts'],
    maxWorkers: 2,
    reporters: ['default'],
  },
});
