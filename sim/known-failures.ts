/**
 * Acceptance scenarios that fail on some seeds because the library misbehaves, not because the
 * scenario is wrong. The criterion stays as the issue states it; the scenario is listed here with
 * the problem, the figures, and the seeds out of SWEEP_SEEDS on which it passes. CI's sweep
 * (`npm run sim:sweep -- --seeds 16 --gate`, .ci/run) fails when a listed scenario passes on fewer
 * seeds than recorded, and when any other gated scenario fails on any seed; `npm test` runs the
 * committed seed and, for listed scenarios, checks the invariants only. docs/simulation.md lists
 * the entries ("Known library problems", generated from this file).
 *
 * Figures from `npm run sim:sweep -- --seeds 16` against src/ at the time of writing
 * (`npx tsx sim/run.ts <name> --trace 2000` shows the limiter's decisions window by window).
 */
export interface KnownFailure {
  /** The library problem, in a line. */
  readonly problem: string;
  /** What the sweep measured against the criterion, and the mechanism. */
  readonly measured: string;
  /** Seeds (of SWEEP_SEEDS, k = 0..15) on which every criterion passes: the gate's floor. */
  readonly sweepPasses: number;
}

/** The seeds the recorded pass counts are over. */
export const SWEEP_SEEDS = 16;

export const KNOWN_LIBRARY_FAILURES: Readonly<Record<string, KnownFailure>> = {};
