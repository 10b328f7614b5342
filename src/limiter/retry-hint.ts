/**
 * The retry hint of a shed call (ADR-0042): how long until a new call would run at once, if the
 * backlog drains at the pace completions were measured at. Admission counts the completions and
 * the calls ahead; the constants and the arithmetic live here.
 */

/**
 * Drain-rate window for the retry hint. Ours: long enough to hold several completions at typical
 * API latencies (100 ms - 1 s), short enough to follow a change of pace within a few seconds.
 */
export const DRAIN_WINDOW_MS = 1_000;
/** EWMA weight of the newest drain window. Ours: halves the weight of history every window. */
const DRAIN_SMOOTHING = 0.5;
/**
 * Ceiling on the retry hint. Ours: past a minute the estimate says "much later", not when, and an
 * HTTP client honouring Retry-After should not be parked longer on a guess.
 */
const MAX_RETRY_AFTER_MS = 60_000;

/** The smoothed drain rate after a window that drained at `rate`; the first window (NaN before) sets it. */
export function smoothDrainRate(previous: number, rate: number): number {
  return previous !== previous ? rate : previous + DRAIN_SMOOTHING * (rate - previous);
}

/** Ms until `ahead` calls have drained at `ratePerMs`, clamped to 1 ms - 60 s. */
export function retryHintMs(ahead: number, ratePerMs: number): number {
  return Math.min(MAX_RETRY_AFTER_MS, Math.max(1, Math.ceil(ahead / ratePerMs)));
}
