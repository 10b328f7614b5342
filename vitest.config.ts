import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  // The examples import 'resilix' as a user's app does; their tests run them against the source.
  // The packed package is tested as published in test/package, test/docs and test/workers.
  resolve: { alias: { resilix: fileURLToPath(new URL('./src/index.ts', import.meta.url)) } },
  test: {
    include: ['test/**/*.test.ts', 'sim/**/*.test.ts'],
    testTimeout: 60_000,
    // Vitest's default in run mode is one worker fewer than the cores: on the 2-core machines CI
    // runs on, one worker, and `npm test` ran its files one after another (322 s, user time 331 s).
    // The main process only collects results, so every core gets a worker.
    maxWorkers: availableParallelism(),
  },
});
