import type { Observation } from '../core/observation';
import type { Verdict } from '../core/verdict';
import { Ewma } from '../stats/ewma';
import { DEFAULT_MEDIAN_SIZE, MedianFilter } from '../stats/median-filter';
import { WindowQuantile } from '../stats/window-quantile';
import type { WindowSummary } from './algorithms/algorithm';
import { sharedWhenEqual } from '../core/options';
import { CONTROL_DEFAULTS } from './control-config';
import { DEFAULT_TUNING } from './control-tuning';

/** How a `failure` verdict teaches the limiter (adr/0030-failure-verdict.md). */
export type FailureHandling = 'hold' | 'ignore' | 'overload';

export interface WindowRules {
  /** Latency quantile of one window, in (0, 1). */
  readonly quantile: number;
  /** Samples that close a window on count once it is at least its floor old. */
  readonly minSamples: number;
  /** Lower clamp of a window's floor (its shortest life), ms. */
  readonly minWindowMs: number;
  /** Upper clamp of the floor; a window this old closes with any sample, ms. */
  readonly maxWindowMs: number;
  readonly failure: FailureHandling;
  /** A window whose answers are at least this share `overload` may close before its floor (adr/0046). */
  readonly overloadCloseShare: number;
}

/** The rules a window keeps: only its own six fields, frozen, of one shape. */
function copyRules(r: WindowRules): WindowRules {
  return Object.freeze({
    quantile: r.quantile,
    minSamples: r.minSamples,
    minWindowMs: r.minWindowMs,
    maxWindowMs: r.maxWindowMs,
    failure: r.failure,
    overloadCloseShare: r.overloadCloseShare,
  });
}

/** The rules of a limiter with the default options and tuning, shared by every such window. */
const DEFAULT_RULES: WindowRules = /* @__PURE__ */ copyRules({
  ...CONTROL_DEFAULTS,
  overloadCloseShare: DEFAULT_TUNING.overloadCloseShare,
});

/** Answers a window needs before an overload majority may close it early (adr/0046). Ours. */
export const OVERLOAD_CLOSE_MIN_ANSWERS = 10;

/**
 * One sampling window: what the calls that settled since the last close taught, in O(1) memory.
 * Latency samples come from `ok` and `answered` only (spec §8: answered is a sample without
 * pressure); `overload` and `timeout` are counted as reduce signals, never as samples (a 429 is
 * fast, a timeout is censored at the deadline; neither is the upstream's service time);
 * `failure` follows the failure handling (adr/0030); `rejected` and `cancelled` teach nothing.
 * The latency the window sees is `Observation.latencyMs`, which excludes time queued in the
 * limiter: the limiter never counts its own queue as upstream latency.
 *
 * Closing (adr/0032-window-closing-and-low-traffic.md): a window closes once it is at least
 * its floor old (the floor is clamp(2 x latency, minWindowMs, maxWindowMs), as failsafe-go sizes
 * windows from the round trip) and either has `minSamples` samples, or has waited long enough
 * that samples x age >= minSamples x floor (the low-traffic rule: 50 samples at 2 s is worth 4
 * at 25 s), or is `maxWindowMs` old with any sample at all. A window with reduce signals and no
 * samples closes at its floor. Allocates nothing after construction.
 */
export class SamplingWindow {
  /** Clock time the window opened; NaN until its first counted observation. */
  openedAt = Number.NaN;
  samples = 0;
  overloads = 0;
  timeouts = 0;
  failures = 0;
  reached = 0;
  peakInflight = 0;
  /** The clock at the settle `recordSettle` counts (set by the caller just before). */
  settledAt = 0;
  /** True once a call admitted after the window opened has ended: the window spans a round trip. */
  roundTrip = false;
  private inflightSum = 0;
  private afterMarkSum = 0;
  private holds = 0;
  private latencySum = 0;
  private latencySquares = 0;
  private logSum = 0;
  private logSquares = 0;
  private logCount = 0;
  private readonly latencies: WindowQuantile;
  private readonly rules: WindowRules;

  constructor(rules: WindowRules) {
    // The control loop hands over its whole config with the tuning's share added (17 fields, their
    // number boxes and a property array, about 0.3 KB), which a window would keep for its life in
    // every key of a KeyRegistry: it keeps its six fields, and the shared default rules when equal.
    this.rules = sharedWhenEqual(copyRules(rules), DEFAULT_RULES);
    this.latencies = new WindowQuantile({ quantile: rules.quantile });
  }

