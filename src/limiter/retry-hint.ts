// The retry hint's constants and arithmetic (ADR-0042); admission counts completions and the calls ahead.

// Ours: holds several completions at 100 ms - 1 s latencies, follows a change of pace within seconds.
export const DRAIN_WINDOW_MS = 1_000;
// Ours: the newest window's EWMA weight halves history every window.
const DRAIN_SMOOTHING = 0.5;
// Ours: past a minute the estimate says "much later"; a Retry-After client should not be parked longer on a guess.
const MAX_RETRY_AFTER_MS = 60_000;
// Ours: a quiet spell (full, nothing completing) lowers the pace only once it outlasts two of its mean gaps. Under a
// Poisson drain 13.5% of gaps (e^-2) run that long, and hints lengthen by 7% on average (one mean gap: 37%); a stall of
// T ms gives at least T / 2 ms per call ahead.
const QUIET_GAPS = 2;

/** The smoothed drain rate after a window that drained at `rate`; the first window (NaN before) sets it. */
export function smoothDrainRate(previous: number, rate: number): number {
  return previous !== previous ? rate : previous + DRAIN_SMOOTHING * (rate - previous);
}

/** The pace `ratePerMs` as far as `quietMs` without a completion allows: at most QUIET_GAPS completions in that time. */
export function paceAfterQuiet(ratePerMs: number, quietMs: number): number {
  return quietMs > 0 ? Math.min(ratePerMs, QUIET_GAPS / quietMs) : ratePerMs;
}

/** Ms until `ahead` calls have drained at `ratePerMs`, clamped to 1 ms - 60 s. */
export function retryHintMs(ahead: number, ratePerMs: number): number {
  return Math.min(MAX_RETRY_AFTER_MS, Math.max(1, Math.ceil(ahead / ratePerMs)));
}
