import { requireIntegerInRange } from './validate';

/**
 * 50 entries: Uber's Cinnamon auto-tuner correlates inflight with throughput over a "running
 * window (typically lasting 50 intervals)"; failsafe-go also uses 50 measurements (spec 6).
 */
export const DEFAULT_CORRELATION_CAPACITY = 50;
/** Pearson needs three points to say anything; 4096 stops a typo allocating megabytes per key. */
const MIN_CAPACITY = 3;
const MAX_CAPACITY = 4096;
/**
 * A series whose variance is below 1e-12 of its squared mean (relative standard deviation
 * under 1e-6) is flat: what is left is rounding noise, and its "correlation" would be a coin
 * toss between -1 and +1. Ours; far below any real change in inflight or throughput.
 */
const FLAT_RELATIVE_VARIANCE = 1e-12;

/**
 * Pearson correlation of two series over the last `capacity` pairs.
 *
 * Pairs are stored as 32-bit floats, interleaved in one Float32Array (400 bytes at 50 pairs
 * instead of 800 in two Float64Arrays): the series are inflight counts and throughputs, which
 * need far fewer than float32's ~7 significant digits, and the arithmetic runs in doubles. That
 * saving is what keeps one key's statistics inside the 2 KB budget (adr/0016). A pair whose
 * float32 form is not finite (|value| > 3.4e38) is ignored like NaN.
 * value() recomputes from the
 * ring in two passes (means first, then centred sums), which is exact to rounding and immune to
 * the cancellation that running sums of squares suffer; at 50 pairs it costs ~100 multiply-adds
 * and runs once per sampling window. Returns 0, never NaN, when fewer than three pairs are held
 * or either series is flat. Allocates nothing after construction.
 */
export class RollingCorrelation {
  readonly capacity: number;
  /** x at even slots, y at odd slots; `capacity` pairs. */
  private readonly pairs: Float32Array;
  private nextSlot = 0;
  private held = 0;
  private samples = 0;

  constructor(capacity: number = DEFAULT_CORRELATION_CAPACITY) {
    this.capacity = requireIntegerInRange('RollingCorrelation', 'capacity', capacity, MIN_CAPACITY, MAX_CAPACITY);
    this.pairs = new Float32Array(2 * this.capacity);
  }

  /** Pairs accepted since construction or the last reset (may exceed capacity). */
  get count(): number {
    return this.samples;
  }

  /** Pairs currently held: min(count, capacity). */
  get size(): number {
    return this.held;
  }

  /** The slot the next accepted pair is written to: lets a caller keep a parallel ring aligned. */
  get nextIndex(): number {
    return this.nextSlot;
  }

  /**
   * x of the pair held in slot `index` (0 <= index < size), in storage order: callers that need
   * the held pairs as a set read them here instead of keeping copies (memory per key).
   */
  xAt(index: number): number {
    return this.pairs[2 * index] as number;
  }

  /** y of the pair held in slot `index` (0 <= index < size), in storage order. */
  yAt(index: number): number {
    return this.pairs[2 * index + 1] as number;
  }

  /** Adds one (x, y) pair. A pair with a non-finite member is ignored. */
  add(x: number, y: number): void {
    if (!Number.isFinite(Math.fround(x)) || !Number.isFinite(Math.fround(y))) return;
    this.pairs[2 * this.nextSlot] = x;
    this.pairs[2 * this.nextSlot + 1] = y;
    this.nextSlot = this.nextSlot + 1 === this.capacity ? 0 : this.nextSlot + 1;
    if (this.held < this.capacity) this.held++;
    this.samples++;
  }

  /** Pearson's r over the held pairs, in [-1, 1]; 0 when undefined (see class comment). */
  value(): number {
    const held = this.held;
    if (held < MIN_CAPACITY) return 0;
    const pairs = this.pairs;
    const end = 2 * held;
    let sumX = 0;
    let sumY = 0;
    for (let slot = 0; slot < end; slot += 2) {
      sumX += pairs[slot] as number;
      sumY += pairs[slot + 1] as number;
    }
    const meanX = sumX / held;
    const meanY = sumY / held;
    let squaresX = 0;
    let squaresY = 0;
    let products = 0;
    for (let slot = 0; slot < end; slot += 2) {
      const deviationX = (pairs[slot] as number) - meanX;
      const deviationY = (pairs[slot + 1] as number) - meanY;
      squaresX += deviationX * deviationX;
      squaresY += deviationY * deviationY;
      products += deviationX * deviationY;
    }
    if (squaresX / held <= FLAT_RELATIVE_VARIANCE * meanX * meanX) return 0;
    if (squaresY / held <= FLAT_RELATIVE_VARIANCE * meanY * meanY) return 0;
    const r = products / (Math.sqrt(squaresX) * Math.sqrt(squaresY));
    if (!Number.isFinite(r)) return 0;
    return r > 1 ? 1 : r < -1 ? -1 : r;
  }

  reset(): void {
    this.nextSlot = 0;
    this.held = 0;
    this.samples = 0;
  }
}
