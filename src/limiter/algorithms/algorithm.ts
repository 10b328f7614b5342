import type { AlgorithmName } from '../controller';

/**
 * What a closed sampling window tells an algorithm. The control loop owns one instance and
 * rewrites it at every window close (no allocation); an algorithm only reads it.
 */
export interface WindowSummary {
  /** Smoothed upstream latency (window p90 -> median filter -> EWMA), ms; NaN before any sample. */
  latencyMs: number;
  /** The no-load reference latency, ms; NaN until the baseline is known. */
  baselineMs: number;
  /** Latency samples in the window (`ok` and `answered` verdicts). */
  samples: number;
  /** `overload` verdicts in the window (and `failure`s when failure handling is 'overload'). */
  overloads: number;
  /**
   * `timeout` verdicts in the window that count as pressure. For vegas and gradient2 this is the
   * excess over the learned tail of timeouts (adr/0037-expected-timeout-tail.md), so it may be
   * fractional; for aimd it is the raw count.
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
   * The window's latency quantile over its mean latency, >= 1 (1 without samples). Vegas scales
   * its queue estimate by it: Little's law counts queued requests as throughput x wait, and
   * throughput is in-flight over the MEAN latency, not over the p90 (adr/0036).
   */
  tailRatio: number;
  /**
   * The relative standard error of the window's latency quantile, from its samples' coefficient of
   * variation: 1.7 x cv / sqrt(samples) (0 without samples). Vegas does not count a rise within
   * it as a queue (adr/0036).
   */
  quantileNoise: number;
}

/** An algorithm's answer: the next fractional estimate and a short, stable reason. */
export interface Decision {
  estimate: number;
  reason: string;
}

/**
 * One step of a limit algorithm: `(current estimate, window summary) -> next estimate`. Pure: it
 * reads only its arguments and its own frozen settings, and writes only `decision`. Guardrails
 * (minLimit/maxLimit), the app-limited guard and the failure veto are the control loop's job, the
 * same for every algorithm; an algorithm may return an estimate outside the guardrails.
 */
export interface LimitAlgorithm {
  readonly name: AlgorithmName;
  step(estimate: number, window: Readonly<WindowSummary>, decision: Decision): void;
  /**
   * The latency / baseline ratio above which this algorithm's latency rule shrinks a limit of
   * `estimate` (Infinity when latency never shrinks it). The baseline's covariance reset treats
   * only a rise above this as "latency holds the limit down" (adr/0033): the algorithm's own
   * operating point (Vegas keeps alpha to beta requests queued) is not a rise.
   */
  shrinkRatio(estimate: number): number;
}

/**
 * A window whose share of reduce signals reaches this fraction gets the full multiplicative
 * backoff; below it the backoff scales down linearly (adr/0035-reduce-signals-and-steps.md).
 * Ours: one 429 among a thousand answers should nudge the limit, not cut it by a tenth each
 * window (Netflix's AIMDLimit backs off on every drop because it updates per sample, not per
 * window); at low traffic one timeout in a window of four is 25% and gets the full cut.
 */
export const PRESSURE_SATURATION = 0.1;

/** The cut (1 - multiplier) one kind of reduce signal calls for, scaled by its share of the window. */
function cut(count: number, reached: number, backoff: number): number {
  if (count === 0) return 0;
  const share = count / (reached > 0 ? reached : 1);
  return (1 - backoff) * (share < PRESSURE_SATURATION ? share / PRESSURE_SATURATION : 1);
}

/**
 * The multiplier a window's reduce signals call for: 1 when there are none; otherwise the
 * stronger of the overload and the timeout backoff, each scaled by its share of the window
 * (see PRESSURE_SATURATION). Overload and timeout are reduce signals whatever the latency says
 * (DESIGN.md §3): a window that has any never grows.
 */
export function pressureMultiplier(
  window: Readonly<WindowSummary>,
  overloadBackoff: number,
  timeoutBackoff: number,
): number {
  const overloadCut = cut(window.overloads, window.reached, overloadBackoff);
  const timeoutCut = cut(window.timeouts, window.reached, timeoutBackoff);
  return 1 - (overloadCut > timeoutCut ? overloadCut : timeoutCut);
}

/**
 * Applies reduce signals, if the window has any. Returns true when it decided (the caller's
 * latency rule must not run). The reason names the signal whose cut was applied (timeouts on a
 * tie: they are the stronger signal, spec §8).
 */
export function applyPressure(
  estimate: number,
  window: Readonly<WindowSummary>,
  overloadBackoff: number,
  timeoutBackoff: number,
  decision: Decision,
): boolean {
  if (window.overloads === 0 && window.timeouts === 0) return false;
  const overloadCut = cut(window.overloads, window.reached, overloadBackoff);
  const timeoutCut = cut(window.timeouts, window.reached, timeoutBackoff);
  const timeoutWins = window.timeouts > 0 && timeoutCut >= overloadCut;
  decision.estimate = estimate * (1 - (timeoutWins ? timeoutCut : overloadCut));
  decision.reason = timeoutWins ? 'timeout' : 'overload';
  return true;
}

/** Writes a hold. */
export function hold(estimate: number, reason: string, decision: Decision): void {
  decision.estimate = estimate;
  decision.reason = reason;
}

/** True when the window carries a usable latency and baseline. */
export function hasLatencySignal(window: Readonly<WindowSummary>): boolean {
  return window.latencyMs >= 0 && window.baselineMs >= 0;
}

/**
 * baseline / latency, the fraction of the current latency that is no-load time, in [0, 1]
 * for a latency at or above the baseline. A latency of 0 (a virtual clock) counts as no queue.
 */
export function noLoadShare(window: Readonly<WindowSummary>): number {
  return window.latencyMs > 0 ? window.baselineMs / window.latencyMs : 1;
}
