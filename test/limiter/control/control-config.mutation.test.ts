import { describe, expect, it } from 'vitest';
import { defaultAlpha, defaultBeta, resolveControlConfig } from '../../../src/limiter/control-config';

/** Edges of the control options that mutation testing found unpinned (docs/testing.md). */
describe('the control options: open-unit values', () => {
  it('keeps an explicit quantile and backoffRatio inside (0, 1)', () => {
    expect(resolveControlConfig({ quantile: 0.5, backoffRatio: 0.8 })).toMatchObject({
      quantile: 0.5,
      backoffRatio: 0.8,
    });
  });

  it('rejects a quantile or backoffRatio at 0 or above 1, naming the range (0, 1)', () => {
    expect(() => resolveControlConfig({ quantile: 0 })).toThrow(
      'resilix: limiter option "quantile" must be a number in (0, 1); received 0',
    );
    expect(() => resolveControlConfig({ backoffRatio: 1.5 })).toThrow(
      'resilix: limiter option "backoffRatio" must be a number in (0, 1); received 1.5',
    );
  });
});

describe('the control options: every error names its option', () => {
  it.each([
    ['updateIntervalMs', { updateIntervalMs: -1 }],
    ['minWindowMs', { minWindowMs: -1 }],
    ['maxWindowMs', { maxWindowMs: -1 }],
    ['minSamples', { minSamples: 2.5 }],
    ['smoothing', { smoothing: 0 }],
    ['rttTolerance', { rttTolerance: 0.9 }],
    ['backoffRatio', { backoffRatio: 1 }],
    ['beta', { beta: 3 }],
    ['failure', { failure: 'retry' }],
  ])('names "%s"', (name, options) => {
    expect(() => resolveControlConfig(options)).toThrow(`option "${name}"`);
  });

  it('names both windows when minWindowMs exceeds maxWindowMs', () => {
    expect(() => resolveControlConfig({ minWindowMs: 5_000, maxWindowMs: 3_000 })).toThrow(
      'resilix: limiter option "minWindowMs" (5000) must not exceed "maxWindowMs" (3000)',
    );
  });

  it('takes minSamples only as an integer', () => {
    expect(() => resolveControlConfig({ minSamples: 2.5 })).toThrow(
      'resilix: limiter option "minSamples" must be an integer in [1, 1000000]; received 2.5',
    );
  });
});

describe('the default band around L = 10', () => {
  it('is 0.85 x (L / 10)^0.6 below 3 log10 L, and beta twice that', () => {
    expect(defaultAlpha(10)).toBeCloseTo(0.85, 12);
    expect(defaultBeta(10)).toBeCloseTo(1.7, 12);
    expect(defaultAlpha(5)).toBeCloseTo(0.85 * 0.5 ** 0.6, 12);
  });
});
