import { PRESSURE_SATURATION } from './algorithms/algorithm';
import { ALPHA_POWER, ALPHA_SCALE, BETA_RATIO } from './control-config';

/** The shipped values, each beside its provenance; see `ControlTuning`. */
const SHIPPED = {
  /** Slow start's growth per binding sample: the limit doubles per round trip (RFC 5681). 0 = no slow start. */
  startupGain: 1,
  /** Slow-start exit: a round's mean log latency rising this share over the reference (RFC 9406's 1/8). */
  startupThreshold: 1 / 8,
  /** ...or by this many standard errors of the round-to-round difference, if more (95%: 2). */
  startupNoiseZ: 2,
  /** The log-latency spread assumed before the rounds measure one (ROUND_SAMPLES). Cautious: p90/p50 1.9. */
  spreadPrior: 0.5,
  /** Rounds that must confirm a rise before the exit; growth holds meanwhile (RFC 9406's CSS, shortened). */
  confirmRounds: 1,
  /** Rounds in a row without growth that end the slow start (app-limited). 0 = off. */
  startupIdleRounds: 4,
  /** On exit, drain to the no-load served concurrency (Little's law; BBR's Drain) before the baseline window. */
  drainOnExit: true,
  /** Share of that concurrency the drain goes to, so the queue (everyone's, on a shared upstream) empties. */
  drainGain: 0.5,
  /** A cohort above the no-load pool past the noise stays out of it (adr/0096). false: every clean cohort joins. */
  noLoadRiseTest: true,
  /** After a slow start, its drain, settling and baseline window admit whole calls, no error diffusion (adr/0096). */
  measureWholeCalls: true,
  /** Samples a re-measure's baseline window needs instead of minSamples (adr/0045, adr/0047). */
  baselineSamples: 100,
  /** vegas sizes a re-measure for its concurrency, at most firstBaselineSamples (adr/0122). false: baselineSamples. */
  remeasureForLimit: true,
  /** Samples the limiter's first baseline window needs: its error sets shared-upstream fairness (adr/0089). */
  firstBaselineSamples: 400,
  /** Share of vegas's queue excess over beta removed in one shrink (adr/0035). */
  excessQueueGain: 0.5,
  /** With no queue (queueUse <= alpha / 3) grow by beta, at most doubling (Netflix VegasLimit). false: one step. */
  noQueueJump: true,
  /** That growth is per window floor the window lasted, not per window (adr/0090). */
  noQueueGrowthPerFloor: true,
  /** A stale baseline (adr/0047): a jump, the raise at the floor, the drain's re-aim and the slow start's rise test need this many x the baseline. */
  raiseRatio: 2,
  /** Above the floor the raise (adr/0114) needs windows over the baseline, in-flight down, and latency fallen by less than this share of its fall (log terms). */
  raiseElasticity: 0.5,
  /** ...with our in-flight at this share of the descent's start or under: a guard for a shared upstream (adr/0120). */
  raiseInflightShare: 0.6,
  /**
   * ...for this many shrinking windows in a row (Envoy re-measures after 5 windows at its minimum);
   * at the floor (one call in flight) that alone raises. 1e9 = off.
   */
  raiseWindows: 5,
  /** A raiseRatio jump over the previous window, our in-flight not up, re-measures the baseline (adr/0047). */
  jumpRestart: true,
  /** A clean window under the baseline (the upstream got faster; see fallBand), demand at the limit, re-measures as a jump does (adr/0130). */
  fallRestart: true,
  /** vegas: the fall that re-measures is a stale share worth alpha(L) calls of queue past the noise, not 1 / raiseRatio (adr/0131). */
  fallBand: true,
  /** No round is tested for a rise against a reference of fewer than ROUND_SAMPLES samples (adr/0106). */
  matureReference: true,
  /** A rise is confirmed only if the suspect round's cohort, counted through the next round, also rose over the pooled cohorts (adr/0110). */
  cohortConfirm: true,
  /** After an overload cut, no growth past the served concurrency for this long (adr/0046). 0 = off. */
  overloadHoldMs: 10_000,
  /** A window with at least this share of `overload` answers closes early (adr/0046). 1 = off. */
  overloadCloseShare: 0.5,
  /** ...once it holds this many answers (adr/0046). */
  overloadCloseMinAnswers: 10,
  /** The share of reduce signals in a window that gets the full timeout cut (algorithm.ts, adr/0035). */
  pressureSaturation: PRESSURE_SATURATION,
  /** A window where failures are at least this share of the answers does not grow (adr/0030). */
  failureGrowthVeto: 0.5,
  /** Standard errors of the window mean a rise must exceed to count as queue (adr/0036). 0 = off. */
  noiseZ: 1,
  /**
   * The least baseline vegas, gradient2 and the jump rule compare with, ms: below it ratios are whole-ms clock
   * ticks (Workers; adr/0036, adr/0125).
   */
  minBaselineMs: 5,
  /** Default band (adr/0049): alpha = min(3 log10 max(L, 10), alphaScale x (L / 10)^alphaPower), beta = betaRatio x alpha. */
  alphaPower: ALPHA_POWER,
  /** The default alpha at L = 10, in requests (ALPHA_SCALE). */
  alphaScale: ALPHA_SCALE,
  /**
   * 1: vegas's step is min(alpha, log10 L floored at 1); 0: Netflix's log10 L floored at 1, an
   * additive step the same for every client, as AIMD's fairness argument needs.
   */
  stepCap: 1,
  betaRatio: BETA_RATIO,
  /** Round the limit by error diffusion at each window close (control-loop.ts `apply`), but see measureWholeCalls. false: truncate. */
  dither: true,
  /** Learn and excuse the expected timeout tail (adr/0037). false: every timeout counts. */
  timeoutTail: true,
  /** The tails' EWMA weight: ~ten windows, slow beside latency's 1/3, so a rising share stays excess (adr/0037). */
  tailWeight: 0.1,
  /** The most they excuse: half of pressureSaturation; a deadline before the upstream's p95 is no tail (adr/0037). */
  tailCap: 0.05,
  /** The same for refusals, a share that comes whatever our concurrency (adr/0095). false: every refusal counts. */
  refusalTail: true,
  /**
   * A refusal ends a round, or lets an overload majority close a window early, only once the window lasted the no-load
   * latency: Little's law needs a round trip of the service (adr/0126). false: at once, however fast the refusal.
   */
  refusalRoundTrip: true,
  /**
   * A refusal admitted as the k-th call in flight, past every answer of its window and the last, takes the limit to
   * k - 1 at once, and its window teaches the refusal tail nothing (adr/0127). false: refusals act when the window closes.
   */
  refusalStepDown: true,
  /**
   * After a latency jump's re-measure finds the upstream not raiseRatio slower, vegas goes back to the jump window's
   * served concurrency less beta, and grows into its band from below (adr/0128); gradient2 goes back to all of it
   * (adr/0133). false: they grow from the drain.
   */
  jumpReturn: true,
  /**
   * After a fall's re-measure, that return starts from the concurrency the fall window held, not from its completion
   * rate x the new latency, which its slow part holds down (adr/0136). false: the rate, as after a jump.
   */
  fallReturn: true,
  /**
   * vegas: a slow start that is not the limiter's first (a stale raise's, or one an idle gap cut short) returns after
   * its re-measure as a jump does, to its exit's served concurrency less beta (adr/0137). false: it grows from the
   * drain.
   */
  startReturn: true,
  /**
   * vegas: after an app-limited slow start, a baseline window that may have measured closed-loop callers' queue (a
   * cohort of the slow start rose; in-flight past the tested limit, by no more than Little's law lets our queue explain)
   * measures again with the limit at the tested one, a concurrency no round saw queue at (BBR's ProbeRTT, once;
   * adr/0142, adr/0143), then returns to the concurrency the first window held. Needs drainOnExit. false: the window's
   * own mean.
   */
  probeTested: true,
  /** Growth stops at max(initialLimit, this x the window's peak in-flight) (Netflix: inflight < limit / 2). */
  appLimitedFactor: 2,
};

/**
 * The control loop's own constants ("ours", ADR-0009), data rather than literals so the ablation
 * (docs/ablation.md) can vary each. Users do not set these. Provenance of every value: docs/tuning.md
 * ("The control loop's tuning", checked against this record); design: adr/0045-0049.
 */
export type ControlTuning = Readonly<typeof SHIPPED>;
/** The shipped tuning. */
export const DEFAULT_TUNING: ControlTuning = Object.freeze(SHIPPED);
