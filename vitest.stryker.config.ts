import { defineConfig } from 'vitest/config';

/**
 * The vitest config Stryker runs (stryker.config.json). Only the test folders whose tests exercise
 * the mutated code; `STRYKER_TESTS` (comma-separated folder names under test/) narrows it further,
 * so a run over src/stats loads only test/stats: `STRYKER_TESTS=stats npx stryker run --mutate ...`.
 */
const folders = (process.env.STRYKER_TESTS ?? 'stats,breaker,limiter,core,reliability').split(',');

export default defineConfig({
  test: {
    include: folders.map((folder) => `test/${folder.trim()}/**/*.test.ts`),
    exclude: [
      // needs the workerd runtime; covered by the normal suite
      'test/limiter/admission/waking-in-workerd.test.ts',
      // wall-clock and heap measurements: the normal suite runs them
      'test/reliability/soak.test.ts',
      'test/reliability/faults.test.ts',
    ],
    testTimeout: 60_000,
  },
});
