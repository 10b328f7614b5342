import { EventChannel } from '../core/events';
import type { Observation } from '../core/observation';
import {
  backoffFor,
  QUANTILE_SE_FACTOR,
  type Decision,
  type LimitAlgorithm,
  type WindowSummary,
} from './algorithms/algorithm';
import { createAimd } from './algorithms/aimd';
import { createFixed } from './algorithms/fixed';
import { createGradient2 } from './algorithms/gradient2';
import { createVegas, MIN_BASELINE_MS } from './algorithms/vegas';
import { Baseline } from './baseline';
import {
  ALPHA_POWER,
  ALPHA_SCALE,
  BETA_RATIO,
  bandOf,
  defaultAlpha,
  defaultBeta,
  type ControlConfig,
} from './control-config';
import { type ControlTuning, DEFAULT_TUNING } from './control-tuning';
import type { LimitChange, LimitChangeReason, LimitController, LimitControllerSnapshot } from './controller';
import { TimeoutTail } from './timeout-tail';
import { LatencySignal, SamplingWindow } from './window';

/**
 * Samples the slow start's rounds need before their own spread replaces SPREAD_PRIOR in the exit
 * test: RFC 9406's N_RTT_SAMPLE (8).
 */
export const ROUND_SAMPLES = 8;
/**
 * The standard deviation of log latency the exit test assumes before it has measured one. Ours,
 * on the cautious side: a lognormal latency of sigma 0.5 (p90 / p50 = 1.9, a wide API).
 */
export const SPREAD_PRIOR = 0.5;

/** A window where failures are at least this share of the answers does not grow (adr/0030). */
export const FAILURE_GROWTH_VETO = 0.5;

function createAlgorithm(config: ControlConfig, tuning: ControlTuning): LimitAlgorithm {
  switch (config.algorithm) {
    case 'vegas': {
      // The default band in the tuning's shape (the ablation varies it); a user's band as given.
      // The shipped shape shares the default functions: two closures a limiter fewer (233 B a key).
      const shipped =
        tuning.alphaPower === ALPHA_POWER && tuning.betaRatio === BETA_RATIO && tuning.alphaScale === ALPHA_SCALE;
      const band = shipped
        ? { alpha: defaultAlpha, beta: defaultBeta }
        : bandOf(tuning.alphaPower, tuning.betaRatio, tuning.alphaScale);
      return createVegas({
        alpha: config.alpha === defaultAlpha ? band.alpha : config.alpha,
        beta: config.beta === defaultBeta ? band.beta : config.beta,
        excessQueueGain: tuning.excessQueueGain,
        noQueueJump: tuning.noQueueJump,
        maxTailRatio: tuning.maxTailRatio,
        minBaselineMs: MIN_BASELINE_MS,
        stepCap: tuning.stepCap,
      });
    }
    case 'gradient2':
      return createGradient2({ rttTolerance: config.rttTolerance, smoothing: config.smoothing });
    case 'aimd':
      return createAimd({ backoffRatio: config.backoffRatio });
    case 'fixed':
      return createFixed();
  }
}

/** Reasons that mean "the latency rule shrank the limit": the descent the baseline watches (adr/0047). */
function latencyShrink(reason: LimitChangeReason): boolean {
  return reason === 'queue-above-beta' || reason === 'latency-above-tolerance';
}

/**
 * The limiter's control loop: window -> latency signal -> baseline -> algorithm -> reduce signals
 * -> slow start -> guards -> guardrails. Settle-driven (spec §9.5, ADR-001): `observe` counts the
 * call and, when `updateIntervalMs` has passed since the last check, closes the window if it is
 * ready. No timers, no clock reads: time comes in with each call. `observe` allocates nothing; a
 * window close allocates nothing either, unless somebody listens for limit changes (one event
 * object per change).
 *
 * The phases (adr/0045): the loop starts in a slow start at initialLimit and doubles the limit
 * every window until a window shows a queue or a reduce signal; then it drains to the concurrency
 * the upstream served and steers by the algorithm (congestion avoidance). An idle gap or a
 * re-taken baseline starts a new slow start.
 */
