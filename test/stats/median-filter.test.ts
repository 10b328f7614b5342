import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_MEDIAN_SIZE, MedianFilter } from '../../src/stats/median-filter';

describe('MedianFilter', () => {
  it('defaults to a window of 3', () => {
    expect(new MedianFilter().size).toBe(3);
    expect(DEFAULT_MEDIAN_SIZE).toBe(3);
  });

  it('rejects a single-window spike: 20, 20, 500, 20 never outputs 500', () => {
    const filter = new MedianFilter(3);
    expect([20, 20, 500, 20].map((p90Ms) => filter.add(p90Ms))).toEqual([20, 20, 20, 20]);
  });

  it('follows a real step after two windows: 20, 20, 50, 50 outputs 50 at the fourth', () => {
    const filter = new MedianFilter(3);
    expect([20, 20, 50, 50].map((p90Ms) => filter.add(p90Ms))).toEqual([20, 20, 20, 50]);
  });

  it('with size 5 rejects two spikes in a row but needs three windows to follow a step', () => {
    const filter = new MedianFilter(5);
    expect([20, 20, 20, 500, 500, 20].map((p90Ms) => filter.add(p90Ms))).toEqual([20, 20, 20, 20, 20, 20]);
    filter.reset();
    expect([20, 20, 20, 20, 20, 50, 50, 50].map((p90Ms) => filter.add(p90Ms))).toEqual([
      20, 20, 20, 20, 20, 20, 20, 50,
    ]);
  });

  it('uses the lower middle value while two values are held (warm-up)', () => {
    const filter = new MedianFilter(3);
    filter.add(30);
    expect(filter.add(10)).toBe(10);
  });

  it('returns NaN when empty and after reset', () => {
    const filter = new MedianFilter();
    expect(filter.value()).toBeNaN();
    filter.add(5);
    filter.reset();
    expect(filter.value()).toBeNaN();
    expect(filter.count).toBe(0);
  });

  it('ignores NaN and returns the current median', () => {
    const filter = new MedianFilter();
    filter.add(7);
    expect(filter.add(Number.NaN)).toBe(7);
    expect(filter.count).toBe(1);
  });

  it.each([0, 2, 4, 17, 3.5, Number.NaN])('rejects size %s with a RangeError', (size) => {
    expect(() => new MedianFilter(size)).toThrow(`MedianFilter: size must be an odd integer from 1 to 15, got ${size}`);
  });

  describe('properties', () => {
    const inputs = fc.array(fc.double({ noNaN: true, noDefaultInfinity: true }), {
      minLength: 1,
      maxLength: 100,
    });
    const sizes = fc.constantFrom(1, 3, 5, 7);

    it('outputs one of the last `size` inputs', () => {
      fc.assert(
        fc.property(inputs, sizes, (values, size) => {
          const filter = new MedianFilter(size);
          values.forEach((x, index) => {
            const output = filter.add(x);
            expect(values.slice(Math.max(0, index + 1 - size), index + 1)).toContain(output);
          });
        }),
      );
    });

    it('equals the lower median of the last `size` inputs', () => {
      fc.assert(
        fc.property(inputs, sizes, (values, size) => {
          const filter = new MedianFilter(size);
          for (const x of values) filter.add(x);
          const recent = values.slice(-size).sort((a, b) => a - b);
          // + 0 folds -0 into 0: the two compare equal, so either may be the median.
          expect(filter.value() + 0).toBe((recent[(recent.length - 1) >> 1] as number) + 0);
        }),
      );
    });
  });
});
