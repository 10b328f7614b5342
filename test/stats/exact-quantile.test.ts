import { describe, expect, it } from 'vitest';
import { insertSorted, sortedQuantile } from '../../src/stats/exact-quantile';

describe('sortedQuantile (type 7: linear interpolation between order statistics)', () => {
  const tenValues = Float64Array.from([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);

  it('puts the p90 of 1..10 at position 1 + 9 x 0.9 = 9.1, i.e. 9.1', () => {
    expect(sortedQuantile(tenValues, 10, 0.9)).toBeCloseTo(9.1, 12);
  });

  it('gives the median of 1..10 as 5.5', () => {
    expect(sortedQuantile(tenValues, 10, 0.5)).toBe(5.5);
  });

  it('reads only the first `length` entries', () => {
    expect(sortedQuantile(tenValues, 5, 0.5)).toBe(3);
  });

  it('returns the single value for a length of one', () => {
    expect(sortedQuantile(Float64Array.of(42), 1, 0.9)).toBe(42);
  });

  it('returns NaN for an empty prefix', () => {
    expect(sortedQuantile(tenValues, 0, 0.9)).toBeNaN();
  });
});

describe('insertSorted', () => {
  it('keeps the prefix ascending, placing a new value after equal ones', () => {
    const sorted = new Float64Array(5);
    for (const [length, x] of [3, 1, 2, 2, 0].entries()) insertSorted(sorted, length, x);
    expect(Array.from(sorted)).toEqual([0, 1, 2, 2, 3]);
  });
});
