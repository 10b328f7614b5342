import type { QuantileEstimator } from './quantile-estimator';
import { insertSorted, sortedQuantile } from './exact-quantile';
import { requireIntegerInRange, requireQuantile } from './validate';

/** Spec 9.3 bounds the fallback at n <= 64. */
export const SORTED_RING_MAX_CAPACITY = 64;

export interface SortedRingOptions {
  /** Target quantile in (0, 1). */
  readonly quantile: number;
  /** Values kept, 1 to 64. Default 64, the spec's bound (spec 9.3). */
  readonly capacity?: number;
}

/**
 * Exact quantile (type 7, see ./exact-quantile) of the most recent `capacity` values: the spec's
 * "bounded sorted ring" fallback (spec 9.3).
 *
 * Why the most recent values rather than the first ones or a reservoir: a window that has seen
 * more than `capacity` values is summarised by its freshest ones, the bias a limiter wants when
 * latency is moving (a reservoir would also need a random source in src). Up to `capacity`
 * values the answer is the exact quantile of everything added.
 *
 * One Float64Array of 2 x capacity: the sorted values in the first half (for the answer), the
 * same values in arrival order in the second (to know which one leaves). Each add is
 * O(capacity) shifting, with no allocation after construction.
 *
 * Not used by the library: the limiter's window uses WindowQuantile. Kept as the comparison
 * baseline of adr/0016 (scripts/quantile-report.ts, asserted in test/stats/quantile-report.test.ts)
 * so that docs/quantiles.md can be regenerated (adr/0082).
 */
export class SortedRing implements QuantileEstimator {
  readonly quantile: number;
  readonly capacity: number;
  /** [0, capacity): ascending; [capacity, 2 capacity): ring in arrival order. */
  private readonly values: Float64Array;
  /** Ring slot the next value goes to; once full, the oldest value's slot. */
  private nextSlot = 0;
  private held = 0;
  private samples = 0;

  constructor(options: SortedRingOptions) {
    this.quantile = requireQuantile('SortedRing', 'quantile', options.quantile);
    this.capacity = requireIntegerInRange(
      'SortedRing',
      'capacity',
      options.capacity ?? SORTED_RING_MAX_CAPACITY,
      1,
      SORTED_RING_MAX_CAPACITY,
    );
    this.values = new Float64Array(2 * this.capacity);
  }

  /** Values added since construction or the last reset (may exceed capacity). */
  get count(): number {
    return this.samples;
  }

  /** Values currently held: min(count, capacity). */
  get size(): number {
    return this.held;
  }

  add(x: number): void {
    if (!Number.isFinite(x)) return;
    const arrivalSlot = this.capacity + this.nextSlot;
    if (this.held === this.capacity) {
      this.removeSorted(this.values[arrivalSlot] as number);
    } else {
      this.held++;
    }
    insertSorted(this.values, this.held - 1, x);
    this.values[arrivalSlot] = x;
    this.nextSlot = this.nextSlot + 1 === this.capacity ? 0 : this.nextSlot + 1;
    this.samples++;
  }

  value(): number {
    return sortedQuantile(this.values, this.held, this.quantile);
  }

  reset(): void {
    this.nextSlot = 0;
    this.held = 0;
    this.samples = 0;
  }

  /** Removes one occurrence of `x` (known to be present) from the full sorted half. */
  private removeSorted(x: number): void {
    const values = this.values;
    let low = 0;
    let high = this.held - 1;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if ((values[middle] as number) < x) low = middle + 1;
      else high = middle;
    }
    for (let index = low; index < this.held - 1; index++) {
      values[index] = values[index + 1] as number;
    }
  }
}
