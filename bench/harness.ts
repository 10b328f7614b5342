/** Shared plumbing for the benchmark scripts: a real `gc()`, a zero-allocation iterator, stats. */
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * A real full GC without `--expose-gc` on the command line. mitata's fallback "gc" allocates a
 * 1 GiB buffer to provoke one, which is no way to treat a shared machine.
 */
export const collectGarbage: () => void = (() => {
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (typeof exposed === 'function') return exposed;
  setFlagsFromString('--expose-gc');
  return runInNewContext('gc') as () => void;
})();

const DONE: IteratorResult<undefined> = Object.freeze({ done: true, value: undefined });
const NEXT: IteratorResult<undefined> = Object.freeze({ done: false, value: undefined });

/** Yields `count` times, allocating nothing once built (the result objects are shared). */
export class Counter implements Iterable<undefined>, Iterator<undefined> {
  private left: number;
  constructor(count: number) {
    this.left = count;
  }
  reset(count: number): this {
    this.left = count;
    return this;
  }
  [Symbol.iterator](): Iterator<undefined> {
    return this;
  }
  next(): IteratorResult<undefined> {
    if (this.left <= 0) return DONE;
    this.left--;
    return NEXT;
  }
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Rotates `items` by `by` places: round r starts at a different case, so no case always runs first. */
export function rotate<T>(items: readonly T[], by: number): T[] {
  const n = items.length;
  if (n === 0) return [];
  const k = ((by % n) + n) % n;
  return [...items.slice(k), ...items.slice(0, k)];
}

/** The q-quantile of `values` (0 <= q <= 1), interpolating between the two nearest ranks. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const at = q * (sorted.length - 1);
  const lower = Math.floor(at);
  const upper = Math.min(sorted.length - 1, lower + 1);
  return sorted[lower]! + (sorted[upper]! - sorted[lower]!) * (at - lower);
}
