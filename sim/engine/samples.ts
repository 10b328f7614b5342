/** A growable buffer of numbers (latencies): a Float64Array that doubles, so recording allocates rarely. */
export class SampleBuffer {
  private values: Float64Array;
  private length = 0;
  private sorted = true;

  constructor(initialCapacity = 1024) {
    this.values = new Float64Array(initialCapacity);
  }

  get size(): number {
    return this.length;
  }

  push(value: number): void {
    if (this.length === this.values.length) {
      const grown = new Float64Array(this.values.length * 2);
      grown.set(this.values);
      this.values = grown;
    }
    this.values[this.length++] = value;
    this.sorted = false;
  }

  clear(): void {
    this.length = 0;
    this.sorted = true;
  }

  /**
   * The exact q-quantile by nearest rank (the smallest value with at least q of the samples at or
   * below it), or NaN when empty. Selects in place (quickselect: linear time, where a sort of a
   * phase's half-million latencies would cost 100 ms); reorders the buffer.
   */
  quantile(q: number): number {
    const n = this.length;
    if (n === 0) return NaN;
    const rank = Math.min(n, Math.max(1, Math.ceil(q * n)));
    if (this.sorted) return this.values[rank - 1]!;
    return select(this.values, n, rank - 1);
  }

  mean(): number {
    const n = this.length;
    if (n === 0) return NaN;
    let sum = 0;
    for (let i = 0; i < n; i++) sum += this.values[i]!;
    return sum / n;
  }
}

/**
 * The k-th smallest of values[0..n) (0-based), by Hoare's quickselect with a median-of-three pivot;
 * deterministic, linear on average, and it leaves values[k] in its sorted place.
 */
function select(values: Float64Array, n: number, k: number): number {
  let left = 0;
  let right = n - 1;
  while (right > left) {
    const middle = (left + right) >>> 1;
    // Median of three, placed at `middle`.
    if (values[middle]! < values[left]!) swap(values, middle, left);
    if (values[right]! < values[left]!) swap(values, right, left);
    if (values[right]! < values[middle]!) swap(values, right, middle);
    const pivot = values[middle]!;
    let i = left;
    let j = right;
    while (i <= j) {
      while (values[i]! < pivot) i++;
      while (values[j]! > pivot) j--;
      if (i <= j) {
        swap(values, i, j);
        i++;
        j--;
      }
    }
    if (k <= j) right = j;
    else if (k >= i) left = i;
    else break;
  }
  return values[k]!;
}

function swap(values: Float64Array, a: number, b: number): void {
  const t = values[a]!;
  values[a] = values[b]!;
  values[b] = t;
}

/** Exact q-quantile of a plain array (nearest rank), NaN when empty. Does not modify the input. */
export function quantileOf(values: ArrayLike<number>, q: number): number {
  const n = values.length;
  if (n === 0) return NaN;
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(n, Math.max(1, Math.ceil(q * n))) - 1]!;
}

/**
 * Jain's fairness index: (sum x)^2 / (n * sum x^2). 1 when every client gets the same share,
 * 1/n when one client gets everything (Jain, Chiu and Hawe, DEC-TR-301, 1984).
 */
export function jainIndex(values: ArrayLike<number>): number {
  let sum = 0;
  let sumSquares = 0;
  for (let i = 0; i < values.length; i++) {
    sum += values[i]!;
    sumSquares += values[i]! * values[i]!;
  }
  return sumSquares === 0 ? 1 : (sum * sum) / (values.length * sumSquares);
}
