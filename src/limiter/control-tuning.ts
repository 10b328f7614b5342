import { ALPHA_POWER, ALPHA_SCALE, BETA_RATIO } from './control-config';

/**
 * The control loop's own constants ("ours" in ADR-009's sense: not borrowed, chosen and justified
 * with the simulator), in one frozen record. Users do not set these; the ablation study
 * (docs/ablation.md, `npm run sim:ablation`) runs the loop with each one turned off, halved and
 * doubled, which is why they are data and not literals in the code. Each field says what it
 * does and why it has its value; adr/0045-0049 record the design.
 */
export interface ControlTuning {
  /**
   * Slow start (adr/0045): while no round has shown a queue, every latency sample whose call found
   * the limit binding adds this to the limit, so the limit doubles per round trip, as TCP's slow
   * start grows its window by one segment per acknowledgement (RFC 5681); never more than double
   * the limit the round began with. 0 = no slow start: the loop starts in congestion avoidance at
   * initialLimit.
   */
  readonly startupGain: number;
  /**
   * A round (one round trip: it ends when a call admitted after it began completes) whose mean log
   * latency exceeds the pooled reference of the earlier rounds that did not rise by this share, or
   * by `startupNoiseZ` standard errors of the difference if that is more, has a queue: the slow
   * start ends once the next round confirms it. RFC 9406 (HyStart++) uses
   * 1/8 of the previous round's minimum RTT; API latencies are noisier than network round trips,
   * so the mean (a minimum of a few lognormal samples varies by +-15%) and a noise bound.
   */
  readonly startupThreshold: number;
  /** Standard errors of the round-to-round difference a rise must exceed (95%: 2). */
  readonly startupNoiseZ: number;
  /**
   * The slow start ends after this many rounds in a row in which the limit did not grow (demand
   * stayed under it): there is nothing left for it to find, and its round-by-round tests, run for
   * minutes on an app-limited client, would end it by chance sooner or later. Ours: 4 round trips.
   * 0 = it runs until a queue or a reduce signal.
   */
  readonly startupIdleRounds: number;
  /**
   * Rounds that must confirm a rise before the slow start ends (growth holds meanwhile): RFC 9406
   * runs a conservative slow start for 5 rounds after the first rise and resumes if the RTT falls
   * back; one round is enough to tell a chance rise of a few samples from a queue. 0 = none.
   */
  readonly confirmRounds: number;
  /**
   * On leaving the slow start with a queue, drain (adr/0045): the limit drops to the concurrency
   * the upstream serves at no load, the exit round's completion rate x the last queue-free round's
   * mean latency (Little's law; BBR's Drain to its bandwidth-delay estimate), and the next clean
   * window, with only calls admitted after the drain, measures the baseline. false: keep the limit,
   * and take the baseline from the next window anyway.
   */
  readonly drainOnExit: boolean;
  /**
   * The drain goes below that concurrency, to this share of it, so the queue the slow start built
   * (for clients sharing an upstream, everyone's) empties before the baseline is measured; the
   * baseline window's end restores the full concurrency. At 1 the upstream stays exactly full and
   * its queue never empties. BBR drains at 1 / 2.89 of its bottleneck rate; ours: 0.5, the queue
   * empties at half the upstream's rate, and a short drain costs half the throughput.
   */
  readonly drainGain: number;
  /**
   * Samples a re-measure's window after a drain needs to measure the baseline (adr/0045, 0047),
   * instead of minSamples (the low-traffic rule still closes it, with as many samples x age). Ours:
   * 100, a standard error of about 3% at a coefficient of variation of 0.3, while the drained limit
   * holds a running client at half its throughput (the first baseline: firstBaselineSamples).
   */
  readonly baselineSamples: number;
  /**
   * Samples the first baseline window needs (the one after the limiter's first drain, adr/0089);
   * later re-measures (a latency jump, a stale baseline) need `baselineSamples`. Clients sharing an
   * upstream split it by their baselines: a 1% error in one moves that client's share by 9-13%
   * (measured in shared-upstream), so the baseline every later window is judged against is measured
   * on more samples (with the low-traffic rule, 150-220 instead of 80-120 in shared-upstream).
   * Re-measures keep 100: they hold a running client at half its throughput while they last.
   */
  readonly firstBaselineSamples: number;
  /**
   * Weight of the window quantile's excess over beta removed in one shrink (adr/0035). Netflix
   * removes log10(L) per sample; one step per 2 s window would need ~40 windows to halve a limit
   * of 160. Half the excess closes the gap geometrically while the smoothed latency, which lags by
   * about two windows, catches up.
   */
  readonly excessQueueGain: number;
  /**
   * With no queue at all (queueUse <= alpha / 3, Netflix's "no queue" threshold in alpha units),
   * grow by beta, at most doubling (Netflix VegasLimit grows by beta there). false: grow by one
   * step, as in "room to grow".
   */
  readonly noQueueJump: boolean;
  /**
   * The no-queue growth is beta per window floor the window lasted (durationMs / floor, at least
   * 1; still at most doubling), not per window (adr/0090): a client that waits for its samples (a
   * stream's, at its arrival rate: 20-30 s windows) grows as fast in time as a busy one. Netflix
   * grows per sample, TCP Vegas per round trip. false: beta per window, whatever its length.
   */
  readonly noQueueGrowthPerFloor: boolean;
  /**
   * Little's law correction (adr/0036): the queue estimate from a p90 ratio undercounts the queue
   * by p90 / mean; multiply by it, at most this much (2: a lognormal of sigma 0.6's p90 / mean is
   * 1.8; a window that straddles two regimes reads 5 and more, which is not a queue). 1 = off.
   */
  readonly maxTailRatio: number;
  /**
   * The baseline is stale when the limit halved and latency did not follow (adr/0047): a queue of
   * ours halves with the in-flight that builds it. The test runs only while latency is at least
   * this many times the baseline. Ours: 2, above the 1.2-1.5x that many clients' Vegas bands hold
   * at one upstream together, so a standing queue that other clients keep is never taken for a
   * slower upstream (which would make every client raise its baseline in turn and grow without
   * bound).
   */
  readonly raiseRatio: number;
  /**
   * ...and latency must have fallen by less than this share of the in-flight's fall, in log terms
   * (0.5: halfway between "fell in proportion", 1, and "did not move", 0).
   */
  readonly raiseElasticity: number;
  /**
   * ...and both for this many shrinking windows in a row (adr/0047); at the floor (one call in
   * flight: nothing of ours queues) that alone re-takes the baseline. Envoy re-measures its minRTT
   * when the limit sits at its minimum for 5 consecutive windows; 5 here too, so the start-up
   * overshoot of many clients draining, which lasts a few windows, is not taken for a slower
   * upstream. (A very large value turns the rule off; the ablation uses 1e9.)
   */
  readonly raiseWindows: number;
  /**
   * A window whose latency is raiseRatio times the previous window's, with our in-flight not up,
   * starts a new slow start that measures the baseline anew (adr/0047): the upstream changed.
   */
  readonly jumpRestart: boolean;
  /**
   * After an overload cut, the limit does not grow above the concurrency the upstream served for
   * this long (adr/0046): each probe past a hard cap is a burst of fast refusals, so probing must
   * be rare. Ours: 10 s, five minimum windows. 0 = off.
   */
  readonly overloadHoldMs: number;
  /**
   * A window whose answers are at least this share `overload` closes at the next update check
   * instead of waiting for its floor (adr/0046): a cap answering 503 in 1 ms refuses thousands of
   * calls in a 2 s window. Ours: 0.5, a majority leaves no doubt. 1 = off (wait for the floor).
   */
  readonly overloadCloseShare: number;
  /**
   * What vegas and gradient2 steer by after the slow start: 'window', each window's own quantile,
   * with `noiseZ` standard errors of it allowed as noise; or 'smoothed', the spec's chain (window
   * p90 -> median of 3 -> EWMA, Uber's aggregation), which lags a forming queue by about two
   * windows. Either way the baseline falls only to the smoothed latency (a minimum of the raw
   * series would drift to its low tail).
   */
  readonly steerOn: 'window' | 'smoothed';
  /**
   * The statistic vegas steers by (adr/0048): 'mean', the window's mean latency, or 'quantile',
   * its p90 (the `quantile` option) with the Little's-law correction `maxTailRatio`. Vegas counts
   * queued requests, L x (1 - no-load / latency), and Little's law gives that count from means;
   * a mean also has about 1.7x less noise than a p90 over the same samples.
   */
  readonly vegasStatistic: 'mean' | 'quantile';
  /**
   * The baseline falls to the smoothed latency only when it is lower by more than this many
   * standard errors of the window statistic (ours: 1): the minimum of a noisy series drifts to its
   * low tail, and a baseline that sits low reads a queue that is not there. 0 = any lower value.
   */
  readonly fallZ: number;
  /**
   * Standard errors of the window quantile a latency rise must exceed before vegas counts it as a
   * queue (adr/0036). Ours: the baseline, a minimum over noisy windows, sits below the typical
   * no-load quantile by about one standard error of a window's; 1 covers it. 0 = off.
   */
  readonly noiseZ: number;
  /**
   * The default Vegas band's shape when the user gives no alpha or beta (control-config.ts,
   * adr/0036): alpha = min(3 log10 L, (L / 10)^alphaPower), beta = betaRatio x alpha.
   */
  readonly alphaPower: number;
  /** The default band's alpha at L = 10, in requests (alpha = alphaScale x (L / 10)^alphaPower; ALPHA_SCALE). */
  readonly alphaScale: number;
  /**
   * 1: vegas's growth step is min(alpha, log10 L floored at 1), a fraction of a request at small
   * limits; 0: Netflix's log10 L floored at 1, one request for every limit up to 10 (additive, the
   * same for every client, which AIMD's fairness argument needs).
   */
  readonly stepCap: number;
  readonly betaRatio: number;
  /**
   * Round the limit by error diffusion at each window close, so the admitted limit averages the
   * estimate (see control-loop.ts `apply`). false: the integer part, always.
   */
  readonly dither: boolean;
  /** The expected timeout tail (adr/0037) is learnt and excused. false: every timeout counts. */
  readonly timeoutTail: boolean;
  /**
   * The app-limited guard: growth stops at max(initialLimit, this x the window's peak in-flight).
   * Netflix's VegasLimit and Gradient2Limit hold when inflight < limit / 2: a factor of 2.
   */
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
  baselineSamples: 100,
  firstBaselineSamples: 400,
  excessQueueGain: 0.5,
  noQueueJump: true,
  noQueueGrowthPerFloor: true,
  maxTailRatio: 2,
  raiseRatio: 2,
  raiseElasticity: 0.5,
  raiseWindows: 5,
  jumpRestart: true,
  overloadHoldMs: 10_000,
  overloadCloseShare: 0.5,
  steerOn: 'window',
  vegasStatistic: 'mean',
  fallZ: 1,
  noiseZ: 1,
  alphaPower: ALPHA_POWER,
  alphaScale: ALPHA_SCALE,
  stepCap: 1,
  betaRatio: BETA_RATIO,
  dither: true,
  timeoutTail: true,
  appLimitedFactor: 2,
});
