import type { EventChannel } from '../core/events';
import type { Observation } from '../core/observation';

/** The control loop's algorithm: see `ControlOptions.algorithm` and docs/algorithms.md. */
export type AlgorithmName = 'vegas' | 'gradient2' | 'aimd' | 'fixed';

/**
 * Why the limit moved (or held); each names the step it took. Full table: docs/algorithms.md.
 * - slow start (adr/0045): 'slow-start' (no queue yet: grew), 'drain' (left it with a queue: down
 *   to half the concurrency the upstream served; also a latency fall's drain, adr/0130, and a raise back
 *   after a drain, adr/0091, adr/0128, adr/0136, adr/0137);
 * - vegas: 'no-queue', 'queue-below-alpha' (grow), 'queue-within-band' (hold), 'queue-above-beta'
 *   (shrink), 'invalid-band' (a user alpha/beta returned nonsense: hold);
 * - gradient2: 'latency-within-tolerance', 'headroom' (grow), 'latency-above-tolerance' (shrink);
 * - aimd: 'healthy-window' (grow), 'no-samples' (hold); fixed: 'fixed';
 * - reduce signals (adr/0046, adr/0035): 'overload' (down to the concurrency served; at a settle, to k - 1 for a
 *   refusal of the k-th call in flight past every answer, adr/0127), 'timeout'
 *   (share-scaled backoff), 'overload-hold' (growth held at the concurrency an overload showed);
 * - guards: 'app-limited' (growth capped by demand), 'failures' (a failure-dominated window does
 *   not grow), 'warming-up' (no baseline yet), 'baseline-raised' (adr/0047: the upstream got
 *   slower; after a failed descent the baseline is re-taken and a new slow start follows, after a
 *   latency jump this change is the drain before a re-measure), 'idle-restart' (adr/0031), 'at-min',
 *   'at-max', 'invalid-step';
 * - 'manual': `resize()`.
 */
export type LimitChangeReason =
  | 'slow-start'
  | 'drain'
  | 'no-queue'
  | 'queue-below-alpha'
  | 'queue-within-band'
  | 'queue-above-beta'
  | 'invalid-band'
  | 'latency-within-tolerance'
  | 'headroom'
  | 'latency-above-tolerance'
  | 'healthy-window'
  | 'no-samples'
  | 'fixed'
  | 'overload'
  | 'timeout'
  | 'overload-hold'
  | 'app-limited'
  | 'failures'
  | 'warming-up'
  | 'baseline-raised'
  | 'idle-restart'
  | 'at-min'
  | 'at-max'
  | 'invalid-step'
  | 'manual';

/** Why the limit moved (or held): at a window close, a slow start's sample, a refusal's step (adr/0127), or `resize`. */
export interface LimitChange {
  readonly from: number;
  readonly to: number;
  /** The decision's, on the fractional estimate: the rounding can move `to` one call the other way (adr/0124). */
  readonly direction: 'grow' | 'shrink' | 'hold';
  readonly reason: LimitChangeReason;
  /** Clock time of the change, in ms. */
  readonly at: number;
}

export interface LimitControllerSnapshot {
  readonly algorithm: AlgorithmName;
  /** The admitted limit, within [minLimit, maxLimit]: `estimate` rounded so that it averages it (adr/0049). */
  readonly limit: number;
  /** The fractional estimate kept internally. */
  readonly estimate: number;
  readonly minLimit: number;
  readonly maxLimit: number;
  /** The no-load reference latency, once known. */
  readonly baselineMs: number | undefined;
  /** Smoothed window latency (statistic -> median filter -> EWMA), if known; vegas steers on each window's own mean (adr/0048). */
  readonly latencyMs: number | undefined;
  /** True while the slow start runs (adr/0045). */
  readonly slowStart: boolean;
  /** Windows closed since construction. */
  readonly windows: number;
  /** Times the baseline was re-taken upwards (adr/0047). */
  readonly baselineRaises: number;
  /** The last change or decision (grow, shrink or hold, and why): see `LimitChange`. */
  readonly lastChange: LimitChange | undefined;
}

/** The seam: the control loop decides the limit, admission enforces it (Netflix's Limit/Limiter split). */
export interface LimitController {
  /** The admitted limit (an integer within the guardrails). */
  readonly limit: number;
  readonly minLimit: number;
  readonly maxLimit: number;
  /** The settle's clock, set just before `observe`: V8 boxes a double argument it does not inline (adr/0087). */
  settledAt: number;
  /**
   * Feeds one settled call at `settledAt` (`inflight` includes it; `marked`: its latency came via
   * `observeMark`) and closes a window when due (no timers). Returns true when `limit` changed.
   */
  observe(observation: Observation, inflight: number, marked?: boolean): boolean;
  /**
   * Optional: feeds a marked call's latency while it runs (`permit.mark`), with the calls in flight at the mark (it
   * among them) and, when known, at its admission (adr/0127).
   */
  observeMark?(latencyMs: number, now: number, inflight: number, admitted?: number): boolean;
  /** A manual resize (clamped to the guardrails). Returns true when `limit` changed. */
  setLimit(limit: number, now: number): boolean;
  /** Emits on every change of the integer limit. */
  readonly changes: EventChannel<LimitChange>;
  snapshot(): LimitControllerSnapshot;
}
