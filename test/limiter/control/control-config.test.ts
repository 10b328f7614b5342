import { describe, expect, it } from 'vitest';
import {
  ALPHA_POWER,
  ALPHA_SCALE,
  BETA_RATIO,
  CONTROL_DEFAULTS,
  bandOf,
  defaultAlpha,
  defaultBeta,
  resolveControlConfig,
} from '../../../src/limiter/control-config';

describe('resolveControlConfig', () => {
  it('fills every default, with the derived idle gap, into a frozen config', () => {
    const config = resolveControlConfig(undefined);
    expect(config).toEqual({ ...CONTROL_DEFAULTS, idleAfterMs: 60_000 });
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('starts from one call within 1..200 (adr/0045), with the spec §6 windows and vegas', () => {
    expect(CONTROL_DEFAULTS).toEqual({
      algorithm: 'vegas',
      initialLimit: 1,
      minLimit: 1,
      maxLimit: 200,
      updateIntervalMs: 100,
      minWindowMs: 2_000,
      maxWindowMs: 30_000,
      minSamples: 50,
      quantile: 0.9,
      smoothing: 0.2,
      rttTolerance: 1.5,
      backoffRatio: 0.9,
      alpha: defaultAlpha,
      beta: defaultBeta,
      failure: 'hold',
    });
    expect(Object.isFrozen(CONTROL_DEFAULTS)).toBe(true);
  });

  it('leaves options it does not own alone (admission reads them from the same object)', () => {
    expect(resolveControlConfig({ queueing: false, queueOrder: 'fifo' })).toEqual(resolveControlConfig({}));
  });

  it('names the owner, the option, the range and the value in a bad option', () => {
    expect(() => resolveControlConfig({ minLimit: 0 })).toThrow(
      'resilix: limiter option "minLimit" must be an integer in [1, Infinity); received 0',
    );
    expect(() => resolveControlConfig({ maxLimit: 2.5 }, 'pool')).toThrow(
      'resilix: pool option "maxLimit" must be an integer in [1, Infinity); received 2.5',
    );
    expect(() => resolveControlConfig({ initialLimit: 1.5 })).toThrow(
      'resilix: limiter option "initialLimit" must be an integer in [1, Infinity); received 1.5',
    );
    expect(() => resolveControlConfig({ quantile: 1 })).toThrow(
      'resilix: limiter option "quantile" must be a number in (0, 1); received 1',
    );
    // The same open range for every value out of it (it read "(0, 1]" for 0 and 2, though 1 fails too).
    for (const [name, bad] of [
      ['quantile', 0],
      ['quantile', 2],
      ['backoffRatio', 1.5],
    ] as const) {
      expect(() => resolveControlConfig({ [name]: bad })).toThrow(
        `resilix: limiter option "${name}" must be a number in (0, 1); received ${bad}`,
      );
    }
    expect(() => resolveControlConfig({ algorithm: 'cubic' as never })).toThrow(
      'resilix: limiter option "algorithm" must be one of "vegas", "gradient2", "aimd", "fixed"; received "cubic"',
    );
    expect(() => resolveControlConfig({ alpha: 3 as never })).toThrow(
      new TypeError('resilix: limiter option "alpha" must be a function; received 3'),
    );
    expect(() => resolveControlConfig({ failure: 'retry' as never })).toThrow(RangeError);
    expect(() => resolveControlConfig({ rttTolerance: 0.9 })).toThrow(RangeError);
    expect(() => resolveControlConfig({ smoothing: 0 })).toThrow(RangeError);
    expect(() => resolveControlConfig({ backoffRatio: 1 })).toThrow(RangeError);
    expect(() => resolveControlConfig({ minSamples: 0 })).toThrow(RangeError);
    expect(() => resolveControlConfig({ updateIntervalMs: -1 })).toThrow(RangeError);
    expect(() => resolveControlConfig({ minWindowMs: '2s' })).toThrow(TypeError);
    expect(() => resolveControlConfig('vegas')).toThrow(TypeError);
  });

  it('rejects explicit bounds that contradict each other, naming both', () => {
    expect(() => resolveControlConfig({ minLimit: 50, maxLimit: 10 })).toThrow(
      'resilix: limiter option "minLimit" (50) must not exceed "maxLimit" (10)',
    );
    expect(() => resolveControlConfig({ minLimit: 5, initialLimit: 3 })).toThrow(
      'resilix: limiter option "minLimit" (5) must not exceed "initialLimit" (3)',
    );
    expect(() => resolveControlConfig({ initialLimit: 300 })).toThrow(
      '"initialLimit" (300) must not exceed "maxLimit" (200)',
    );
    expect(() => resolveControlConfig({ minWindowMs: 5_000, maxWindowMs: 1_000 })).toThrow(RangeError);
  });

  it('lets a default follow an explicit bound (minLimit 30 alone starts at 30)', () => {
    expect(resolveControlConfig({ maxLimit: 10 })).toMatchObject({ minLimit: 1, initialLimit: 1, maxLimit: 10 });
    expect(resolveControlConfig({ initialLimit: 10 })).toMatchObject({ minLimit: 1, initialLimit: 10 });
    expect(resolveControlConfig({ minLimit: 30 })).toMatchObject({ minLimit: 30, initialLimit: 30 });
    expect(resolveControlConfig({ minWindowMs: 60_000 })).toMatchObject({ maxWindowMs: 60_000, idleAfterMs: 120_000 });
  });
});

describe('the default vegas band (adr/0036, adr/0049)', () => {
  it('is alpha = min(3 log10 max(L, 10), ALPHA_SCALE x (L / 10)^0.6) requests and beta = 2 alpha', () => {
    expect([ALPHA_POWER, BETA_RATIO]).toEqual([0.6, 2]);
    // Under one request at L = 10 (beta(12) < 2 keeps vegas within 1.2 C at C = 10), a fraction below.
    expect(ALPHA_SCALE).toBeLessThan(0.9);
    expect(defaultAlpha(10)).toBeCloseTo(ALPHA_SCALE, 12);
    expect(defaultBeta(10)).toBeCloseTo(2 * ALPHA_SCALE, 12);
    expect(defaultBeta(12)).toBeLessThan(2);
    expect(defaultAlpha(1)).toBeCloseTo(ALPHA_SCALE * 0.1 ** 0.6, 12);
    expect(defaultAlpha(100)).toBeCloseTo(ALPHA_SCALE * 10 ** 0.6, 12);
    expect(defaultBeta(100)).toBeCloseTo(2 * ALPHA_SCALE * 10 ** 0.6, 12);
  });

  it("meets Netflix's 3 log10(L) at large limits and keeps it from there", () => {
    expect(defaultAlpha(100)).toBeLessThan(3 * Math.log10(100));
    expect(defaultAlpha(1_000)).toBeCloseTo(3 * Math.log10(1_000), 12);
    expect(defaultBeta(1_000)).toBeCloseTo(6 * Math.log10(1_000), 12);
    // Continuous where the two meet.
    let crossing = 10;
    while (ALPHA_SCALE * (crossing / 10) ** 0.6 < 3 * Math.log10(crossing)) crossing++;
    expect(crossing).toBeGreaterThan(100);
    expect(defaultAlpha(crossing)).toBeCloseTo(3 * Math.log10(crossing), 0);
  });

  it('takes its shape from bandOf(power, ratio, scale), which the ablation varies', () => {
    const band = bandOf(1, 3, 2);
    expect(band.alpha(5)).toBeCloseTo(1, 12); // 2 x (5 / 10)^1
    expect(band.alpha(10)).toBeCloseTo(2, 12);
    expect(band.beta(10)).toBeCloseTo(6, 12);
    // Never above the spec's 3 log10(L), floored at L = 10 (3 requests).
    expect(band.alpha(100)).toBeCloseTo(6, 12);
    expect(bandOf(0.6, 2).alpha(10)).toBe(1); // scale 1 unless given
    const shipped = bandOf(ALPHA_POWER, BETA_RATIO, ALPHA_SCALE);
    for (const limit of [1, 7, 10, 57, 200, 500]) {
      expect(shipped.alpha(limit)).toBe(defaultAlpha(limit));
      expect(shipped.beta(limit)).toBe(defaultBeta(limit));
    }
  });
});
