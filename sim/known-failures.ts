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

export const KNOWN_LIBRARY_FAILURES: Readonly<Record<string, KnownFailure>> = {
  'many-clients-n50-s1-vegas': {
    problem:
      "fifty clients of one upstream, each with a share of one call, hold ~2x its capacity: each measures its baseline behind the others' standing queue (Vegas's persistent congestion)",
    measured:
      'upstream in-flight / capacity 1.95-2.48 against <= 1.5 on 16 of 16 seeds; Jain 0.78-0.90 on 14 (4 before the 400-sample first baseline, adr/0089, and the no-queue growth per window floor, adr/0090). A client whose drain and ' +
      'baseline window come after the others have filled the upstream takes their queue for no-load latency, and no client can ' +
      'drain a queue that is not its own. A coordinated re-measure (BBR ProbeRTT, Envoy minRTT) is the known remedy; not built.',
    sweepPasses: 0,
  },
  'many-clients-n50-s2-vegas': {
    problem:
      'fifty clients with a share of two calls each: the same persistent queue, and baselines measured at different times split the capacity unfairly',
    measured:
      "Jain's index 0.803-0.897 (>= 0.9) on 10 of 16 seeds; upstream in-flight 1.50-1.63 C (<= 1.5) on 4. The 400-sample first baseline (adr/0089) took it from 1 to 9 seeds; the no-queue growth per window floor (adr/0090) back to 6: its windows wait ~1.6 floors for their samples, and clients growing back from their drain faster settle wherever the band catches them (Jain median 0.906 -> 0.895). The drain after a slow start ended by a reduce signal (adr/0092) moved it 6 -> 5 here and 6 -> 7 on the held-out seeds k = 16..31: 12 of 32 either way.",
    sweepPasses: 5,
  },
  'shared-upstream-vegas': {
    problem:
      'clients sharing an upstream measure their baselines at different times, so Vegas divides the capacity by baselines a few percent apart',
    measured:
      "Jain's index 0.896 (>= 0.9) on 1 of 16 seeds (7 before the 400-sample first baseline, adr/0089); every other criterion passes on all 16. A client's share moves 9-13% per 1% of baseline error (adr/0089).",
    sweepPasses: 15,
  },
  'many-clients-n10-s5-vegas': {
    problem: 'ten clients with a share of five calls each: the same baseline spread as shared-upstream, smaller',
    measured: "Jain's index 0.876 (>= 0.9) on 1 of 16 seeds (3 before the 400-sample first baseline, adr/0089).",
    sweepPasses: 15,
  },
  'production-slowdown': {
    problem:
      'on one seed the start sheds 5.3% of healthy traffic (bound 1%): a slow start that ends early on a noisy round',
    measured: 'limiter shed rate while healthy 0.053 (<= 0.01) on 1 of 16 seeds.',
    sweepPasses: 15,
  },
  'secret-capacity-aimd-noqueue': {
    problem: 'aimd (loss-driven, the fallback) through tryAcquire sits a little above a secret capacity of 3',
    measured: 'limit mean 4.09-4.22 against [2, 4] on 4 of 16 seeds.',
    sweepPasses: 12,
  },
};