  /**
   * Counts one settled call that started at `startedAt`. Returns false when the verdict teaches
   * nothing.
   */
  record(verdict: Verdict, latencyMs: number, inflight: number, now: number, startedAt: number): boolean {
    this.settledAt = now;
    const observation = { verdict, latencyMs, durationMs: now - startedAt };
    const counted = this.recordSettle(observation, inflight, false);
    if (counted) this.recordLog(observation);
    return counted;
  }

  /**
   * Adds a counted sample's log latency (the slow start's exit test reads the round's log mean
   * and variance). Separate from recordSettle, and given the observation, not a number: the
   * per-call path must stay within V8's inlining budget (see recordSettle).
   */
  recordLog(observation: Observation): void {
    const latencyMs = observation.latencyMs;
    if (!(latencyMs > 0) || latencyMs === Infinity) return;
    const log = Math.log(latencyMs);
    this.logSum += log;
    this.logSquares += log * log;
    this.logCount++;
  }

  /**
   * `record` as the control loop calls it, at `settledAt` (set it first): the observation itself
   * (its `durationMs`, start to settle, or its latency when undefined, gives the start) and the
   * clock through a field, so no double crosses the call (a double passed to a call V8 does not
   * inline is boxed: 16 B a call). `atMark`: the sample of a mark,
   * whose hold is counted at its settle (recordHold).
   */
  recordSettle(observation: Observation, inflight: number, atMark: boolean): boolean {
    const now = this.settledAt;
    const verdict = observation.verdict;
    const latencyMs = observation.latencyMs;
    const durationMs = observation.durationMs;
    const heldMs = durationMs === undefined ? latencyMs : durationMs;
    switch (verdict) {
      case 'ok':
      case 'answered': {
        if (!(latencyMs >= 0) || latencyMs === Infinity) return false;
        // Little's law counts the whole hold: a call that did not mark held its permit for its
        // latency; a marked one's time after the mark is counted at its settle (recordHold).
        if (!atMark) this.holds++;
        this.latencies.add(latencyMs);
        this.latencySum += latencyMs;
        this.latencySquares += latencyMs * latencyMs;
        this.samples++;
        break;
      }
      case 'overload':
        this.overloads++;
        break;
      case 'timeout':
        this.timeouts++;
        break;
      case 'failure':
        if (this.rules.failure === 'ignore') return false;
        if (this.rules.failure === 'overload') this.overloads++;
        else this.failures++;
        break;
      default:
        return false;
    }
    if (this.openedAt !== this.openedAt) this.openedAt = now;
    else if (now - heldMs >= this.openedAt) this.roundTrip = true;
    this.reached++;
    if (inflight > this.peakInflight) this.peakInflight = inflight;
    this.inflightSum += inflight;
    return true;
  }

  /**
   * Counts how long one answered call held its permit past its latency: a marked call (a stream)
   * holds it through its body, time that is not latency but is concurrency (Little's law counts
   * the whole hold). 0 for a call that did not mark.
   */
  recordHold(afterMarkMs: number): void {
    this.afterMarkSum += afterMarkMs > 0 ? afterMarkMs : 0;
    this.holds++;
  }

  /**
   * Whether the window may close at `now`, given its floor in ms and the samples that close it on
   * count (minSamples unless the caller asks for more; see the class comment).
   */
  ready(now: number, floorMs: number, minSamples = this.rules.minSamples): boolean {
    if (this.reached === 0) return false;
    const ageMs = now - this.openedAt;
    if (ageMs < floorMs) {
      // An overload majority is unambiguous: waiting for the floor only spins more refusals.
      return (
        this.reached >= OVERLOAD_CLOSE_MIN_ANSWERS && this.overloads >= this.rules.overloadCloseShare * this.reached
      );
    }
    if (this.samples === 0) {
      // Reduce signals need no latency; a window of failures alone waits out maxWindowMs.
      return this.overloads + this.timeouts > 0 || ageMs >= this.rules.maxWindowMs;
    }
    if (this.samples >= minSamples || ageMs >= this.rules.maxWindowMs) return true;
    return this.samples * ageMs >= minSamples * floorMs;
  }

  /** Mean of the natural log of the window's (positive) latency samples; NaN without one. */
  latencyLogMean(): number {
    return this.logCount > 0 ? this.logSum / this.logCount : Number.NaN;
  }

  /** Variance of the log latencies (n - 1 in the denominator); 0 below two samples. */
  latencyLogVariance(): number {
    const n = this.logCount;
    if (n < 2) return 0;
    const mean = this.logSum / n;
    const variance = (this.logSquares - n * mean * mean) / (n - 1);
    return variance > 0 ? variance : 0;
  }

  /** Sum of the window's latency samples, ms. */
  get latencySumMs(): number {
    return this.latencySum;
  }

  /** Sum of the squares of the window's latency samples, ms². */
  get latencySquaresMs(): number {
    return this.latencySquares;
  }