export class LimitControlLoop implements LimitController {
  /** The admitted limit; a plain field, read on every admission. */
  limit: number;
  readonly minLimit: number;
  readonly maxLimit: number;
  readonly changes = new EventChannel<LimitChange>();
  readonly config: ControlConfig;
  private readonly tuning: ControlTuning;
  private estimate: number;
  private readonly algorithm: LimitAlgorithm;
  /** vegas steers by the window mean, gradient2 by the window quantile (adr/0048). */
  private readonly steersOnMean: boolean;
  private readonly window: SamplingWindow;
  private readonly signal: LatencySignal;
  private readonly baseline: Baseline;
  /** The timeout share a healthy upstream shows anyway (adr/0037); latency-driven algorithms only. */
  private readonly tail = new TimeoutTail();
  private readonly summary: WindowSummary = {
    latencyMs: Number.NaN,
    baselineMs: Number.NaN,
    samples: 0,
    overloads: 0,
    timeouts: 0,
    failures: 0,
    reached: 0,
    peakInflight: 0,
    meanInflight: 0,
    durationMs: 0,
    tailRatio: 1,
    quantileNoise: 0,
    floorSpans: 1,
  };
  private readonly decision: Decision = { estimate: 0, reason: 'warming-up' };
  /**
   * The clock at the settle being observed: the caller sets it just before `observe`, which reads
   * it, as do the out-of-line helpers (adr/0087: a double passed to a call V8 does not inline is
   * boxed, on every call, even when the call sits on a branch rarely taken).
   */
  settledAt = 0;
  /** The observation a mark feeds through `observe` (reused: a mark allocates nothing). */
  private readonly markObservation: { verdict: 'ok'; latencyMs: number; durationMs: number } = {
    verdict: 'ok',
    latencyMs: 0,
    durationMs: 0,
  };
  /** True during a slow start (adr/0045). */
  private slowStart: boolean;
  /**
   * A round showed a queue and the slow start holds for one more round to confirm it (RFC 9406's
   * conservative slow start, shortened to one round): a round of a few samples rises by chance.
   */
  private suspect = false;
  /** The admitted limit the last window without reduce signals used to the full (adr/0046). */
  private servedLimit = 0;
  /** The previous window's statistic and limit estimate (the jump rule, adr/0047). */
  private lastWindowMs = Number.NaN;
  private lastWindowLimit = 0;
  /** Consecutive slow-start rounds in which the limit did not grow. */
  private idleRounds = 0;
  /** The limit the current slow-start round began with: growth stops at twice it. */
  private roundLimit: number;
  /**
   * The slow start's reference (adr/0045): the mean latency of its rounds that showed no rise,
   * pooled, and their sample count; and the rounds' within-round spread (sample-weighted sum of
   * squared coefficients of variation), which the test's noise bound uses: it is not inflated when
   * the level moves from round to round.
   */
  private referenceMs = Number.NaN;
  private referenceLog = Number.NaN;
  private referenceSamples = 0;
  /**
   * The same rounds measured by cohort (adr/0045): a round's completions are the fastest calls of
   * the ones it admitted (a round lasts one round trip) plus the slowest of earlier ones, so its
   * mean runs low while the limit grows (25% at sigma 0.3 in the simulator). A cohort, the calls a
   * round admitted, counted as they complete through the next round too, has no such bias: its mean
   * is the no-load latency the drain and the settling compare with.
   */
  private roundStartedAt = 0;
  private lastRoundStartedAt = 0;
  private cohortSum = 0;
  private cohortCount = 0;
  private cohortClean = false;
  private liveSum = 0;
  private liveCount = 0;
  private noLoadSum = 0;
  private noLoadCount = 0;
  private spreadWeight = 0;
  private spreadSquares = 0;
  /**
   * After a drain, the next clean window measures the baseline from calls admitted after it
   * (`sampleFrom`); 'set' replaces the baseline (first start, a raise), 'offer' may only lower it
   * (a restart after idle). 'none' otherwise.
   */
  private baselineWindow: 'none' | 'set' | 'offer' = 'none';
  private sampleFrom = -Infinity;
  /** The exit round's completion rate (per ms) and limit, for the baseline window after a drain. */
  private exitRate = 0;
  /**
   * Little's law counts a permit's whole hold: for calls that mark (streams) the concurrency the
   * upstream served is rate x (no-load latency + the time held after the mark), not rate x latency.
   */
  private exitAfterMarkMs = 0;
  private exitLimit = 0;
  /** Windows still to let pass after a drain before one measures the baseline. */
  private settling = 0;
  private settlingSince = 0;
  /** A drained window has measured the baseline: later ones need baselineSamples, not firstBaselineSamples (adr/0089). */
  private baselineMeasured = false;
  /** What the current slow start's drain window does with the baseline. */
  private pendingBaseline: 'set' | 'offer' = 'set';
  /** The concurrency an overload window showed the upstream serves; growth holds there until `overloadUntil`. */
  private overloadCeiling = Number.NaN;
  private overloadUntil = -Infinity;
  /** The last overload cut: refusals of calls admitted before it teach nothing more. */
  private overloadFrom = -Infinity;
  private nextCheckAt = -Infinity;
  private lastLearnedAt = Number.NaN;
  private windowsClosed = 0;
  // The last decision, kept as fields so a window close allocates nothing.
  private hasChange = false;
  private changeFrom = 0;
  private changeTo = 0;
  private changeDirection: LimitChange['direction'] = 'hold';
  private changeReason: LimitChangeReason = 'warming-up';
  private changeAt = 0;
  /** The fraction of the estimate the admitted limit still owes (see `apply`). */
  private carry = 0;

  constructor(config: ControlConfig, tuning: ControlTuning = DEFAULT_TUNING) {
    this.config = config;
    this.tuning = tuning;
    this.minLimit = config.minLimit;
    this.maxLimit = config.maxLimit;
    this.estimate = config.initialLimit;
    this.limit = config.initialLimit;
    this.algorithm = createAlgorithm(config, tuning);
    this.steersOnMean = config.algorithm === 'vegas' && tuning.vegasStatistic === 'mean';
    this.slowStart = config.algorithm !== 'fixed' && tuning.startupGain > 0;
    this.roundLimit = config.initialLimit;
    this.window = new SamplingWindow({ ...config, overloadCloseShare: tuning.overloadCloseShare });
    this.signal = new LatencySignal();
    this.baseline = new Baseline(tuning);
  }

