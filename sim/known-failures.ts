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
      "fifty clients of one upstream, each with a share of one call, split it unevenly on some seeds (Jain 0.88-0.90 against 0.9): on the two failing gate seeds one client measured its first baseline under the others' queue and served about 3x the mean client's goodput",
    measured:
      'Since adr/0106 (no rise tested against a reference of fewer than 8 samples): 14 of 16 gate seeds, both failing on Jain (0.898, 0.890); held out 14 of 16 (Jain 0.894, 0.877); on 48 fresh seeds (k = 32..79) 39 of 48, every one under 1.5 C in flight (max 1.49; median Jain 0.958). ' +
      "Jain tracks the clients' baselines: over 5 seeds a client's log baseline and its goodput correlate 0.75-0.89; on both failing gate seeds one client of 50 measured its first baseline under the fleet's queue (127-129 ms against a median of 104, the true no-load mean 104.6), ended at a limit of 7-8 and served 3.0-3.1x the mean client, since the fleet's latency never falls under its baseline again (Vegas's persistent congestion). A pull to the band's middle (FAST TCP) and the slow start's no-load pool as a cap on the baseline window were tried and lost fairness seeds (docs/ablation.md). A first baseline from the window's lowest 100-sample block when the window rose past the noise passes all 16 gate seeds, but it takes single clients' baselines too low under machine-noise (16 -> 10 of 16; docs/ablation.md, twelfth session). " +
      'Before adr/0106: upstream in-flight / capacity 1.51-1.63 against <= 1.5 on the 8 failing gate seeds, Jain 0.77-0.89 on three of them; 13 of 16 held out (10 before adr/0097, 12 before adr/0100); 20 of 48 fresh. A client whose rounds hold 1-2 samples tested them against a reference of 2-7, and the slow starts ended early and unevenly. ' +
      "Before adr/0096 1.95-2.48 on 16 of 16: each client's drain read a no-load mean pooled from cohorts the others' slow starts had queued (250-570 ms against 105), drained to 1.4-2.2 calls, and the baseline windows measured the fleet's queue. " +
      'The earlier reading, a dead zone between limits 1 and 2 (a limit-1 client grows while latency is under ~1.44x its baseline, alpha(1) = 0.21, less the noise margin; a limit-2 client shrinks past ~1.7x, beta(2) = 0.65), does not explain the failing seeds: there the outlier sits at 7-8. Growing only on the queue plus its noise (tried, adr/0096) took it to 13 of 16 but cost n50-s2 8 seeds, and one cold start at C = 100 stalled at 0.69 of its goodput.',
    sweepPasses: 14,
  },
  'baseline-shift-1.15x-vegas': {
    problem:
      'an upstream that turns 15% slower for good at C = 50 collapses the limit to 0.35 C on 1 of 16 gate seeds (2 before adr/0120, 9 before adr/0117): vegas reads a steady excess as queue, and the descent that would show it is not ours stops just short of 0.6 of its start (half before adr/0120)',
    measured:
      'limit after the shift (mean of the last quarter) 17.3 against [40, 60] on gate seed k = 15; every other seed of k = 0..95 passes but k = 48 (18.3). Before adr/0120 (our in-flight halved, not at 0.6 of the start) it failed 2 of 16 gate seeds (14.0, 17.3), 2 of 16 held out, 6 of 32 at k = 32..63 and 7 of 32 at k = 64..95; before adr/0117 (one hold window keeps a descent) 9, 10 and 13 of the first three (adr/0115). ' +
      'A slowdown by a factor f reads as L (1 - 1/f) queued calls; the band beta(L) = 0.43 L^0.6 calls is sublinear, so the limit holds wherever that reading lies between alpha and beta, L in about [3.4, 19] at 1.15x before the noise margin, and a single descent must take our in-flight to 0.6 of its start (53 -> 31.8; halve it before adr/0120) for the stale-baseline raise (adr/0114) to test it. ' +
      'Before adr/0117, on a traced failing seed the first descent halted at 28.9 on one hold window (the noise margin lifts the band), and the later descents, each ended by a hold, never halved again; every noisy window above beta shrinks and none grows, so the limit walks down. ' +
      'The same collapse sits at 1.3x for C = 10 (5 of 8 seeds at 3.5-3.9) and 1.2x for C = 20 (7 of 8 at 7.0-9.0; after adr/0117, 1 of 8 and 7 of 8): close to the factor where the band stops at half the capacity, 1 / (1 - 0.43 (C / 2)^-0.4); since adr/0120 the zone sits near 1.26x, 1.18x and 1.12x, where the band stops at 0.6 x 1.06 C, and 1.2x at C = 20 recovers on 10 of 16 seeds (2 before). ' +
      "Letting hold windows continue a descent fixed 1.15x (8 of 8) but lost 6 fleet runs of 1 056 (n10-s2, n10-s5, n50-s2, shared-upstream twice): a fleet client cannot tell the others' standing queue from a slower upstream, and its baselines cascaded from 103-104 ms up to 357 ms. Letting only one hold in a row continue it is adr/0117, with the elasticity read from the descent's peak so that a capacity drop during a descent is not taken for a slowdown; the seeds left were not traced.",
    sweepPasses: 15,
  },
  'production-slowdown': {
    problem:
      'on one seed the start sheds 5.9% of healthy traffic (bound 1%): a slow start that ends early on a noisy round',
    measured:
      'limiter shed rate while healthy 0.059 (<= 0.01) on 1 of 16 seeds (0.053 before adr/0096). On 128 seeds (k = 0..127) 122 pass (118 before adr/0106, whose mature reference removed three exits at 10-20% shed; 121 before adr/0110, whose cohort vote removed the exit at k = 78, 10.9%); the six left are k = 10 (5.9%: a reference of 11 samples read low because a growing round sees its fastest calls, and the cohort of the suspect round, 500 ms over 10 calls, stood 79% over a cohort pool of 12 at 280 ms, the cohorts censored low too) and five at 1.0-1.7% (on four of them traced, every shed call came in the first 5 s: the slow start from one call cannot admit all of an open loop of 20 calls/s until its limit has grown).',
    sweepPasses: 15,
  },
};
