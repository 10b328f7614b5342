import type { QuantileEstimator } from './quantile-estimator';
import { insertSorted, sortedQuantile } from './exact-quantile';
import { addToMarkers, markerEstimate, P2_INPUT, P2_MARKERS, seedMarkers } from './p2-markers';
import { requireQuantile } from './validate';

/**
 * Streaming quantile estimate in O(1) memory: the five-marker P² algorithm of Jain & Chlamtac
 * (1985), steps in ./p2-markers.
 *
 * Up to five values the answer is exact (type 7, see ./exact-quantile); from the sixth on it is
 * the middle marker's height. Guarantees, tested as properties: the estimate lies within
 * [min, max] of the values added and marker heights stay non-decreasing. Allocates nothing
 * after construction (one Float64Array of 11).
 *
 * Not used by the library: the limiter's window uses WindowQuantile. Kept as the comparison
 * baseline of adr/0016 (scripts/quantile-report.ts, asserted in test/stats/quantile-report.test.ts)
 * so that docs/quantiles.md can be regenerated (adr/0082).
 */
export class P2Quantile implements QuantileEstimator {
  readonly quantile: number;
  /**
   * Heights in slots 0-4 (while count < 5: the values themselves, ascending), positions 5-9, and
   * the value being added in slot 10 (P2_INPUT).
   */
  private readonly markers = new Float64Array(P2_INPUT + 1);
  private samples = 0;

  constructor(quantile: number) {
    this.quantile = requireQuantile('P2Quantile', 'quantile', quantile);
  }

  get count(): number {
    return this.samples;
  }

  add(x: number): void {
    if (!Number.isFinite(x)) return;
    if (this.samples < P2_MARKERS) {
      insertSorted(this.markers, this.samples, x);
      this.samples++;
      // The first five values, sorted, are the initial markers at positions 1..5.
      if (this.samples === P2_MARKERS) seedMarkers(this.markers, this.markers, P2_MARKERS, this.quantile);
      return;
    }
    this.markers[P2_INPUT] = x;
    addToMarkers(this.markers, this.samples, this.quantile);
    this.samples++;
  }

  value(): number {
    if (this.samples === 0) return Number.NaN;
    if (this.samples <= P2_MARKERS) return sortedQuantile(this.markers, this.samples, this.quantile);
    return markerEstimate(this.markers);
  }

  reset(): void {
    this.markers.fill(0);
    this.samples = 0;
  }

  /**
   * Replaces the state with a summary of `length` ascending values, as if they had been added:
   * each marker takes the exact order statistic nearest its desired position.
   */
  initFromSorted(sorted: ArrayLike<number>, length: number): void {
    this.reset();
    if (length < P2_MARKERS) {
      for (let index = 0; index < length; index++) this.add(sorted[index] as number);
      return;
    }
    seedMarkers(this.markers, sorted, length, this.quantile);
    this.samples = length;
  }

  /**
   * Copies the marker heights (and, if given, positions) into the caller's arrays and returns how
   * many markers exist: min(count, 5). For telemetry and tests; allocation-free.
   */
  copyMarkers(heights: Float64Array, positions?: Float64Array): number {
    const markers = Math.min(this.samples, P2_MARKERS);
    for (let marker = 0; marker < markers; marker++) {
      heights[marker] = this.markers[marker] as number;
      if (positions !== undefined) {
        positions[marker] = this.samples < P2_MARKERS ? marker + 1 : (this.markers[P2_MARKERS + marker] as number);
      }
    }
    return markers;
  }
}