  /** The window's latency quantile (p90 by default); NaN without samples. */
  latencyQuantile(): number {
    return this.latencies.value();
  }

  /** The window's mean latency over its samples; NaN without samples. */
  latencyMean(): number {
    return this.samples > 0 ? this.latencySum / this.samples : Number.NaN;
  }

  /**
   * The concurrency the upstream served in the window: the time-average number of calls in flight
   * that ended `ok` or `answered`, their summed latency over the window's duration (Little's law).
   * NaN for a window of no duration.
   */
  servedConcurrency(durationMs: number): number {
    return durationMs > 0 ? this.latencySum / durationMs : Number.NaN;
  }

  /**
   * The mean time the window's samples held their permit after their latency ended (after
   * `ctx.mark()`: a stream's body), ms; 0 for calls that did not mark.
   */
  afterMarkMeanMs(): number {
    return this.holds > 0 ? this.afterMarkSum / this.holds : 0;
  }

  /** The coefficient of variation (standard deviation / mean) of the window's latencies; 0 below 2 samples. */
  latencyCv(): number {
    const n = this.samples;
    if (n < 2 || !(this.latencySum > 0)) return 0;
    const mean = this.latencySum / n;
    const variance = (this.latencySquares - n * mean * mean) / (n - 1);
    return variance > 0 ? Math.sqrt(variance) / mean : 0;
  }

  /** Copies the counts into `summary` (latency and baseline are the control loop's to fill). */
  summarise(now: number, summary: WindowSummary): void {
    summary.samples = this.samples;
    summary.overloads = this.overloads;
    summary.timeouts = this.timeouts;
    summary.failures = this.failures;
    summary.reached = this.reached;
    summary.peakInflight = this.peakInflight;
    summary.meanInflight = this.reached > 0 ? this.inflightSum / this.reached : 0;
    summary.durationMs = this.openedAt === this.openedAt ? now - this.openedAt : 0;
  }

  /** Empties the window; the next one opens at `now` (or at its first observation when NaN). */
  restart(now: number): void {
    this.openedAt = now;
    this.samples = 0;
    this.overloads = 0;
    this.timeouts = 0;
    this.failures = 0;
    this.reached = 0;
    this.peakInflight = 0;
    this.roundTrip = false;
    this.inflightSum = 0;
    this.afterMarkSum = 0;
    this.holds = 0;
    this.latencySum = 0;
    this.latencySquares = 0;
    this.logSum = 0;
    this.logSquares = 0;
    this.logCount = 0;
    this.latencies.reset();
  }
}

/**
 * Weight of a new window in the smoothed latency: 2 / (5 + 1), failsafe-go's adaptive limiter
 * (smoothedSamples = 5). Uber names the EWMA but not its weight (spec §5.2).
 */
export const LATENCY_SMOOTHING = 2 / (5 + 1);
/**
 * Windows averaged plainly before smoothing starts. Ours: 1 (seed with the first value). The
 * first value is already median-filtered, and failsafe-go's 10 would let the start-up windows,
 * taken at the initial limit, hold the smoothed latency down for ten windows of a ramp.
 */
export const LATENCY_WARMUP = 1;

/**
 * The window latency chain of spec §5.2 (Uber: "take a percentile of these values, and smoothe
 * the percentile" with a median filter and exponential smoothing): p90 -> median of the last 3
 * windows (rejects any one-window spike or dip) -> EWMA. Allocates nothing after construction.
 */
export class LatencySignal {
  /** The latest median-filtered window quantile, ms; NaN before the first window. */
  filteredMs = Number.NaN;
  /** The latest smoothed latency, ms; NaN before the first window. */
  smoothedMs = Number.NaN;
  private readonly median = new MedianFilter(DEFAULT_MEDIAN_SIZE);
  private readonly ewma = new Ewma({ alpha: LATENCY_SMOOTHING, warmupSamples: LATENCY_WARMUP });

  /** Feeds one window's quantile. */
  add(windowQuantileMs: number): void {
    if (!(windowQuantileMs >= 0) || windowQuantileMs === Infinity) return;
    this.filteredMs = this.median.add(windowQuantileMs);
    this.smoothedMs = this.ewma.add(this.filteredMs);
  }

  /** True once the median filter holds a full set of windows: no single window can set it. */
  get warm(): boolean {
    return this.median.count >= this.median.size;
  }

  /** Forgets every window (after an idle gap: adr/0031-idle-rule.md). */
  reset(): void {
    this.median.reset();
    this.ewma.reset();
    this.filteredMs = Number.NaN;
    this.smoothedMs = Number.NaN;
  }
}
