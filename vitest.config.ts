import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const SUITE = ['test/**/*.test.ts', 'sim/**/*.test.ts'];
const WALL_CLOCK = ['test/e2e/demo.test.ts'];

export default defineConfig({
  // The examples import 'resilix' as a user's app does; their tests run them against the source.
  // The packed package is tested as published in test/package, test/docs and test/workers.
  resolve: { alias: { resilix: fileURLToPath(new URL('./src/index.ts', import.meta.url)) } },
  test: {
    testTimeout: 60_000,
    // Tests that run on the wall clock (the live demo's open-loop arrivals over real sockets) run
    // after the rest, alone: beside the CPU-heavy files (tsc, the allocation guard) an event-loop
    // stall bunched the demo's arrivals at its cold start and shed one of its quiet phase's calls.
    projects: [
      { extends: true, test: { name: 'suite', include: SUITE, exclude: WALL_CLOCK } },
      { extends: true, test: { name: 'wall-clock', include: WALL_CLOCK, sequence: { groupOrder: 1 } } },
    ],
    // Vitest's default in run mode is one worker fewer than the cores: on the 2-core machines CI
    // runs on, one worker, and `npm test` ran its files one after another (322 s, user time 331 s).
    // The main process only collects results, so every core gets a worker.
    maxWorkers: availableParallelism(),
  },
});
