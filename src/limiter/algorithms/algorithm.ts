import type { AlgorithmName, LimitChangeReason } from '../controller';

/**
 * What a closed sampling window tells an algorithm. The control loop owns one instance and
 * rewrites it at every window close (no allocation); an algorithm only reads it.
 */
export interface WindowSummary {
  /**
   * The latency the algorithm steers by, ms: the smoothed window quantile (p90 -> median filter ->
   * EWMA), or during the slow start the window's own quantile (each start-up window runs at a new
   * limit, so smoothing across them would mix loads). NaN before any sample.
   */
  latencyMs: number;
  /** The no-load reference latency, ms; NaN until the baseline is known. */
  baselineMs: number;
  /** Latency samples in the window (`ok` and `answered` verdicts). */
  samples: number;
  /** `overload` verdicts in the window (and `failure`s when failure handling is 'overload'). */
  overloads: number;
  /**
   * `timeout` verdicts in the window that count as pressure: for vegas and gradient2 the excess
   * over the learned tail (adr/0037), so it may be fractional; for aimd the raw count.
   */
  timeouts: number;
  /** `failure` verdicts counted in the window (failure handling 'hold'). */
  failures: number;
  /** Verdicts that reached the upstream and were counted: samples + overloads + timeouts + failures. */
  reached: number;
  /** Most calls in flight at any settlement in the window, the settling one included. */
  peakInflight: number;
  /** Mean calls in flight at settlement over the window. */
  meanInflight: number;
  /** How long the window was open, ms. */
  durationMs: number;
  /**
   * The window's latency quantile over its mean latency, in [1, maxTailRatio] (1 without samples).
   * Vegas scales its queue estimate by it: Little's law counts queued requests as throughput x
   * wait, and throughput is in-flight over the MEAN latency, not over the p90 (adr/0036).
   */
  tailRatio: number;
  /**
   * The share of the latency that is noise, not queue: noiseZ x the relative standard error of the
   * window's quantile (1.7 x cv / sqrt(samples) for a p90, see QUANTILE_SE_FACTOR); 0 without
   * samples. Vegas does not count a rise within it as a queue (adr/0036).
   */
  quantileNoise: number;
  /**
   * How many window floors (minWindowMs, or two round trips) the window lasted, at least 1: a
   * window that waited for its samples spans several (adr/0090). Vegas's no-queue growth is per
   * floor's worth of time, not per window, so a sample-starved client grows as fast as a busy one.
   */
  floorSpans: number;
}

/**
 * The standard error of a p90 over n samples is about 1.7 x sigma / sqrt(n) relative to it for a
 * lognormal latency of small sigma (asymptotic variance of a sample quantile: q (1 - q) / (n f^2);
 * at q = 0.9, sqrt(0.09) / phi(1.28) = 1.71). Used with the window's coefficient of variation.
 */
export const QUANTILE_SE_FACTOR = 1.7;

/** An algorithm's answer: the next fractional estimate and why. */
export interface Decision {
  estimate: number;
  reason: LimitChangeReason;
}

/**
 * One step of a limit algorithm: `(current estimate, window summary) -> next estimate`. Pure: it
 * reads only its arguments and its own frozen settings, and writes only `decision`. A
 * latency-driven algorithm (vegas, gradient2) answers for latency alone: the control loop applies
 * the reduce signals, the slow start, the guardrails and the guards, the same for both. aimd reads
 * the reduce signals itself (it is nothing else).
 */
export interface LimitAlgorithm {
  readonly name: AlgorithmName;
  /** True when the algorithm steers by latency (the loop then owns the reduce signals). */
  readonly latencyDriven: boolean;
  step(estimate: number, window: Readonly<WindowSummary>, decision: Decision): void;
}

/**
 * A window whose share of reduce signals reaches this fraction gets the full multiplicative
 * backoff; below it the backoff scales down linearly (adr/0035-reduce-signals-and-steps.md).
 * Ours: one 429 among a thousand answers should nudge the limit, not cut it by a tenth each
 * window (Netflix's AIMDLimit backs off on every drop because it updates per sample, not per
 * window); at low traffic one timeout in a window of four is 25% and gets the full cut.
 */
export const PRESSURE_SATURATION = 0.1;

/** The multiplier (1 - cut) one kind of reduce signal calls for, scaled by its share of the window. */
export function backoffFor(count: number, reached: number, backoff: number): number {
  if (count === 0) return 1;
  const share = count / (reached > 0 ? reached : 1);
  return 1 - (1 - backoff) * (share < PRESSURE_SATURATION ? share / PRESSURE_SATURATION : 1);
}

/** Writes a decision. */
export function decide(estimate: number, reason: LimitChangeReason, decision: Decision): void {
  decision.estimate = estimate;
  decision.reason = reason;
}

/** True when the window carries a usable latency and baseline. */
export function hasLatencySignal(window: Readonly<WindowSummary>): boolean {
  return window.latencyMs >= 0 && window.baselineMs >= 0;
}
