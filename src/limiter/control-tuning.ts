import { ALPHA_POWER, ALPHA_SCALE, BETA_RATIO } from './control-config';

/**
 * The control loop's own constants ("ours", ADR-0009), data rather than literals so the ablation
 * (docs/ablation.md) can vary each. Users do not set these. Provenance of every value: docs/tuning.md
 * ("The control loop's tuning", checked against this record); design: adr/0045-0049.
 */
export interface ControlTuning {
  /** Slow start's growth per binding sample: the limit doubles per round trip (RFC 5681). 0 = no slow start. */
  readonly startupGain: number;
  /** Slow-start exit: a round's mean log latency rising this share over the reference (RFC 9406's 1/8). */
  readonly startupThreshold: number;
  /** ...or by this many standard errors of the round-to-round difference, if more (95%: 2). */
  readonly startupNoiseZ: number;
  /** Rounds in a row without growth that end the slow start (app-limited). 0 = off. */
  readonly startupIdleRounds: number;
  /** Rounds that must confirm a rise before the exit; growth holds meanwhile (RFC 9406's CSS, shortened). */
  readonly confirmRounds: number;
  /** On exit, drain to the no-load served concurrency (Little's law; BBR's Drain) before the baseline window. */
  readonly drainOnExit: boolean;
  /** Share of that concurrency the drain goes to, so the queue (everyone's, on a shared upstream) empties. */
  readonly drainGain: number;
  /** A cohort above the no-load pool past the noise stays out of it (adr/0096). false: every clean cohort joins. */
  readonly noLoadRiseTest: boolean;
  /** After a slow start, its drain, settling and baseline window admit whole calls, no error diffusion (adr/0096). */
  readonly measureWholeCalls: boolean;
  /** Samples a re-measure's baseline window needs instead of minSamples (adr/0045, adr/0047). */
  readonly baselineSamples: number;
  /** Samples the limiter's first baseline window needs: its error sets shared-upstream fairness (adr/0089). */
  readonly firstBaselineSamples: number;
  /** Share of vegas's queue excess over beta removed in one shrink (adr/0035). */
  readonly excessQueueGain: number;
  /** With no queue (queueUse <= alpha / 3) grow by beta, at most doubling (Netflix VegasLimit). false: one step. */
  readonly noQueueJump: boolean;
  /** That growth is per window floor the window lasted, not per window (adr/0090). */
  readonly noQueueGrowthPerFloor: boolean;
  /** Stale baseline (adr/0047): the raise and the jump re-measure need latency this many times the baseline. */
  readonly raiseRatio: number;
  /** ...and latency fell by less than this share of our in-flight's fall, in log terms. */
  readonly raiseElasticity: number;
  /**
   * ...for this many shrinking windows in a row (Envoy re-measures after 5 windows at its minimum);
   * at the floor (one call in flight) that alone raises. 1e9 = off.
   */
  readonly raiseWindows: number;
  /** A raiseRatio jump over the previous window, our in-flight not up, re-measures the baseline (adr/0047). */
  readonly jumpRestart: boolean;
  /** No round is tested for a rise against a reference of fewer than ROUND_SAMPLES samples (adr/0106). */
  readonly matureReference: boolean;
  /** A rise is confirmed only if the suspect round's cohort, counted through the next round, also rose over the pooled cohorts (adr/0110). */
  readonly cohortConfirm: boolean;
  /** After an overload cut, no growth past the served concurrency for this long (adr/0046). 0 = off. */
  readonly overloadHoldMs: number;
  /** A window with at least this share of `overload` answers closes early (adr/0046). 1 = off. */
  readonly overloadCloseShare: number;
  /** Standard errors of the window statistic a rise must exceed to count as queue (adr/0036). 0 = off. */
  readonly noiseZ: number;
  /** Default band (adr/0049): alpha = min(3 log10 L, alphaScale x (L / 10)^alphaPower), beta = betaRatio x alpha. */
  readonly alphaPower: number;
  /** The default alpha at L = 10, in requests (ALPHA_SCALE). */
  readonly alphaScale: number;
  /**
   * 1: vegas's step is min(alpha, log10 L floored at 1); 0: Netflix's log10 L floored at 1, an
   * additive step the same for every client, as AIMD's fairness argument needs.
   */
  readonly stepCap: number;
  readonly betaRatio: number;
  /** Round the limit by error diffusion at each window close (control-loop.ts `apply`), but see measureWholeCalls. false: truncate. */
  readonly dither: boolean;
  /** Learn and excuse the expected timeout tail (adr/0037). false: every timeout counts. */
  readonly timeoutTail: boolean;
  /** The same for refusals, a share that comes whatever our concurrency (adr/0095). false: every refusal counts. */
  readonly refusalTail: boolean;
  /** Growth stops at max(initialLimit, this x the window's peak in-flight) (Netflix: inflight < limit / 2). */
  readonly appLimitedFactor: number;
}

/** The shipped tuning. */
export const DEFAULT_TUNING: ControlTuning = Object.freeze({
  startupGain: 1,
  startupThreshold: 1 / 8,
  startupNoiseZ: 2,
  confirmRounds: 1,
  startupIdleRounds: 4,
  drainOnExit: true,
  drainGain: 0.5,
  noLoadRiseTest: true,
  measureWholeCalls: true,
  baselineSamples: 100,
  firstBaselineSamples: 400,
  excessQueueGain: 0.5,
  noQueueJump: true,
  noQueueGrowthPerFloor: true,
  raiseRatio: 2,
  raiseElasticity: 0.5,
  raiseWindows: 5,
  jumpRestart: true,
  matureReference: true,
  cohortConfirm: true,
  overloadHoldMs: 10_000,
  overloadCloseShare: 0.5,
  noiseZ: 1,
  alphaPower: ALPHA_POWER,
  alphaScale: ALPHA_SCALE,
  stepCap: 1,
  betaRatio: BETA_RATIO,
  dither: true,
  timeoutTail: true,
  refusalTail: true,
  appLimitedFactor: 2,
});
