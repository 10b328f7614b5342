/**
 * Backoff between attempts, as pure functions of the retry number and a uniform draw. Both shapes
 * come from the AWS Architecture Blog, "Exponential Backoff And Jitter" (Marc Brooker, 2015): full
 * jitter spreads retries over the whole window so clients that failed together do not come back
 * together; decorrelated jitter grows from the previous wait instead of from the retry count.
 */

export type BackoffKind = 'exponential' | 'decorrelated';

/**
 * Full jitter: a uniform wait in [0, min(maxDelayMs, baseDelayMs·2^(retry-1))). `retry` is 1 for
 * the first retry, so the first wait is under `baseDelayMs`, the second under twice that, and so on
 * up to the cap. `uniform` is in [0, 1).
 */
export function fullJitterMs(retry: number, baseDelayMs: number, maxDelayMs: number, uniform: number): number {
  // 2 ** 1024 is Infinity and Infinity * 0 would be NaN: clamp the ceiling before multiplying.
  const ceiling = Math.min(maxDelayMs, baseDelayMs * 2 ** Math.min(retry - 1, 1023));
  return uniform * ceiling;
}

/**
 * Decorrelated jitter: a uniform wait in [baseDelayMs, 3·previousMs), capped at `maxDelayMs`.
 * `previousMs` is the previous wait of the same call, or `baseDelayMs` before the first retry.
 */
export function decorrelatedJitterMs(
  previousMs: number,
  baseDelayMs: number,
  maxDelayMs: number,
  uniform: number,
): number {
  const high = Math.max(baseDelayMs, 3 * previousMs);
  return Math.min(maxDelayMs, baseDelayMs + uniform * (high - baseDelayMs));
}