  observeMark(latencyMs: number, now: number, inflight: number): boolean {
    const mark = this.markObservation;
    mark.latencyMs = latencyMs;
    mark.durationMs = latencyMs;
    this.settledAt = now;
    return this.observeInFull(mark, inflight, false);
  }

  /**
   * The per-call path, at `settledAt`, kept small so that V8 inlines it into the settle: a double
   * passed to a call it does not inline is boxed, 16 B a call (ADR-0041, adr/0087). Marked calls,
   * idle gaps, and the windows after a drain (which filter stale samples) take the full path.
   */
  observe(observation: Observation, inflight: number, marked = false): boolean {
    const now = this.settledAt;
    const latencyMs = observation.latencyMs;
    const durationMs = observation.durationMs;
    const heldMs = durationMs === undefined ? latencyMs : durationMs;
    if (
      marked ||
      this.settling > 0 ||
      this.baselineWindow !== 'none' ||
      now - heldMs - this.lastLearnedAt >= this.config.idleAfterMs
    )
      return this.observeInFull(observation, inflight, marked);
    const verdict = observation.verdict;
    const sample = verdict === 'ok' || verdict === 'answered';
    const starved = verdict === 'timeout' && latencyMs < this.baseline.valueMs;
    const stale = verdict === 'overload' && now - heldMs < this.overloadFrom;
    this.window.settledAt = now;
    if (!starved && !stale && this.window.recordSettle(observation, inflight, false)) {
      this.lastLearnedAt = now;
    }
    const changed = sample && this.slowStart && this.slowStartSample(observation, inflight);
    if (now < this.nextCheckAt) return changed;
    return this.check() || changed;
  }

  /** A slow start's per-sample work: its round's cohort, and growth when the limit binds. */
  private slowStartSample(observation: Observation, inflight: number): boolean {
    const now = this.settledAt;
    const latencyMs = observation.latencyMs;
    const durationMs = observation.durationMs;
    const startedAt = now - (durationMs === undefined ? latencyMs : durationMs);
    this.window.recordLog(observation);
    if (startedAt >= this.roundStartedAt) {
      this.liveSum += latencyMs;
      this.liveCount++;
    } else if (startedAt >= this.lastRoundStartedAt) {
      this.cohortSum += latencyMs;
      this.cohortCount++;
    }
    if (this.suspect || inflight < this.limit) return false;
    const cap = 2 * this.roundLimit;
    const grown = this.estimate + this.tuning.startupGain;
    return this.estimate < cap ? this.apply(this.clamp(grown < cap ? grown : cap), 'slow-start', now) : false;
  }

  /** The full path of `observe` (see there). */
  private observeInFull(observation: Observation, inflight: number, marked: boolean): boolean {
    const now = this.settledAt;
    const verdict = observation.verdict;
    const latencyMs = observation.latencyMs;
    const durationMs = observation.durationMs;
    const startedAt = now - (durationMs === undefined ? latencyMs : durationMs);
    // Idle means nothing in flight: the gap runs from the last lesson to this call's start, and a
    // call that ran through it (a stream, a slow call) kept it busy.
    const learned = this.lastLearnedAt;
    if (startedAt - learned >= this.config.idleAfterMs) this.restartAfterIdle(now);
    const sample = verdict === 'ok' || verdict === 'answered';
    // A marked call has given its latency sample at the mark; its settle teaches the hold after it
    // (a stream's body), for Little's law. Out of line: the common path stays small enough to inline.
    if (marked && sample) return this.settleMarked(now, startedAt, latencyMs);
    // A timeout whose upstream run time is under the no-load latency spent its budget waiting in
    // our queue and reached the upstream with a sliver of it: no evidence of upstream saturation
    // (ours). Counted, a queue that outgrew the deadline would cut the limit that drains it.
    const starved = verdict === 'timeout' && latencyMs < this.baseline.valueMs;
    // The window that measures the baseline takes only calls admitted after the drain: the ones
    // before it waited behind the slow start's overshoot.
    // Refusals of calls admitted before an overload cut answer the old limit, not the new one: they
    // would close the next window early on a handful of completions and cut again, to about 1.
    const stale = sample ? startedAt < this.sampleFrom : verdict === 'overload' && startedAt < this.overloadFrom;
    const atMark = observation === this.markObservation;
    this.window.settledAt = now;
    if (!starved && !stale && this.window.recordSettle(observation, inflight, atMark)) {
      this.lastLearnedAt = now;
    }
    if (sample && this.slowStart && !starved && !stale) this.window.recordLog(observation);
    if (sample && (this.slowStart || this.settling > 0)) {
      if (startedAt >= this.roundStartedAt) {
        this.liveSum += latencyMs;
        this.liveCount++;
      } else if (startedAt >= this.lastRoundStartedAt) {
        this.cohortSum += latencyMs;
        this.cohortCount++;
      }
    }
    let changed = false;
    // The slow start grows per sample whose call found the limit binding (adr/0045), at most to
    // twice the limit its round began with.
    if (this.slowStart && !this.suspect && sample && inflight >= this.limit) {
      const cap = 2 * this.roundLimit;
      const grown = this.estimate + this.tuning.startupGain;
      if (this.estimate < cap) changed = this.apply(this.clamp(grown < cap ? grown : cap), 'slow-start', now);
    }
    if (now < this.nextCheckAt) return changed;
    return this.check() || changed;
  }

