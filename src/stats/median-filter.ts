/**
 * Default window of 3. The limiter feeds one p90 per sampling window (2 s to 30 s, spec 6), so
 * every extra slot is a whole window of lag. A median of 3 rejects any single-window spike and
 * follows a real step after 2 windows; a median of 5 would also reject two spikes in a row but
 * follow a step only after 3 windows. One spike is the failure we see (one slow GC pause, one
 * cold connection pool); a real degradation should reach the limiter in the next window. Ours,
 * not borrowed: Uber's Cinnamon names a median filter but not its length (spec 5.2).
 */
export const DEFAULT_MEDIAN_SIZE = 3;
/** Odd sizes only (an odd window has one middle); 15 bounds the O(size^2) selection per add. */
const MAX_MEDIAN_SIZE = 15;

/**
 * Median of the last `size` values. Before `size` values have arrived it is the median of what
 * has; with an even number of values (only possible during that warm-up) it is the lower middle
 * value, so a spike in the second window is still rejected. The output is always one of the
 * inputs, never an average. The median is found by counting ranks over the held values
 * (O(size^2): 9 comparisons at size 3) so no scratch array is needed. Allocates nothing after
 * construction.
 */
export class MedianFilter {
  readonly size: number;
  private readonly recent: Float64Array;
  private nextSlot = 0;
  private held = 0;
  private samples = 0;
  private median = Number.NaN;

  constructor(size: number = DEFAULT_MEDIAN_SIZE) {
    if (typeof size !== 'number' || !Number.isInteger(size) || size < 1 || size > MAX_MEDIAN_SIZE || size % 2 === 0) {
      throw new RangeError(
        `MedianFilter: size must be an odd integer from 1 to ${MAX_MEDIAN_SIZE}, got ${String(size)}`,
      );
    }
    this.size = size;
    this.recent = new Float64Array(size);
  }

  /** Values accepted since construction or the last reset. */
  get count(): number {
    return this.samples;
  }

  /** Adds one value and returns the new median. Non-finite values are ignored. */
  add(x: number): number {
    if (!Number.isFinite(x)) return this.median;
    this.recent[this.nextSlot] = x;
    this.nextSlot = this.nextSlot + 1 === this.size ? 0 : this.nextSlot + 1;
    if (this.held < this.size) this.held++;
    this.samples++;
    this.median = this.lowerMiddle();
    return this.median;
  }

  /** The current median; NaN when empty. */
  value(): number {
    return this.median;
  }

  reset(): void {
    this.nextSlot = 0;
    this.held = 0;
    this.samples = 0;
    this.median = Number.NaN;
  }

  /** The held value of ascending rank (held - 1) / 2, rounded down: the lower middle. */
  private lowerMiddle(): number {
    const recent = this.recent;
    const held = this.held;
    const targetRank = (held - 1) >>> 1;
    for (let candidate = 0; candidate < held; candidate++) {
      const value = recent[candidate] as number;
      let below = 0;
      let equal = 0;
      for (let other = 0; other < held; other++) {
        const otherValue = recent[other] as number;
        if (otherValue < value) below++;
        else if (otherValue === value) equal++;
      }
      if (below <= targetRank && targetRank < below + equal) return value;
    }
    return recent[0] as number; // unreachable: some held value always has the target rank
  }
}
