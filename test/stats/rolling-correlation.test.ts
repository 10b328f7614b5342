import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_CORRELATION_CAPACITY, RollingCorrelation } from '../../src/stats/rolling-correlation';

/** Textbook Pearson r over float32-rounded pairs (what the ring stores). */
function pearson(pairs: readonly (readonly [number, number])[]): number {
  const xs = pairs.map(([x]) => Math.fround(x));
  const ys = pairs.map(([, y]) => Math.fround(y));
  const meanX = xs.reduce((sum, x) => sum + x, 0) / xs.length;
  const meanY = ys.reduce((sum, y) => sum + y, 0) / ys.length;
  let products = 0;
  let squaresX = 0;
  let squaresY = 0;
  xs.forEach((x, index) => {
    const y = ys[index] as number;
    products += (x - meanX) * (y - meanY);
    squaresX += (x - meanX) ** 2;
    squaresY += (y - meanY) ** 2;
  });
  return products / Math.sqrt(squaresX * squaresY);
}

describe('RollingCorrelation', () => {
  it('defaults to a 50-entry window (Uber Cinnamon, spec 6)', () => {
    expect(new RollingCorrelation().capacity).toBe(50);
    expect(DEFAULT_CORRELATION_CAPACITY).toBe(50);
  });

  it('reports +1 for throughput rising linearly with inflight', () => {
    const correlation = new RollingCorrelation();
    for (let inflight = 1; inflight <= 10; inflight++) correlation.add(inflight, 100 * inflight + 5);
    expect(correlation.value()).toBeCloseTo(1, 12);
  });

  it('reports -1 for throughput falling linearly with inflight', () => {
    const correlation = new RollingCorrelation();
    for (let inflight = 1; inflight <= 10; inflight++) correlation.add(inflight, 1000 - 10 * inflight);
    expect(correlation.value()).toBeCloseTo(-1, 12);
  });

  it('computes r = 0.8 for (1,2) (2,1) (3,4) (4,3) (5,5)', () => {
    // Sxy = 8, Sxx = Syy = 10 around means 3 and 3.
    const correlation = new RollingCorrelation();
    for (const [x, y] of [
      [1, 2],
      [2, 1],
      [3, 4],
      [4, 3],
      [5, 5],
    ] as const)
      correlation.add(x, y);
    expect(correlation.value()).toBeCloseTo(0.8, 12);
  });

  it('forgets pairs older than its capacity', () => {
    const correlation = new RollingCorrelation(3);
    for (const [x, y] of [
      [1, 9],
      [2, 8],
      [3, 7],
      [4, 4],
      [5, 5],
      [6, 6],
    ] as const)
      correlation.add(x, y);
    expect(correlation.size).toBe(3);
    expect(correlation.count).toBe(6);
    expect(correlation.value()).toBeCloseTo(1, 12);
  });

  it('reports 0 with fewer than three pairs', () => {
    const correlation = new RollingCorrelation();
    correlation.add(1, 1);
    correlation.add(2, 2);
    expect(correlation.value()).toBe(0);
  });

  it('reports 0, not NaN, when one series is constant', () => {
    const correlation = new RollingCorrelation();
    for (let index = 0; index < 10; index++) correlation.add(20, index);
    expect(correlation.value()).toBe(0);
  });

  it('reports 0 when a series varies by less than a millionth of its mean (rounding noise)', () => {
    // Steps of 2^-22 around 1 survive float32 storage; relative standard deviation is 6.9e-7.
    const correlation = new RollingCorrelation();
    for (let index = 0; index < 10; index++) correlation.add(1 + index * 2 ** -22, index);
    expect(correlation.value()).toBe(0);
  });

  it('ignores pairs with a non-finite member', () => {
    const correlation = new RollingCorrelation();
    correlation.add(Number.NaN, 1);
    correlation.add(1, Number.POSITIVE_INFINITY);
    correlation.add(1e39, 1); // beyond float32 range
    expect(correlation.count).toBe(0);
  });

  it('starts empty again after reset', () => {
    const correlation = new RollingCorrelation();
    for (let index = 0; index < 10; index++) correlation.add(index, index);
    correlation.reset();
    expect(correlation.count).toBe(0);
    expect(correlation.value()).toBe(0);
  });

  it.each([2, 4097, 10.5])('rejects capacity %s with a RangeError', (capacity) => {
    expect(() => new RollingCorrelation(capacity)).toThrow(
      `RollingCorrelation: capacity must be an integer from 3 to 4096, got ${capacity}`,
    );
  });

  describe('properties', () => {
    const pairs = fc.array(
      fc.tuple(
        fc.double({ noNaN: true, noDefaultInfinity: true }),
        fc.double({ noNaN: true, noDefaultInfinity: true }),
      ),
      { maxLength: 80 },
    );

    it('stays within [-1, 1] and is never NaN', () => {
      fc.assert(
        fc.property(pairs, fc.integer({ min: 3, max: 60 }), (values, capacity) => {
          const correlation = new RollingCorrelation(capacity);
          for (const [x, y] of values) correlation.add(x, y);
          const r = correlation.value();
          expect(Number.isNaN(r)).toBe(false);
          expect(r).toBeGreaterThanOrEqual(-1);
          expect(r).toBeLessThanOrEqual(1);
        }),
      );
    });

    it('matches textbook Pearson on the last `capacity` pairs of latency-scale data', () => {
      const scaled = fc.array(
        fc.tuple(fc.integer({ min: 0, max: 500 }), fc.double({ min: 0, max: 10_000, noNaN: true })),
        { minLength: 3, maxLength: 80 },
      );
      fc.assert(
        fc.property(scaled, (values) => {
          const correlation = new RollingCorrelation();
          for (const [x, y] of values) correlation.add(x, y);
          const expected = pearson(values.slice(-DEFAULT_CORRELATION_CAPACITY));
          fc.pre(Number.isFinite(expected) && correlation.value() !== 0);
          expect(correlation.value()).toBeCloseTo(expected, 9);
        }),
      );
    });

    it('is symmetric in its two series', () => {
      fc.assert(
        fc.property(pairs, (values) => {
          const forward = new RollingCorrelation();
          const swapped = new RollingCorrelation();
          for (const [x, y] of values) {
            forward.add(x, y);
            swapped.add(y, x);
          }
          expect(forward.value()).toBe(swapped.value());
        }),
      );
    });
  });
});