  /**
   * The update check, at most once per updateIntervalMs: closes the window if it is ready. Out of
   * line, so `observe` stays small enough for V8 to inline into the settle: a double passed to a
   * call it does not inline is boxed, 16 B a call (ADR-0041, the allocation guard).
   */
  private check(): boolean {
    const now = this.settledAt;
    this.nextCheckAt = now + this.config.updateIntervalMs;
    const window = this.window;
    const floorMs = this.windowFloorMs();
    // A slow-start round is one round trip; so is the settling window after a drain (a call
    // admitted after the drain has come back: the queue ahead of it at the upstream is gone); the
    // window that measures the baseline waits for firstBaselineSamples the first time and
    // baselineSamples after that (adr/0089); otherwise a window is at least its floor old.
    const ready =
      this.slowStart || this.settling > 0
        ? window.roundTrip || window.ready(now, floorMs)
        : this.baselineWindow !== 'none'
          ? window.ready(
              now,
              floorMs,
              this.baselineMeasured ? this.tuning.baselineSamples : this.tuning.firstBaselineSamples,
            )
          : window.ready(now, floorMs);
    return ready ? this.closeWindow(now) : false;
  }

  /** The settle of a call that marked: its hold after the mark, and the time it was learnt. */
  private settleMarked(now: number, startedAt: number, latencyMs: number): boolean {
    this.window.recordHold(now - startedAt - latencyMs);
    this.lastLearnedAt = now;
    return false;
  }

  setLimit(limit: number, now: number): boolean {
    if (typeof limit !== 'number' || Number.isNaN(limit)) {
      throw new TypeError(`resilix: setLimit needs a number; received ${String(limit)}`);
    }
    return this.apply(this.clamp(limit), 'manual', now);
  }

  snapshot(): LimitControllerSnapshot {
    const baselineMs = this.baseline.valueMs;
    const latencyMs = this.signal.smoothedMs;
    return {
      algorithm: this.algorithm.name,
      limit: this.limit,
      estimate: this.estimate,
      minLimit: this.minLimit,
      maxLimit: this.maxLimit,
      baselineMs: baselineMs === baselineMs ? baselineMs : undefined,
      latencyMs: latencyMs === latencyMs ? latencyMs : undefined,
      slowStart: this.slowStart,
      windows: this.windowsClosed,
      baselineRaises: this.baseline.raises,
      lastChange: this.hasChange ? this.lastChange() : undefined,
    };
  }

  /** clamp(2 x smoothed latency, minWindowMs, maxWindowMs): a window spans two round trips. */
  private windowFloorMs(): number {
    const { minWindowMs, maxWindowMs } = this.config;
    const twoTrips = 2 * this.signal.smoothedMs;
    if (!(twoTrips > minWindowMs)) return minWindowMs;
    return twoTrips < maxWindowMs ? twoTrips : maxWindowMs;
  }

