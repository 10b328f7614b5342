import type { Verdict } from './verdict';

/**
 * What one finished call teaches the policies. The pipeline delivers exactly one per call to
 * every policy that admitted it, innermost first. A low-level `permit.settle()` caller must give
 * at least `verdict` and `latencyMs`.
 *
 * A policy must read the Observation during `settle` and keep no reference to it: the call runner
 * reuses one object for every call, so the hot path allocates none (docs/benchmarks.md). Copy the
 * fields you need to keep.
 *
 * The optional fields may hold `undefined` (the reused object keeps every field, adr/0081).
 */
export interface Observation {
  readonly verdict: Verdict;
  /**
   * Start of the call to `ctx.mark()` if the call marked (first byte, first token), else to
   * settlement. The limiter tunes on this number: a stream that does not mark tunes on its total
   * duration and mis-tunes against a healthy upstream (it sheds calls the upstream could serve).
   */
  readonly latencyMs: number;
  /** Start of the call to settlement. Excludes time spent queued. */
  readonly durationMs?: number | undefined;
  /** Time spent waiting in the limiter's queue before the call started. */
  readonly queuedMs?: number | undefined;
  /** Calls in flight at this call's admission, itself included. */
  readonly inflight?: number | undefined;
  /** The upstream's Retry-After hint, in ms, when it gave one. */
  readonly retryAfterMs?: number | undefined;
  /** The caller's attempt number (1 for an original call, 2+ for retries). */
  readonly attempt?: number | undefined;
}
