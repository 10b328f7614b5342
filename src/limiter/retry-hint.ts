// The retry hint's constants and arithmetic (ADR-0042); admission counts completions and the calls ahead.

// Ours: holds several completions at 100 ms - 1 s latencies, follows a change of pace within seconds.
export const DRAIN_WINDOW_MS = 1_000;
// Ours: the newest window's EWMA weight halves history every window.
const DRAIN_SMOOTHING = 0.5;
// Ours: past a minute the estimate says "much later"; a Retry-After client should not be parked longer on a guess.
const MAX_RETRY_AFTER_MS = 60_000;
// Ours: a quiet spell (full, nothing completing) counts against the pace only once it outlasts two mean holds of a
// slot (Little's law: calls running / pace). Slots that turn over together (one latency, started at once) leave gaps of
// up to one hold; n spread-out ones (Poisson) a gap of two holds with probability e^-2n. Past that, every call running
// has run for the whole spell and is taken to need at least half of it again: at most 2 x running / spell.
const QUIET_HOLDS = 2;

/** The smoothed drain rate after a window that drained at `rate`; the first window (NaN before) sets it. */
export function smoothDrainRate(previous: number, rate: number): number {
  return previous !== previous ? rate : previous + DRAIN_SMOOTHING * (rate - previous);
}

/** The pace `ratePerMs` as far as `quietMs` without a completion, `running` calls held, allows. */
export function paceAfterQuiet(ratePerMs: number, quietMs: number, running: number): number {
  return quietMs > 0 ? Math.min(ratePerMs, (QUIET_HOLDS * (running > 1 ? running : 1)) / quietMs) : ratePerMs;
}

/** Ms until `ahead` calls have drained at `ratePerMs`, clamped to 1 ms - 60 s. */
export function retryHintMs(ahead: number, ratePerMs: number): number {
  return Math.min(MAX_RETRY_AFTER_MS, Math.max(1, Math.ceil(ahead / ratePerMs)));
}