  private closeWindow(now: number): boolean {
    const window = this.window;
    const summary = this.summary;
    const baseline = this.baseline;
    const tuning = this.tuning;
    const estimate = this.estimate;
    const latencyDriven = this.algorithm.latencyDriven;
    // The floor the window was held to (before this window's latency moves it): vegas's no-queue
    // growth is per floor's worth of time (adr/0090).
    const floorMs = this.windowFloorMs();
    window.summarise(now, summary);
    const spans = summary.durationMs / floorMs;
    summary.floorSpans = tuning.noQueueGrowthPerFloor && spans > 1 ? spans : 1;
    // The statistic the algorithm steers by (`statMs`): the window mean for vegas (Little's law
    // counts queued requests with means; adr/0048), the window quantile for gradient2 (spec §5.2).
    let statMs = Number.NaN;
    let meanMs = Number.NaN;
    summary.tailRatio = 1;
    summary.quantileNoise = 0;
    let statSe = 0;
    if (summary.samples > 0) {
      const quantileMs = window.latencyQuantile();
      meanMs = window.latencyMean();
      const cv = window.latencyCv();
      if (this.steersOnMean) {
        statMs = meanMs;
        statSe = cv / Math.sqrt(summary.samples);
      } else {
        statMs = quantileMs;
        statSe = (QUANTILE_SE_FACTOR * cv) / Math.sqrt(summary.samples);
        if (meanMs > 0 && quantileMs > meanMs) summary.tailRatio = quantileMs / meanMs;
      }
      this.signal.add(statMs);
      summary.quantileNoise = tuning.noiseZ * statSe;
    }
    // The expected tail (adr/0037): vegas and gradient2 count as reduce signals only the timeouts
    // beyond the share a healthy upstream shows anyway.
    const timeouts = summary.timeouts;
    if (latencyDriven && tuning.timeoutTail) summary.timeouts = this.tail.excess(timeouts, summary.reached);

    const failureDominated = summary.failures > 0 && summary.failures >= FAILURE_GROWTH_VETO * summary.reached;
    const clean = summary.samples > 0 && summary.overloads === 0 && summary.timeouts === 0 && !failureDominated;
    const slowStart = this.slowStart;
    let measured = false;
    let measuredBaseline = false;
    if (slowStart) {
      summary.latencyMs = statMs;
      // Until a drained window measures it, a round gives the baseline a first value (telemetry,
      // the starved-timeout rule); the round is short, so it runs low.
      if (clean && baseline.valueMs !== baseline.valueMs) baseline.offer(statMs, meanMs);
    } else if (this.settling > 0) {
      // After a drain, rounds of one round trip let the queue the slow start built (ours and, for
      // clients sharing an upstream, everyone's) drain away: until a round's latency is back at the
      // slow start's reference (or minWindowMs has passed). They measure nothing (adr/0045).
      const n = summary.samples;
      const noLoadMs = this.noLoadMs();
      const back = n >= ROUND_SAMPLES && !(meanMs > noLoadMs * (1 + this.noiseBound(n, this.noLoadCount)));
      this.nextCohort(now, false);
      if (back || now - this.settlingSince >= this.config.minWindowMs) this.settling = 0;
      summary.latencyMs = Number.NaN;
      measured = true;
    } else if (clean && this.baselineWindow !== 'none') {
      // The window after a drain measures the no-load latency (adr/0045).
      measured =
        this.baselineWindow === 'set' ? baseline.set(statMs, meanMs) : baseline.offer(statMs, meanMs) !== 'none';
      measuredBaseline = measured;
      if (measured) this.baselineMeasured = true;
      this.baselineWindow = 'none';
      this.sampleFrom = -Infinity;
      this.signal.reset();
      this.signal.add(statMs);
      summary.latencyMs = statMs;
    } else {
      // The baseline falls to the smoothed latency, and only by more than the window's noise: the
      // minimum of a noisy series drifts to its low tail, and at a few samples a window (one of
      // fifty clients sharing an upstream) that drift is tens of percent.
      const smoothedMs = this.signal.smoothedMs;
      if (clean && baseline.valueMs !== baseline.valueMs) {
        // No slow start gave a first value (startupGain 0, the fixed algorithm): the first clean window.
        baseline.offer(statMs, meanMs);
      } else if (
        clean &&
        this.baselineWindow === 'none' &&
        smoothedMs < baseline.valueMs * (1 - tuning.fallZ * statSe)
      ) {
        baseline.offer(smoothedMs, meanMs);
      }
      summary.latencyMs = tuning.steerOn === 'window' ? statMs : smoothedMs;
    }
    summary.baselineMs = baseline.valueMs;

    const decision = this.decision;
    this.algorithm.step(estimate, summary, decision);
    let next = decision.estimate;
    let reason = decision.reason;

    // Reduce signals take precedence over latency (DESIGN.md §3): a window that has any never grows.
    let pressured = false;
    if (latencyDriven && (summary.overloads > 0 || summary.timeouts > 0)) {
      pressured = true;
      if (next > estimate) next = estimate;
      if (summary.overloads > 0) {
        // Down to the concurrency the upstream serves (adr/0046), Little's law: the answered calls'
        // completion rate x the no-load mean latency (a queue at the upstream is not capacity),
        // or x their own latency before the no-load one is known. The cut so follows the share of
        // the window the refusals took, and holds there for a while (each probe past a hard cap
        // is a burst of refusals).
        const noLoadMs = slowStart ? this.noLoadMs() : baseline.meanMs;
        const rate = summary.durationMs > 0 ? summary.samples / summary.durationMs : 0;
        const served =
          noLoadMs > 0 ? rate * (noLoadMs + window.afterMarkMeanMs()) : window.servedConcurrency(summary.durationMs);
        // An overload window closes early, and its estimate is a few calls' worth of noise: when
        // the limit the last window without reduce signals used to the full is one more, the
        // upstream did serve that many at once.
        const measured = served === served ? Math.round(served) : estimate;
        const target = this.servedLimit === measured + 1 ? this.servedLimit : measured;
        if (target < next) {
          next = target;
          reason = 'overload';
        }
        if (tuning.overloadHoldMs > 0) {
          this.overloadCeiling = target > this.minLimit ? target : this.minLimit;
          this.overloadUntil = now + tuning.overloadHoldMs;
        }
        this.overloadFrom = now;
      }
      if (summary.timeouts > 0) {
        // Timeout is the strongest reduce signal (spec §8): the overload backoff, twice. Ours.
        const backoff = this.config.backoffRatio;
        const cut = estimate * backoffFor(summary.timeouts, summary.reached, backoff * backoff);
        if (cut < next) {
          next = cut;
          reason = 'timeout';
        }
      }
      if (reason !== 'overload' && reason !== 'timeout') reason = summary.overloads > 0 ? 'overload' : 'timeout';
    }

    if (slowStart) {
      // Only a round whose demand reached the limit can show a queue the limit built: testing the
      // rounds of an app-limited slow start, hundreds of them, would end it by chance.
      const binding = summary.peakInflight >= Math.floor(this.roundLimit);
      // (A rise past raiseRatio counts anyway: the upstream, or everyone sharing it, queues.)
      const rose =
        latencyDriven &&
        clean &&
        this.roundQueued(window.latencyLogMean(), summary.samples) &&
        (binding || meanMs >= tuning.raiseRatio * this.referenceMs);
      // A rise ends the slow start when the next round confirms it; a reduce signal at once.
      const queued = rose && (this.suspect || tuning.confirmRounds === 0);
      if (rose && !queued) this.suspect = true;
      else if (!rose && clean) this.suspect = false;
      // Rounds in which the limit did not grow (demand stayed under it): after startupIdleRounds
      // of them the slow start has nothing left to find, and congestion avoidance takes over
      // (adr/0045). Kept running, it would test round after round of an app-limited client, and
      // one of hundreds of such tests comes out a chance rise.
      this.idleRounds = estimate > this.roundLimit ? 0 : this.idleRounds + 1;
      const idle = tuning.startupIdleRounds > 0 && this.idleRounds >= tuning.startupIdleRounds;
      const over = latencyDriven ? pressured || queued || idle : decision.estimate < estimate;
      if (!over) {
        next = estimate;
        reason = 'slow-start';
        const logMean = window.latencyLogMean();
        // The within-round spread is not inflated by a level that moves between rounds: every
        // clean round teaches it.
        if (clean && summary.samples >= 2) {
          this.spreadWeight += summary.samples;
          this.spreadSquares += summary.samples * window.latencyLogVariance();
        }
        // Until the reference holds ROUND_SAMPLES samples, every round that did not rise joins
        // it: a first round of two lucky calls would otherwise stand as the reference for good.
        const young = this.referenceSamples < ROUND_SAMPLES;
        if (clean && !rose && (young || !(logMean > this.referenceLog + Math.log1p(tuning.startupThreshold)))) {
          // The reference pools the rounds that stayed within startupThreshold of it (the minimum
          // of rounds of a few samples each would run to their low tail, and one lucky round would
          // end the slow start; a round that rose within the noise bound is not pooled either, or
          // a queue building a few samples at a time would raise the reference with it).
          const before = this.referenceSamples;
          const pooled = before + summary.samples;
          this.referenceMs = before > 0 ? (this.referenceMs * before + meanMs * summary.samples) / pooled : meanMs;
          this.referenceLog = before > 0 ? (this.referenceLog * before + logMean * summary.samples) / pooled : logMean;
          this.referenceSamples = pooled;
        }
      } else {
        this.endSlowStart(now);
        if (queued && tuning.drainOnExit) {
          // Drain (BBR): the round's completion rate x the last queue-free round's mean latency,
          // the concurrency the upstream serves at no load (Little's law): the capacity when the
          // round saturated it (for one of several clients, its share of it), about the in-flight
          // when a noisy round did not.
          const rate = summary.durationMs > 0 ? summary.samples / summary.durationMs : 0;
          const bdp = rate * (this.noLoadMs() + window.afterMarkMeanMs()) * tuning.drainGain;
          next = bdp < estimate ? bdp : estimate;
          reason = 'drain';
          this.exitRate = rate;
          this.exitAfterMarkMs = window.afterMarkMeanMs();
          this.exitLimit = estimate;
        } else if (latencyDriven && !pressured) {
          // (aimd's own backoff, its reduce signal, stands.)
          next = estimate;
        }
      }
      this.roundLimit = next > this.minLimit ? next : this.minLimit;
      this.nextCohort(now, clean && !rose);
    } else if (measured) {
      // The settling and baseline windows only measure (reduce signals still cut).
      if (!pressured) {
        next = estimate;
        reason = 'warming-up';
        // When the baseline window finds the no-load latency raiseRatio times the slow start's (a
        // latency cliff: the upstream got slower, not busier), the drain went far too deep: back
        // to the exit round's completion rate x the new latency. Otherwise Vegas grows from the
        // drained limit: a client sharing an upstream that jumped back up at once would load it
        // while the others still measure their baselines.
        const target = this.exitRate * (baseline.meanMs + this.exitAfterMarkMs);
        const slower = baseline.meanMs >= tuning.raiseRatio * this.noLoadMs();
        if (measuredBaseline && slower && target > estimate) {
          next = target < this.exitLimit ? target : this.exitLimit;
          reason = 'drain';
        }
      }
      if (measuredBaseline) this.exitRate = 0;
    } else if (
      latencyDriven &&
      clean &&
      tuning.jumpRestart &&
      this.lastWindowMs > 0 &&
      statMs >= tuning.raiseRatio * this.lastWindowMs &&
      statMs >= tuning.raiseRatio * baseline.valueMs &&
      estimate <= this.lastWindowLimit
    ) {
      // Latency jumped raiseRatio-fold from one window to the next while our limit did not grow:
      // the upstream changed (a latency cliff, a failover), or demand rose into a limit above its
      // capacity. Either way, drain as a slow start's end does, and measure the no-load latency
      // anew (adr/0047): down to drainGain x the window's completion rate x the no-load latency
      // we knew; if the baseline window finds the upstream slower, its end restores the rest.
      const rate = summary.durationMs > 0 ? summary.samples / summary.durationMs : 0;
      const drained = rate * (baseline.meanMs + window.afterMarkMeanMs()) * tuning.drainGain;
      next = drained < estimate ? drained : estimate;
      reason = 'baseline-raised';
      this.exitRate = rate;
      this.exitAfterMarkMs = window.afterMarkMeanMs();
      this.exitLimit = estimate;
      this.pendingBaseline = 'set';
      this.endSlowStart(now);
    } else if (latencyDriven && clean && latencyShrink(reason)) {
      if (baseline.shrinking(statMs, meanMs, summary.meanInflight, estimate <= this.minLimit)) {
        // The upstream got slower, not busier (adr/0047): hold, and find the capacity anew.
        next = estimate;
        reason = 'baseline-raised';
        this.startSlowStart('set');
      }
    } else if (!latencyShrink(reason)) {
      baseline.endDescent();
    }
    // Only a window the latency rule did not shrink teaches the tail: timeouts that come with a
    // queue are the queue's.
    if (latencyDriven && tuning.timeoutTail && summary.samples > 0 && !latencyShrink(decision.reason)) {
      this.tail.learn(timeouts, summary.reached);
    }

    if (next > estimate) {
      if (failureDominated) {
        next = estimate;
        reason = 'failures';
      } else {
        const overloadCeiling = this.overloadCeiling;
        if (now < this.overloadUntil && next > overloadCeiling) {
          next = overloadCeiling > estimate ? overloadCeiling : estimate;
          reason = 'overload-hold';
        }
        // (Not for a drain's target: the exit round's demand reached the limit it drains from.)
        const demandCeiling = tuning.appLimitedFactor * summary.peakInflight;
        const ceiling = demandCeiling > this.config.initialLimit ? demandCeiling : this.config.initialLimit;
        if (next > ceiling && reason !== 'drain') {
          next = ceiling > estimate ? ceiling : estimate;
          reason = 'app-limited';
        }
      }
    }
    if (!(next === next) || next === Infinity || next === -Infinity) {
      next = estimate;
      reason = 'invalid-step';
    }
    if (next >= this.maxLimit && estimate >= this.maxLimit && next >= estimate) reason = 'at-max';
    else if (next <= this.minLimit && estimate <= this.minLimit && next <= estimate && reason !== 'baseline-raised') {
      reason = 'at-min';
    }
    if (summary.samples > 0) {
      this.lastWindowMs = statMs;
      this.lastWindowLimit = estimate;
    }
    // The limit a window without reduce signals used to the full (its demand reached it).
    if (!pressured && summary.samples > 0 && summary.peakInflight >= this.limit) this.servedLimit = this.limit;
    else if (summary.overloads > 0 && this.servedLimit >= this.limit) this.servedLimit = this.limit - 1;
    window.restart(now);
    this.windowsClosed++;
    return this.apply(this.clamp(next), reason, now, tuning.dither);
  }

