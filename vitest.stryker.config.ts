import { defineConfig } from 'vitest/config';

/**
 * The vitest config Stryker runs (stryker.config.json). Only the test folders whose tests exercise
 * the mutated code; `STRYKER_TESTS` (comma-separated folder names under test/) narrows it further,
 * so a run over src/stats loads only test/stats: `STRYKER_TESTS=stats npx stryker run --mutate ...`.
 * `STRYKER_TEST_FILES` (comma-separated globs) replaces the folders with those files: a run of only
 * the new test files, whose kills docs/testing.md adds to the suite's (scripts/mutation-table.mjs
 * --union). `STRYKER_EXCLUDE_FILES` (comma-separated globs) leaves files out: a full run without the slowest
 * files, then a run of only those over its survivors, scored together (docs/testing.md).
 */
const folders = (process.env.STRYKER_TESTS ?? 'stats,breaker,limiter,core,reliability').split(',');
const files = process.env.STRYKER_TEST_FILES?.split(',').map((glob) => glob.trim());
const excluded = process.env.STRYKER_EXCLUDE_FILES?.split(',').map((glob) => glob.trim()) ?? [];

export default defineConfig({
  test: {
    include: files ?? folders.map((folder) => `test/${folder.trim()}/**/*.test.ts`),
    exclude: [
      // needs the workerd runtime; covered by the normal suite
      'test/limiter/admission/waking-in-workerd.test.ts',
      // reads src/ as text, and Stryker's instrumented copy of a mutated file uses the process global (its dry run
      // failed on it): a check of the source, not of behaviour; the normal suite runs it
      'test/core/portability.test.ts',
      // wall-clock and heap measurements: the normal suite runs them
      'test/reliability/soak.test.ts',
      'test/reliability/faults.test.ts',
      ...excluded,
    ],
    testTimeout: 60_000,
  },
});
