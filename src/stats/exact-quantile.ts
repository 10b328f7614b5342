/**
 * The one quantile definition used across src/stats and its tests: linear interpolation between
 * order statistics, Hyndman & Fan (1996) type 7 (the default of R's `quantile` and NumPy's
 * `percentile`). For n ascending values the 1-based position is h = 1 + (n - 1) q and the result
 * interpolates between the values at floor(h) and ceil(h). P²'s desired marker position for the
 * middle marker is the same h (Jain & Chlamtac 1985), so the exact and the streaming estimators
 * agree on what "the p90" means.
 *
 * `sorted` must be ascending in its first `length` entries; only those are read.
 */
export function sortedQuantile(sorted: ArrayLike<number>, length: number, quantile: number): number {
  if (length <= 0) return Number.NaN;
  const position = (length - 1) * quantile; // 0-based h - 1
  const lowerIndex = Math.floor(position);
  const lower = sorted[lowerIndex] as number;
  if (lowerIndex + 1 >= length) return lower;
  const fraction = position - lowerIndex;
  if (fraction === 0) return lower;
  const upper = sorted[lowerIndex + 1] as number;
  // lower + fraction * (upper - lower) can round past `upper` by one ulp; clamp keeps the result
  // inside the two order statistics it interpolates.
  const interpolated = lower + fraction * (upper - lower);
  return interpolated > upper ? upper : interpolated;
}

/**
 * Inserts `x` into the ascending prefix `sorted[0, length)` (which must have room for one more)
 * by shifting larger values up one slot. O(length), allocation-free.
 */
export function insertSorted(sorted: Float64Array, length: number, x: number): void {
  let index = length;
  while (index > 0 && (sorted[index - 1] as number) > x) {
    sorted[index] = sorted[index - 1] as number;
    index--;
  }
  sorted[index] = x;
}

/**
 * `insertSorted` for a value already stored at `sorted[last]`: moves it down into the ascending
 * prefix `sorted[0, last)`. For a caller that must not pass the double itself (see
 * WindowQuantile.add).
 */
export function siftIntoPlace(sorted: Float64Array, last: number): void {
  const x = sorted[last] as number;
  let index = last;
  while (index > 0 && (sorted[index - 1] as number) > x) {
    sorted[index] = sorted[index - 1] as number;
    index--;
  }
  sorted[index] = x;
}