  /**
   * Whether a slow-start round's mean latency rose over the reference (the pooled mean of the
   * rounds before it that did not) by more than startupThreshold, or by startupNoiseZ standard errors of the
   * difference (adr/0045). The noise uses the rounds' pooled within-round spread, so a round of
   * two samples is judged with a spread measured on many (SPREAD_PRIOR until there is one).
   */
  private roundQueued(logMean: number, samples: number): boolean {
    const referenceLog = this.referenceLog;
    if (!(referenceLog === referenceLog) || !(logMean === logMean) || samples < 1) return false;
    return logMean > referenceLog + Math.log1p(this.noiseBound(samples, this.referenceSamples));
  }

  /**
   * The relative change of a round's latency against one over `b` samples that chance explains:
   * startupNoiseZ standard errors of the difference of their mean log latencies, at least
   * startupThreshold. Tested on logs, so a heavy tail (one slow call among four) does not pass
   * for a queue. The spread is the slow start's pooled within-round standard deviation of log
   * latency (SPREAD_PRIOR before it has one).
   */
  private noiseBound(a: number, b: number): number {
    const sd = this.spreadWeight >= ROUND_SAMPLES ? Math.sqrt(this.spreadSquares / this.spreadWeight) : SPREAD_PRIOR;
    const tuning = this.tuning;
    const noise = Math.expm1(tuning.startupNoiseZ * sd * Math.sqrt(1 / a + 1 / b));
    return noise > tuning.startupThreshold ? noise : tuning.startupThreshold;
  }

