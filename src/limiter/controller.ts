import type { EventChannel } from '../core/events';
import type { Observation } from '../core/observation';

/**
 * The seam between the limiter's control loop (algorithm + window + baseline: it decides the
 * limit) and its admission (counters, queue, permits: it enforces the limit). Netflix's
 * Limit/Limiter split (STYLE.md): admission knows nothing about Vegas; Vegas knows nothing about
 * permits.
 */
export type AlgorithmName = 'vegas' | 'gradient2' | 'aimd' | 'fixed';

/** Why the limit moved (or held) at a window close. */
export interface LimitChange {
  readonly from: number;
  readonly to: number;
  readonly direction: 'grow' | 'shrink' | 'hold';
  /** A short, stable reason, e.g. 'queue-below-alpha', 'overload', 'timeout', 'idle-reset', 'manual'. */
  readonly reason: string;
  /** Clock time of the change, in ms. */
  readonly at: number;
}

export interface LimitControllerSnapshot {
  readonly algorithm: AlgorithmName;
  /** The admitted limit: the integer part of `estimate`, within [minLimit, maxLimit]. */
  readonly limit: number;
  /** The fractional estimate kept internally. */
  readonly estimate: number;
  readonly minLimit: number;
  readonly maxLimit: number;
  /** The no-load reference latency, once known. */
  readonly baselineMs: number | undefined;
  /** The smoothed window latency (p90 -> median filter -> EWMA), once known. */
  readonly latencyMs: number | undefined;
  /** Windows closed since construction. */
  readonly windows: number;
  /** The last window's decision (grow, shrink or hold, and why). */
  readonly lastChange: LimitChange | undefined;
}

export interface LimitController {
  /** The admitted limit (an integer within the guardrails). */
  readonly limit: number;
  readonly minLimit: number;
  readonly maxLimit: number;
  /**
   * Feeds one settled call. `now` is the clock at settlement; `inflight` counts the calls in
   * flight at that moment, the settling one included. Advances the loop when a window closes
   * (settle-driven: no timers). Returns true when `limit` changed.
   */
  observe(observation: Observation, now: number, inflight: number): boolean;
  /** A manual resize (clamped to the guardrails). Returns true when `limit` changed. */
  setLimit(limit: number, now: number): boolean;
  /** Emits on every change of the integer limit. */
  readonly changes: EventChannel<LimitChange>;
  snapshot(): LimitControllerSnapshot;
}
