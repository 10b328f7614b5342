import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { P2Quantile } from '../../src/stats/p2-quantile';
import { exactQuantile } from './support/latency-samples';

/** The worked example of Jain & Chlamtac (1985), Table I: twenty values, p = 0.5. */
const PAPER_VALUES = [
  0.02, 0.15, 0.74, 3.39, 0.83, 22.37, 10.15, 15.43, 38.62, 15.92, 34.6, 10.28, 1.47, 0.4, 0.05, 11.39, 0.27, 0.42,
  0.09, 11.37,
];

/** Any finite doubles, extremes included: the invariants must survive overflow in the formulas. */
const latencies = fc.array(fc.double({ noNaN: true, noDefaultInfinity: true }), { maxLength: 300 });
const quantiles = fc.double({ min: 0.01, max: 0.99, noNaN: true });

function markersOf(estimator: P2Quantile): { heights: number[]; positions: number[] } {
  const heights = new Float64Array(5);
  const positions = new Float64Array(5);
  const markers = estimator.copyMarkers(heights, positions);
  return {
    heights: Array.from(heights.subarray(0, markers)),
    positions: Array.from(positions.subarray(0, markers)),
  };
}

describe('P2Quantile', () => {
  it("reproduces the paper's worked example: markers 0.02, 0.49, 4.44, 17.20, 38.62 at 1, 6, 10, 16, 20", () => {
    const median = new P2Quantile(0.5);
    for (const x of PAPER_VALUES) median.add(x);
    const { heights, positions } = markersOf(median);
    expect(heights.map((height) => Number(height.toFixed(2)))).toEqual([0.02, 0.49, 4.44, 17.2, 38.62]);
    expect(positions).toEqual([1, 6, 10, 16, 20]);
    expect(median.value()).toBeCloseTo(4.4406, 4);
  });

  it('returns NaN before any value is added', () => {
    expect(new P2Quantile(0.9).value()).toBeNaN();
  });

  it('is exact (type 7) for three values: p90 of 10, 30, 20 is 28', () => {
    const p90 = new P2Quantile(0.9);
    for (const x of [10, 30, 20]) p90.add(x);
    expect(p90.value()).toBeCloseTo(28, 12);
  });

  it('is exact (type 7) for five values: p90 of 5, 1, 4, 2, 3 is 4.6', () => {
    const p90 = new P2Quantile(0.9);
    for (const x of [5, 1, 4, 2, 3]) p90.add(x);
    expect(p90.value()).toBeCloseTo(4.6, 12);
  });

  it('tracks the p90 of 1..1000 shuffled to within 1%', () => {
    const p90 = new P2Quantile(0.9);
    // 1..1000 in a fixed scrambled order: 7919 is prime, so i * 7919 mod 1000 is a permutation.
    for (let index = 0; index < 1000; index++) p90.add(((index * 7919) % 1000) + 1);
    expect(Math.abs(p90.value() - 900.1) / 900.1).toBeLessThan(0.01);
  });

  it('ignores NaN and infinities without counting them', () => {
    const p90 = new P2Quantile(0.9);
    for (const x of [1, Number.NaN, 2, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]) p90.add(x);
    expect(p90.count).toBe(2);
    expect(p90.value()).toBeCloseTo(1.9, 12);
  });

  it('forgets everything on reset', () => {
    const p90 = new P2Quantile(0.9);
    for (let x = 0; x < 20; x++) p90.add(x);
    p90.reset();
    expect(p90.count).toBe(0);
    expect(p90.value()).toBeNaN();
    p90.add(7);
    expect(p90.value()).toBe(7);
  });

  it('seeds its markers from sorted values at the nearest desired positions', () => {
    const p90 = new P2Quantile(0.9);
    const oneToHundred = Float64Array.from({ length: 100 }, (_, index) => index + 1);
    p90.initFromSorted(oneToHundred, 100);
    // Desired positions 1 + 99 x (0, 0.45, 0.9, 0.95, 1) = 1, 45.55, 90.1, 95.05, 100.
    expect(markersOf(p90)).toEqual({
      heights: [1, 46, 90, 95, 100],
      positions: [1, 46, 90, 95, 100],
    });
    expect(p90.count).toBe(100);
  });

  it.each([0, 1, -0.1, 1.5, Number.NaN, Number.POSITIVE_INFINITY])(
    'rejects quantile %s with a RangeError naming the option and value',
    (quantile) => {
      expect(() => new P2Quantile(quantile)).toThrow(RangeError);
      expect(() => new P2Quantile(quantile)).toThrow(
        `quantile must be a finite number strictly between 0 and 1, got ${quantile}`,
      );
    },
  );

  describe('properties', () => {
    it('keeps the estimate within [min, max] of the values added', () => {
      fc.assert(
        fc.property(
          latencies.filter((values) => values.length > 0),
          quantiles,
          (values, quantile) => {
            const estimator = new P2Quantile(quantile);
            for (const x of values) estimator.add(x);
            const estimate = estimator.value();
            expect(estimate).toBeGreaterThanOrEqual(Math.min(...values));
            expect(estimate).toBeLessThanOrEqual(Math.max(...values));
          },
        ),
      );
    });

    it('keeps marker heights non-decreasing and positions strictly increasing from 1 to count', () => {
      fc.assert(
        fc.property(latencies, quantiles, (values, quantile) => {
          const estimator = new P2Quantile(quantile);
          for (const x of values) {
            estimator.add(x);
            const { heights, positions } = markersOf(estimator);
            for (let marker = 1; marker < heights.length; marker++) {
              expect(heights[marker]).toBeGreaterThanOrEqual(heights[marker - 1] as number);
              expect(positions[marker]).toBeGreaterThan(positions[marker - 1] as number);
            }
            expect(positions[0]).toBe(1);
            expect(positions[positions.length - 1]).toBe(estimator.count);
          }
        }),
      );
    });

    it('pins marker 0 to the minimum and marker 4 to the maximum', () => {
      fc.assert(
        fc.property(
          latencies.filter((values) => values.length >= 5),
          quantiles,
          (values, quantile) => {
            const estimator = new P2Quantile(quantile);
            for (const x of values) estimator.add(x);
            const { heights } = markersOf(estimator);
            // + 0 folds -0 into 0: the two compare equal, so either may be the extreme.
            expect((heights[0] as number) + 0).toBe(Math.min(...values) + 0);
            expect((heights[4] as number) + 0).toBe(Math.max(...values) + 0);
          },
        ),
      );
    });

    it('equals the exact type-7 quantile for up to five values', () => {
      fc.assert(
        fc.property(
          fc.array(fc.double({ min: -1e6, max: 1e6, noNaN: true }), { minLength: 1, maxLength: 5 }),
          quantiles,
          (values, quantile) => {
            const estimator = new P2Quantile(quantile);
            for (const x of values) estimator.add(x);
            expect(estimator.value()).toBeCloseTo(exactQuantile(values, quantile), 6);
          },
        ),
      );
    });
  });
});
