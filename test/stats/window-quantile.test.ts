import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { P2Quantile } from '../../src/stats/p2-quantile';
import { WindowQuantile } from '../../src/stats/window-quantile';
import { exactQuantile } from './support/latency-samples';

const finiteValues = fc.double({ noNaN: true, noDefaultInfinity: true });
const quantiles = fc.double({ min: 0.01, max: 0.99, noNaN: true });

describe('WindowQuantile', () => {
  it('answers the exact type-7 p90 of a 50-value window (the default window)', () => {
    const p90 = new WindowQuantile({ quantile: 0.9 });
    // 1..50 in a scrambled order (7 is coprime with 50).
    for (let index = 0; index < 50; index++) p90.add(((index * 7) % 50) + 1);
    expect(p90.exact).toBe(true);
    expect(p90.value()).toBeCloseTo(45.1, 12);
  });

  it('stays exact up to and including exactCapacity values', () => {
    const p90 = new WindowQuantile({ quantile: 0.9, exactCapacity: 10 });
    for (let x = 10; x >= 1; x--) p90.add(x);
    expect(p90.exact).toBe(true);
    expect(p90.value()).toBeCloseTo(9.1, 12);
  });

  it('switches to P² seeded from its exact buffer, matching P2Quantile.initFromSorted', () => {
    const hybrid = new WindowQuantile({ quantile: 0.9, exactCapacity: 20 });
    const reference = new P2Quantile(0.9);
    const first = Float64Array.from({ length: 20 }, (_, index) => index + 1);
    for (const x of first) hybrid.add(x);
    reference.initFromSorted(first, 20);
    for (const x of [3.5, 25, 17.25, 0.5]) {
      hybrid.add(x);
      reference.add(x);
    }
    expect(hybrid.exact).toBe(false);
    expect(hybrid.count).toBe(24);
    expect(hybrid.value()).toBe(reference.value());
  });

  it('defaults exactCapacity to 64', () => {
    expect(new WindowQuantile({ quantile: 0.9 }).exactCapacity).toBe(64);
  });

  it('starts exact again after reset', () => {
    const p90 = new WindowQuantile({ quantile: 0.9, exactCapacity: 10 });
    for (let x = 0; x < 100; x++) p90.add(x);
    p90.reset();
    expect(p90.value()).toBeNaN();
    for (const x of [1, 2, 3]) p90.add(x);
    expect(p90.value()).toBeCloseTo(2.8, 12);
  });

  it('ignores NaN and infinities', () => {
    const p90 = new WindowQuantile({ quantile: 0.9 });
    for (const x of [Number.NaN, 1, Number.NEGATIVE_INFINITY]) p90.add(x);
    expect(p90.count).toBe(1);
  });

  it.each([9, 65, 12.5])('rejects exactCapacity %s with a RangeError', (exactCapacity) => {
    expect(() => new WindowQuantile({ quantile: 0.9, exactCapacity })).toThrow(
      `WindowQuantile: exactCapacity must be an integer from 10 to 64, got ${exactCapacity}`,
    );
  });

  it('rejects quantile 0 with a RangeError naming the option', () => {
    expect(() => new WindowQuantile({ quantile: 0 })).toThrow(/WindowQuantile: quantile .* got 0$/);
  });

  describe('properties', () => {
    it('equals the exact quantile while count <= exactCapacity', () => {
      fc.assert(
        fc.property(
          fc.array(fc.double({ min: -1e6, max: 1e6, noNaN: true }), {
            minLength: 1,
            maxLength: 64,
          }),
          quantiles,
          (values, quantile) => {
            const estimator = new WindowQuantile({ quantile });
            for (const x of values) estimator.add(x);
            expect(estimator.value()).toBeCloseTo(exactQuantile(values, quantile), 6);
          },
        ),
      );
    });

    it('keeps the estimate within [min, max] of the values added', () => {
      fc.assert(
        fc.property(
          fc.array(finiteValues, { minLength: 1, maxLength: 300 }),
          fc.integer({ min: 10, max: 64 }),
          quantiles,
          (values, exactCapacity, quantile) => {
            const estimator = new WindowQuantile({ quantile, exactCapacity });
            for (const x of values) estimator.add(x);
            expect(estimator.value()).toBeGreaterThanOrEqual(Math.min(...values));
            expect(estimator.value()).toBeLessThanOrEqual(Math.max(...values));
          },
        ),
      );
    });
  });
});
