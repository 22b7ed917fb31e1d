import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Room for a loaded machine (CI shares two cores): a test waits for conditions, never for time.
    testTimeout: 120_000,
    hookTimeout: 180_000,
    pool: 'forks',
    // Every JSON response the document declares must be produced by some test (see the file).
    globalSetup: ['test/helpers/response-coverage.ts', 'test/helpers/pglite-image.ts'],
    setupFiles: ['test/helpers/record-responses.ts'],
    maxWorkers: 2,
    reporters: ['default'],
  },
});
