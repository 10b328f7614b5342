import type { Observation } from '../core/observation';
import { Ewma } from '../stats/ewma';
import { DEFAULT_MEDIAN_SIZE, MedianFilter } from '../stats/median-filter';
import { WindowQuantile } from '../stats/window-quantile';
import type { WindowSummary } from './algorithms/algorithm';
import { sharedWhenEqual } from '../core/options';
import { CONTROL_DEFAULTS, type ControlConfig } from './control-config';
import { type ControlTuning, DEFAULT_TUNING } from './control-tuning';

/**
 * The options a window reads, the overload share and count that close it early (adr/0046), and whether that early
 * close waits for a round trip (adr/0126; default true).
 */
export type WindowRules = Pick<ControlConfig, 'quantile' | 'minSamples' | 'maxWindowMs' | 'failure'> &
  Pick<ControlTuning, 'overloadCloseShare' | 'overloadCloseMinAnswers'> &
  Partial<Pick<ControlTuning, 'refusalRoundTrip'>>;

/** What a window keeps of its rules (the quantile goes to its estimator): per-key memory (adr/0086). */
function copyRules(rules: WindowRules) {
  const { minSamples, maxWindowMs, failure, overloadCloseShare, overloadCloseMinAnswers } = rules;
  const refusalRoundTrip = rules.refusalRoundTrip !== false;
  return Object.freeze({
    minSamples,
    maxWindowMs,
    failure,
    overloadCloseShare,
    overloadCloseMinAnswers,
    refusalRoundTrip,
  });
}

const DEFAULT_RULES = /* @__PURE__ */ copyRules({ ...CONTROL_DEFAULTS, ...DEFAULT_TUNING });

/**
 * One sampling window, O(1) memory, no allocation after construction. Samples are the `latencyMs` of
 * `ok` and `answered` (our queue excluded; spec §8). `overload` and `timeout` are reduce signals, never
 * samples: a 429 is fast, a timeout censored (adr/0035). `failure`: adr/0030. Closing: adr/0032.
 */
export class SamplingWindow {
  /** NaN until the first counted observation. */
  openedAt = Number.NaN;
  samples = 0;
  overloads = 0;
  timeouts = 0;
  failures = 0;
  reached = 0;
  peakInflight = 0;
  /** The most calls in flight at an answer's admission, in this window (adr/0127). */
  private answeredPeak = 0;
  /** ...and in the last. */
  private priorAnsweredPeak = 0;
  /** A refusal stepped the limit down in this window: its refusals are a cap's, not a tail's (adr/0127). */
  stepped = false;
  /** The settle's clock, set before recordSettle (adr/0087). */
  settledAt = 0;
  /**
   * A call admitted after the window opened has ended: it spans a round trip (adr/0045). A refusal only once the window
   * has lasted `minRoundTripMs`: a 429 in 5 ms is no round trip of a 1 s service, and Little's law needs one (adr/0126).
   */
  roundTrip = false;
  /** The no-load latency the loop knows as the window opens, ms; 0 when it knows none. */
  minRoundTripMs = 0;
  private inflightSum = 0;
  private afterMarkSum = 0;
  private holds = 0;
  private latencySum = 0;
  private latencySquares = 0;
  private logSum = 0;
  private logSquares = 0;
  private logCount = 0;
  private readonly latencies: WindowQuantile;
  private readonly rules: typeof DEFAULT_RULES;

  constructor(rules: WindowRules) {
    this.rules = sharedWhenEqual(copyRules(rules), DEFAULT_RULES);
    this.latencies = new WindowQuantile({ quantile: rules.quantile });
  }

  /** Log latency for the slow start's exit test; apart from recordSettle, V8's inlining budget (adr/0087). */
  recordLog(observation: Observation): void {
    const latencyMs = observation.latencyMs;
    if (!(latencyMs > 0) || latencyMs === Infinity) return;
    const log = Math.log(latencyMs);
    this.logSum += log;
    this.logSquares += log * log;
    this.logCount++;
  }

