import type { AlgorithmName, LimitChangeReason } from '../controller';

/** What a closed window tells an algorithm: one instance, rewritten by the loop at each close. */
export interface WindowSummary {
  /** The latency steered by, ms: the window's statistic (vegas: mean, adr/0048; gradient2: the quantile); NaN without a signal. */
  latencyMs: number;
  /** NaN until the baseline is known. */
  baselineMs: number;
  /** `ok` and `answered` verdicts. */
  samples: number;
  /** With `failure`s when failure handling is 'overload'. */
  overloads: number;
  /** vegas, gradient2: the excess over the learnt tail, maybe fractional (adr/0037); aimd: the count. */
  timeouts: number;
  /** Failure handling 'hold'. */
  failures: number;
  /** samples + overloads + timeouts + failures. */
  reached: number;
  /** Most in flight at a settle, the settling call included. */
  peakInflight: number;
  meanInflight: number;
  durationMs: number;
  /** noiseZ relative standard errors of the window mean: a rise vegas does not count as queue (adr/0036, 0048). */
  meanNoise: number;
  /** Window floors the window lasted, >= 1: vegas's no-queue growth is per floor of time (adr/0090). */
  floorSpans: number;
}

/** An algorithm's answer: the next fractional estimate and why. */
export interface Decision {
  estimate: number;
  reason: LimitChangeReason;
}

/**
 * A pure step, (estimate, window) -> `decision`. Latency-driven ones (vegas, gradient2) answer for
 * latency alone: the loop applies reduce signals, slow start and guards; aimd reads reduce signals.
 */
export interface LimitAlgorithm {
  readonly name: AlgorithmName;
  readonly latencyDriven: boolean;
  step(estimate: number, window: Readonly<WindowSummary>, decision: Decision): void;
}

/**
 * Ours: the share of reduce signals that gets the full backoff; below it the cut scales linearly
 * (adr/0035). Netflix's AIMDLimit backs off on every drop because it steps per sample, not per window.
 */
export const PRESSURE_SATURATION = 0.1;

/** The multiplier (1 - cut) one kind of reduce signal calls for, scaled by its share of the window. */
export function backoffFor(count: number, reached: number, backoff: number, saturation = PRESSURE_SATURATION): number {
  if (count === 0) return 1;
  const share = count / (reached > 0 ? reached : 1);
  return 1 - (1 - backoff) * (share < saturation ? share / saturation : 1);
}

export function decide(estimate: number, reason: LimitChangeReason, decision: Decision): void {
  decision.estimate = estimate;
  decision.reason = reason;
}

/** Holds ('warming-up') and returns true while the window carries no usable latency or baseline. */
export function warmingUp(estimate: number, window: Readonly<WindowSummary>, decision: Decision): boolean {
  if (window.latencyMs >= 0 && window.baselineMs >= 0) return false;
  decide(estimate, 'warming-up', decision);
  return true;
}
