import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Ewma } from '../../src/stats/ewma';

describe('Ewma', () => {
  it('averages plainly during warm-up: 10, 20, 60 with warmupSamples 3 gives 10, 15, 30', () => {
    const ewma = new Ewma({ alpha: 0.5, warmupSamples: 3 });
    expect([10, 20, 60].map((x) => ewma.add(x))).toEqual([10, 15, 30]);
  });

  it('smooths exponentially after warm-up: 30 then 70 at alpha 0.25 gives 40', () => {
    const ewma = new Ewma({ alpha: 0.25, warmupSamples: 3 });
    for (const x of [10, 20, 60]) ewma.add(x);
    expect(ewma.add(70)).toBe(40);
    expect(ewma.value()).toBe(40);
  });

  it('with warmupSamples 1 seeds from the first value, then smooths', () => {
    const ewma = new Ewma({ alpha: 0.2, warmupSamples: 1 });
    ewma.add(100);
    expect(ewma.add(200)).toBe(120);
  });

  it('does not let three averaged 0.1 values drift above 0.1', () => {
    const ewma = new Ewma({ alpha: 0.2, warmupSamples: 10 });
    for (let index = 0; index < 3; index++) ewma.add(0.1);
    expect(ewma.value()).toBe(0.1);
  });

  it('returns NaN when empty and after reset, and restarts warm-up', () => {
    const ewma = new Ewma({ alpha: 0.5, warmupSamples: 2 });
    expect(ewma.value()).toBeNaN();
    for (const x of [1, 2, 3]) ewma.add(x);
    ewma.reset();
    expect(ewma.value()).toBeNaN();
    expect(ewma.count).toBe(0);
    ewma.add(8);
    expect(ewma.add(4)).toBe(6);
  });

  it('ignores NaN and infinities', () => {
    const ewma = new Ewma({ alpha: 0.5, warmupSamples: 1 });
    ewma.add(4);
    expect(ewma.add(Number.NaN)).toBe(4);
    expect(ewma.add(Number.POSITIVE_INFINITY)).toBe(4);
    expect(ewma.count).toBe(1);
  });

  it.each([0, -0.1, 1.01, Number.NaN])('rejects alpha %s with a RangeError', (alpha) => {
    expect(() => new Ewma({ alpha, warmupSamples: 1 })).toThrow(
      `Ewma: alpha must be a finite number in (0, 1], got ${alpha}`,
    );
  });

  it.each([0, -1, 2.5, Number.NaN])('rejects warmupSamples %s with a RangeError', (warmupSamples) => {
    expect(() => new Ewma({ alpha: 0.2, warmupSamples })).toThrow(
      `Ewma: warmupSamples must be a positive integer, got ${warmupSamples}`,
    );
  });

  it('accepts alpha 1 (no smoothing: follows the latest value)', () => {
    const ewma = new Ewma({ alpha: 1, warmupSamples: 1 });
    ewma.add(3);
    expect(ewma.add(9)).toBe(9);
  });

  it('stays within [min, max] of its inputs (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ noNaN: true, noDefaultInfinity: true }), {
          minLength: 1,
          maxLength: 100,
        }),
        fc.double({ min: 0.001, max: 1, noNaN: true }),
        fc.integer({ min: 1, max: 20 }),
        (values, alpha, warmupSamples) => {
          const ewma = new Ewma({ alpha, warmupSamples });
          values.forEach((x, index) => {
            const output = ewma.add(x);
            const seen = values.slice(0, index + 1);
            expect(output).toBeGreaterThanOrEqual(Math.min(...seen));
            expect(output).toBeLessThanOrEqual(Math.max(...seen));
          });
        },
      ),
    );
  });

  it('equals the plain mean during warm-up (property)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: -1e6, max: 1e6, noNaN: true }), { minLength: 1, maxLength: 20 }),
        (values) => {
          const ewma = new Ewma({ alpha: 0.2, warmupSamples: 20 });
          for (const x of values) ewma.add(x);
          const mean = values.reduce((sum, x) => sum + x, 0) / values.length;
          expect(ewma.value()).toBeCloseTo(mean, 6);
        },
      ),
    );
  });
});
