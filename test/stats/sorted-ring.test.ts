import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SortedRing } from '../../src/stats/sorted-ring';
import { exactQuantile } from './support/latency-samples';

describe('SortedRing', () => {
  it('answers the exact type-7 p90 while it holds every value: 1..10 gives 9.1', () => {
    const ring = new SortedRing({ quantile: 0.9, capacity: 64 });
    for (const x of [7, 3, 10, 1, 5, 9, 2, 8, 4, 6]) ring.add(x);
    expect(ring.value()).toBeCloseTo(9.1, 12);
  });

  it('answers over the most recent `capacity` values once full: 1..8 in a ring of 4 is the p90 of 5..8', () => {
    const ring = new SortedRing({ quantile: 0.9, capacity: 4 });
    for (let x = 1; x <= 8; x++) ring.add(x);
    expect(ring.value()).toBeCloseTo(7.7, 12);
    expect(ring.count).toBe(8);
    expect(ring.size).toBe(4);
  });

  it('evicts one copy of a repeated value, not all of them', () => {
    const ring = new SortedRing({ quantile: 0.5, capacity: 3 });
    for (const x of [5, 5, 1, 9]) ring.add(x); // holds 5, 1, 9
    expect(ring.value()).toBe(5);
  });

  it('defaults to the spec bound of 64 values', () => {
    expect(new SortedRing({ quantile: 0.9 }).capacity).toBe(64);
  });

  it('returns NaN when empty and after reset', () => {
    const ring = new SortedRing({ quantile: 0.9 });
    expect(ring.value()).toBeNaN();
    ring.add(3);
    ring.reset();
    expect(ring.value()).toBeNaN();
    expect(ring.count).toBe(0);
  });

  it('ignores NaN and infinities', () => {
    const ring = new SortedRing({ quantile: 0.5 });
    for (const x of [Number.NaN, 4, Number.POSITIVE_INFINITY]) ring.add(x);
    expect(ring.count).toBe(1);
    expect(ring.value()).toBe(4);
  });

  it.each([0, 65, 2.5, Number.NaN])('rejects capacity %s with a RangeError', (capacity) => {
    expect(() => new SortedRing({ quantile: 0.9, capacity })).toThrow(
      `SortedRing: capacity must be an integer from 1 to 64, got ${capacity}`,
    );
  });

  it('rejects quantile 1 with a RangeError naming the option', () => {
    expect(() => new SortedRing({ quantile: 1 })).toThrow(/SortedRing: quantile .* got 1$/);
  });

  it('equals the exact quantile of the last `capacity` values (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: -1e6, max: 1e6, noNaN: true }), { minLength: 1, maxLength: 200 }),
        fc.integer({ min: 1, max: 64 }),
        fc.double({ min: 0.01, max: 0.99, noNaN: true }),
        (values, capacity, quantile) => {
          const ring = new SortedRing({ quantile, capacity });
          for (const x of values) ring.add(x);
          expect(ring.value()).toBeCloseTo(exactQuantile(values.slice(-capacity), quantile), 6);
        },
      ),
    );
  });
});
