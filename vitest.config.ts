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
    // Three files at a time on two cores: while one waits (a retry's backoff, a job, a socket),
    // the other two keep both cores busy. The slow suites start real processes: two at a time.
    maxWorkers: slow ? 2 : 3,
    // The test workers' young generation sized as `npm start`'s is, and their old space started
    // larger: a tenth less CPU over the run than with Node's defaults, whose small young
    // generation and heap grown a step at a time collect more often (bench/HISTORY.md,
    // "2026-12-02, morning: the test workers' heaps").
    execArgv: ['--max-semi-space-size=32', '--initial-old-space-size=256'],
    reporters: ['default'],
  },
});