  /**
   * The slow start's no-load mean latency: the pooled cohorts of its queue-free rounds, or the
   * rounds' own (low) mean before a cohort has completed.
   */
  private noLoadMs(): number {
    return this.noLoadCount >= ROUND_SAMPLES ? this.noLoadSum / this.noLoadCount : this.referenceMs;
  }

  /** A round closed at `now`: the previous round's cohort is complete enough to pool (if clean). */
  private nextCohort(now: number, clean: boolean): void {
    if (this.cohortClean && this.cohortCount > 0) {
      this.noLoadSum += this.cohortSum;
      this.noLoadCount += this.cohortCount;
    }
    this.cohortSum = this.liveSum;
    this.cohortCount = this.liveCount;
    this.cohortClean = clean;
    this.liveSum = 0;
    this.liveCount = 0;
    this.lastRoundStartedAt = this.roundStartedAt;
    this.roundStartedAt = now;
  }

  /** Starts a slow start from the current limit; its drain measures the baseline as `mode` says. */
  private startSlowStart(mode: 'set' | 'offer'): void {
    if (this.config.algorithm === 'fixed' || !(this.tuning.startupGain > 0)) return;
    this.slowStart = true;
    this.idleRounds = 0;
    this.roundLimit = this.estimate;
    this.referenceMs = Number.NaN;
    this.referenceLog = Number.NaN;
    this.referenceSamples = 0;
    this.noLoadSum = 0;
    this.noLoadCount = 0;
    this.cohortSum = 0;
    this.cohortCount = 0;
    this.cohortClean = false;
    this.liveSum = 0;
    this.liveCount = 0;
    this.spreadWeight = 0;
    this.spreadSquares = 0;
    this.pendingBaseline = mode;
  }

