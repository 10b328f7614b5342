import type { QuantileEstimator } from './quantile-estimator';
import { siftIntoPlace, sortedQuantile } from './exact-quantile';
import { addToMarkers, markerEstimate, P2_INPUT, P2_SLOTS, seedMarkers } from './p2-markers';
import { requireIntegerInRange, requireQuantile } from './validate';

/** The P² markers move into the exact buffer at the switch, so it needs their ten slots. */
const MIN_EXACT_CAPACITY = P2_SLOTS;
/** Spec 9.3 bounds the exact fallback at n <= 64. */
const MAX_EXACT_CAPACITY = 64;

export interface WindowQuantileOptions {
  /** Target quantile in (0, 1). */
  readonly quantile: number;
  /**
   * Values answered exactly before switching to P², 10 to 64. Default 64: the default window of
   * 50 samples (failsafe-go minSamples, spec 6) is then answered exactly, and 64 is the spec 9.3
   * bound. Measurements in docs/quantiles.md, decision in adr/0016-quantile-estimator.md.
   */
  readonly exactCapacity?: number;
}

/**
 * Quantile of one sampling window: exact (type 7, see ./exact-quantile) while the window holds at
 * most `exactCapacity` values, P² (./p2-markers) beyond.
 *
 * At the switch the P² markers are seeded with the exact order statistics nearest their desired
 * positions, so the sketch starts from the truth rather than from the first five values, and
 * they are stored in the first ten slots of the same buffer, which the exact phase no longer
 * needs: one Float64Array per instance. Allocates nothing after construction.
 *
 * Why a hybrid (adr/0016): P² alone is poor on small windows (p90 of 10 values: ~20-45% median
 * error), where an exact buffer is cheap; a buffer that keeps only 64 values loses most of a
 * large window, where P² is good.
 */
export class WindowQuantile implements QuantileEstimator {
  readonly quantile: number;
  readonly exactCapacity: number;
  /** Ascending values while exact; then P² markers in slots 0-9 (see ./p2-markers). */
  private readonly buffer: Float64Array;
  private samples = 0;

  constructor(options: WindowQuantileOptions) {
    this.quantile = requireQuantile('WindowQuantile', 'quantile', options.quantile);
    this.exactCapacity = requireIntegerInRange(
      'WindowQuantile',
      'exactCapacity',
      options.exactCapacity ?? MAX_EXACT_CAPACITY,
      MIN_EXACT_CAPACITY,
      MAX_EXACT_CAPACITY,
    );
    // One slot more than the markers when the exact part is that small: P2_INPUT (./p2-markers).
    this.buffer = new Float64Array(Math.max(this.exactCapacity, P2_INPUT + 1));
  }

  get count(): number {
    return this.samples;
  }

  /** True while the answer is exact (count <= exactCapacity). */
  get exact(): boolean {
    return this.samples <= this.exactCapacity;
  }

  /**
   * Doubles go into the buffer, never into a call: V8 inlines this method into the limiter's
   * settle but not the helpers below, and boxes a double it passes to one (16 bytes per call).
   */
  add(x: number): void {
    if (!Number.isFinite(x)) return;
    const samples = this.samples;
    this.samples = samples + 1;
    const buffer = this.buffer;
    if (samples < this.exactCapacity) {
      buffer[samples] = x;
      siftIntoPlace(buffer, samples);
      return;
    }
    if (samples === this.exactCapacity) seedMarkers(buffer, buffer, samples, this.quantile);
    buffer[P2_INPUT] = x;
    addToMarkers(buffer, samples, this.quantile);
  }

  value(): number {
    if (this.samples <= this.exactCapacity) {
      return sortedQuantile(this.buffer, this.samples, this.quantile);
    }
    return markerEstimate(this.buffer);
  }

  reset(): void {
    this.samples = 0;
  }
}