  /** Counts a settled call at `settledAt` (adr/0087); false: not counted. `atMark`: its hold comes via recordHold. */
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
        // Little's law counts the whole hold; a marked call's is counted at its settle (recordHold).
        if (!atMark) this.holds++;
        this.latencies.add(latencyMs);
        this.latencySum += latencyMs;
        this.latencySquares += latencyMs * latencyMs;
        this.samples++;
        const admitted = admittedWith(observation, inflight);
        if (admitted > this.answeredPeak) this.answeredPeak = admitted;
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
    else if (
      !this.roundTrip &&
      now - heldMs >= this.openedAt &&
      (!this.refuses(verdict) || now - this.openedAt >= this.minRoundTripMs)
    ) {
      this.roundTrip = true;
    }
    this.reached++;
    if (inflight > this.peakInflight) this.peakInflight = inflight;
    this.inflightSum += inflight;
    return true;
  }

  /** Whether `recordSettle` counts this verdict as a refusal (`overloads`): `overload`, and `failure` under 'overload'. */
  refuses(verdict: Observation['verdict']): boolean {
    return verdict === 'overload' || (verdict === 'failure' && this.rules.failure === 'overload');
  }

  /** Whether a refusal admitted with `inflight` in flight came at more than any answer of this window or the last. */
  pastAnswered(inflight: number): boolean {
    return inflight > this.answeredPeak && inflight > this.priorAnsweredPeak;
  }

  /** A call's hold past its latency (a stream's body after mark): concurrency, not latency. */
  recordHold(afterMarkMs: number): void {
    this.afterMarkSum += afterMarkMs > 0 ? afterMarkMs : 0;
    this.holds++;
  }

  /** Whether the window may close at `now` (adr/0032; samples x age >= minSamples x floor: low traffic). */
  ready(now: number, floorMs: number, minSamples = this.rules.minSamples): boolean {
    if (this.reached === 0) return false;
    const ageMs = now - this.openedAt;
    if (ageMs < floorMs) {
      // An overload majority is unambiguous: waiting for the floor only spins more refusals. But not before a round
      // trip: the cut reads the concurrency served from the completions (adr/0126).
      return (
        (this.roundTrip || !this.rules.refusalRoundTrip) &&
        this.reached >= this.rules.overloadCloseMinAnswers &&
        this.overloads >= this.rules.overloadCloseShare * this.reached
      );
    }
    const reduces = this.overloads + this.timeouts;
    if (reduces >= this.samples) {
      // Reduce signals need no latency: a window with at least as many of them as samples closes at
      // its floor, not by the low-traffic rule (7 samples among 700 timeouts held one 12 s; adr/0105).
      // A window of failures alone waits out maxWindowMs.
      return reduces > 0 || ageMs >= this.rules.maxWindowMs;
    }
    if (this.samples >= minSamples || ageMs >= this.rules.maxWindowMs) return true;
    return this.samples * ageMs >= minSamples * floorMs;
  }

  /** NaN without a positive sample. */
  latencyLogMean(): number {
    return this.logCount > 0 ? this.logSum / this.logCount : Number.NaN;
  }

  /** Sample variance (n - 1); 0 below two samples. */
  latencyLogVariance(): number {
    const n = this.logCount;
    if (n < 2) return 0;
    const mean = this.logSum / n;
    const variance = (this.logSquares - n * mean * mean) / (n - 1);
    return variance > 0 ? variance : 0;
  }

  /** NaN without samples. */
  latencyQuantile(): number {
    return this.latencies.value();
  }

  /** NaN without samples. */
  latencyMean(): number {
    return this.samples > 0 ? this.latencySum / this.samples : Number.NaN;
  }

  /** Concurrency served by Little's law: summed sample latency over the window's duration. */
  servedConcurrency(durationMs: number): number {
    return durationMs > 0 ? this.latencySum / durationMs : Number.NaN;
  }

  /** Mean hold after `ctx.mark()` (a stream's body), ms; 0 for calls that did not mark. */
  afterMarkMeanMs(): number {
    return this.holds > 0 ? this.afterMarkSum / this.holds : 0;
  }

  /** Standard deviation / mean; 0 below two samples. */
  latencyCv(): number {
    const n = this.samples;
    if (n < 2) return 0;
    const mean = this.latencySum / n;
    const variance = (this.latencySquares - n * mean * mean) / (n - 1);
    return variance > 0 ? Math.sqrt(variance) / mean : 0;
  }

  /** Fills the counts; latency and baseline are the loop's. */
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

  /** The next window opens at `now` (NaN: at its first observation). */
  restart(now: number): void {
    this.openedAt = now;
    this.samples = this.overloads = this.timeouts = this.failures = this.reached = this.peakInflight = 0;
    this.priorAnsweredPeak = this.answeredPeak;
    this.answeredPeak = 0;
    this.stepped = false;
    this.roundTrip = false;
    this.inflightSum = this.afterMarkSum = this.holds = this.latencySum = this.latencySquares = 0;
    this.logSum = this.logSquares = this.logCount = 0;
    this.latencies.reset();
  }
}

/** Calls in flight at the call's admission (run-call.ts fills it), else at its settle (a bare `permit.settle`). */
export function admittedWith(observation: Observation, settledWith: number): number {
  const admitted = observation.inflight;
  return admitted === undefined ? settledWith : admitted;
}

/** failsafe-go's adaptive limiter, 2 / (smoothedSamples + 1); Uber names no weight (spec §5.2). */
export const LATENCY_SMOOTHING = 2 / (5 + 1);
/** Ours: seed with the first (median-filtered) window; failsafe-go's 10 holds a ramp down (docs/tuning.md). */
export const LATENCY_WARMUP = 1;

/** Spec §5.2's chain (Uber's): window p90 -> median of 3 windows (no one-window spike) -> EWMA. */
export class LatencySignal {
  smoothedMs = Number.NaN;
  private readonly median = new MedianFilter(DEFAULT_MEDIAN_SIZE);
  private readonly ewma = new Ewma({ alpha: LATENCY_SMOOTHING, warmupSamples: LATENCY_WARMUP });

  add(windowQuantileMs: number): void {
    if (!(windowQuantileMs >= 0) || windowQuantileMs === Infinity) return;
    this.smoothedMs = this.ewma.add(this.median.add(windowQuantileMs));
  }

  /** After an idle gap (adr/0031). */
  reset(): void {
    this.median.reset();
    this.ewma.reset();
    this.smoothedMs = Number.NaN;
  }
}