  /** Ends the slow start: the next clean window, with calls admitted from now on, measures the baseline. */
  private endSlowStart(now: number): void {
    this.slowStart = false;
    this.suspect = false;
    if (!this.algorithm.latencyDriven) return;
    this.baselineWindow = this.tuning.drainOnExit ? this.pendingBaseline : 'offer';
    this.sampleFrom = this.tuning.drainOnExit ? now : -Infinity;
    this.settling = this.tuning.drainOnExit ? 1 : 0;
    this.settlingSince = now;
  }

  /**
   * The idle rule (adr/0031): after a gap of at least idleAfterMs without a call that taught
   * anything, the half-filled window and the latency smoothing are stale and are dropped, and the
   * loop restarts with a slow start from the limit it has (TCP's restart after idle, RFC 5681
   * §4.1): a limit an incident pushed down is not clamped when traffic comes back. The baseline
   * is kept (the drain may only lower it): it is the best no-load reference there is.
   */
  private restartAfterIdle(now: number): void {
    // The gap is accounted for once, even if the settle that ended it teaches nothing.
    this.lastLearnedAt = now;
    this.window.restart(Number.NaN);
    this.signal.reset();
    this.baseline.endDescent();
    this.nextCheckAt = -Infinity;
    this.startSlowStart('offer');
  }

  private clamp(estimate: number): number {
    if (estimate < this.minLimit) return this.minLimit;
    if (estimate > this.maxLimit) return this.maxLimit;
    return estimate;
  }

  /**
   * Sets the estimate and the admitted limit. At a window close (`dither`) the limit is the
   * estimate rounded by error diffusion: the fraction left over carries to the next window, so
   * over windows the admitted limit averages the estimate. Rounded down every time, an estimate of
   * 1.9 would admit one call for as long as it held, and of two clients that hold 1.9 and 2.1 one
   * would get half the other's share.
   */
  private apply(next: number, reason: LimitChangeReason, now: number, dither = false): boolean {
    const from = this.limit;
    let to = Math.floor(next);
    if (dither) {
      const target = next + this.carry;
      to = Math.floor(target);
      if (to < this.minLimit) to = this.minLimit;
      else if (to > this.maxLimit) to = this.maxLimit;
      // A window that shrank the estimate never raises the admitted limit (a reduce signal never
      // grows it, adr/0035): the carry waits for the next window.
      if (next < this.estimate && to > from) to = from;
      this.carry = target - to;
      if (this.carry > 1 || this.carry < -1) this.carry = 0;
    } else {
      this.carry = 0;
    }
    this.changeDirection = next > this.estimate ? 'grow' : next < this.estimate ? 'shrink' : 'hold';
    this.estimate = next;
    this.limit = to;
    this.hasChange = true;
    this.changeFrom = from;
    this.changeTo = to;
    this.changeReason = reason;
    this.changeAt = now;
    if (to === from) return false;
    if (this.changes.size > 0) this.changes.emit(this.lastChange());
    return true;
  }

  private lastChange(): LimitChange {
    return {
      from: this.changeFrom,
      to: this.changeTo,
      direction: this.changeDirection,
      reason: this.changeReason,
      at: this.changeAt,
    };
  }
}

/** The control loop behind `limiter()`; `config` comes from `resolveControlConfig`. */
export function createLimitController(config: ControlConfig, tuning: ControlTuning = DEFAULT_TUNING): LimitController {
  return new LimitControlLoop(config, tuning);
}
