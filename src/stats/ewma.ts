export interface EwmaOptions {
  /**
   * Weight of each new value after warm-up, in (0, 1]. No default here: the caller owns the
   * provenance (e.g. Netflix's ExpAvgMeasurement uses 2 / (window + 1)).
   */
  readonly alpha: number;
  /**
   * How many first values are averaged plainly before smoothing starts, a positive integer.
   * Seeding with a plain mean stops the first value from dominating for ~1/alpha samples;
   * Netflix Gradient2Limit does the same with `new ExpAvgMeasurement(longWindow, 10)`.
   */
  readonly warmupSamples: number;
}

/**
 * Exponentially weighted moving average with an explicit warm-up: the plain mean of the first
 * `warmupSamples` values, then value += alpha (x - value).
 *
 * Every update is a convex combination of the previous value and x, clamped to lie between them,
 * so the output always stays within [min, max] of the inputs despite rounding (a running sum
 * divided by n does not: three times 0.1 averages to 0.10000000000000002). No allocation.
 */
export class Ewma {
  readonly alpha: number;
  readonly warmupSamples: number;
  private current = Number.NaN;
  private samples = 0;

  constructor(options: EwmaOptions) {
    const { alpha, warmupSamples } = options;
    if (typeof alpha !== 'number' || !Number.isFinite(alpha) || alpha <= 0 || alpha > 1) {
      throw new RangeError(`Ewma: alpha must be a finite number in (0, 1], got ${String(alpha)}`);
    }
    if (typeof warmupSamples !== 'number' || !Number.isSafeInteger(warmupSamples) || warmupSamples < 1) {
      throw new RangeError(`Ewma: warmupSamples must be a positive integer, got ${String(warmupSamples)}`);
    }
    this.alpha = alpha;
    this.warmupSamples = warmupSamples;
  }

  /** Values accepted since construction or the last reset. */
  get count(): number {
    return this.samples;
  }

  /** Adds one value and returns the new average. Non-finite values are ignored. */
  add(x: number): number {
    if (!Number.isFinite(x)) return this.current;
    this.samples++;
    if (this.samples === 1) {
      this.current = x;
      return x;
    }
    const weight = this.samples <= this.warmupSamples ? 1 / this.samples : this.alpha;
    const previous = this.current;
    let next = previous + weight * (x - previous);
    const low = previous < x ? previous : x;
    const high = previous < x ? x : previous;
    if (next < low) next = low;
    else if (next > high) next = high;
    this.current = next;
    return next;
  }

  /** The current average; NaN when empty. */
  value(): number {
    return this.current;
  }

  reset(): void {
    this.current = Number.NaN;
    this.samples = 0;
  }
}
