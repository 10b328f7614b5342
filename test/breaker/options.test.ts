import { describe, expect, it } from 'vitest';
import { breaker } from '../../src/breaker/breaker';
import { BREAKER_DEFAULTS } from '../../src/breaker/options';

describe('breaker options', () => {
  it('defaults every option (docs/breaker.md and ADR-0024 give their provenance)', () => {
    expect(breaker().config).toEqual({
      failureRateThreshold: 0.5,
      slowCallRateThreshold: 0.5,
      slowCallDurationMs: 10_000,
      minSamples: 20,
      lowTrafficMinSamples: 5,
      windowMs: 60_000,
      buckets: 10,
      consecutiveFailures: 10,
      openMs: 30_000,
      backoffMultiplier: 1,
      maxOpenMs: 300_000,
      halfOpenProbes: 3,
    });
    expect(breaker().config).toEqual({ ...BREAKER_DEFAULTS });
  });

  it('freezes the resolved config', () => {
    expect(Object.isFrozen(breaker().config)).toBe(true);
  });

  it('lowers the low-traffic floor to a smaller minSamples rather than refusing it', () => {
    expect(breaker({ minSamples: 3 }).config.lowTrafficMinSamples).toBe(3);
  });

  it('raises the default maxOpenMs to a longer openMs rather than refusing it', () => {
    expect(breaker({ openMs: 600_000 }).config.maxOpenMs).toBe(600_000);
  });

  it('accepts Infinity where it means "off"', () => {
    const { config } = breaker({ slowCallDurationMs: Infinity, consecutiveFailures: Infinity });
    expect(config.slowCallDurationMs).toBe(Infinity);
    expect(config.consecutiveFailures).toBe(Infinity);
  });

  it('accepts the edges of every range', () => {
    expect(() =>
      breaker({
        failureRateThreshold: 1,
        slowCallRateThreshold: 1,
        minSamples: 1,
        lowTrafficMinSamples: 1,
        buckets: 1,
        consecutiveFailures: 1,
        openMs: 0,
        maxOpenMs: 0,
        backoffMultiplier: 1,
        halfOpenProbes: 1,
      }),
    ).not.toThrow();
  });

  it.each<[string, Record<string, unknown>, ErrorConstructor, string]>([
    ['failureRateThreshold', { failureRateThreshold: '0.5' }, TypeError, 'must be a number in (0, 1]; received "0.5"'],
    ['failureRateThreshold', { failureRateThreshold: 0 }, RangeError, 'must be a number in (0, 1]; received 0'],
    ['failureRateThreshold', { failureRateThreshold: 50 }, RangeError, 'received 50'],
    ['failureRateThreshold', { failureRateThreshold: NaN }, RangeError, 'received NaN'],
    ['slowCallRateThreshold', { slowCallRateThreshold: -0.1 }, RangeError, 'must be a number in (0, 1]'],
    ['slowCallRateThreshold', { slowCallRateThreshold: Infinity }, RangeError, 'received Infinity'],
    ['slowCallDurationMs', { slowCallDurationMs: 0 }, RangeError, 'must be a number in (0, Infinity]; received 0'],
    ['slowCallDurationMs', { slowCallDurationMs: NaN }, RangeError, 'received NaN'],
    ['slowCallDurationMs', { slowCallDurationMs: null }, TypeError, 'received null'],
    ['minSamples', { minSamples: 0 }, RangeError, 'must be an integer in [1, Infinity); received 0'],
    ['minSamples', { minSamples: 2.5 }, RangeError, 'received 2.5'],
    ['minSamples', { minSamples: Infinity }, RangeError, 'received Infinity'],
    ['lowTrafficMinSamples', { lowTrafficMinSamples: 0 }, RangeError, 'must be an integer in [1, Infinity)'],
    [
      'lowTrafficMinSamples',
      { minSamples: 10, lowTrafficMinSamples: 11 },
      RangeError,
      '"lowTrafficMinSamples" (11) must not exceed "minSamples" (10)',
    ],
    ['windowMs', { windowMs: 0 }, RangeError, 'must be a number in (0, Infinity); received 0'],
    ['windowMs', { windowMs: Infinity }, RangeError, 'received Infinity'],
    ['windowMs', { windowMs: '60s' }, TypeError, 'received "60s"'],
    ['buckets', { buckets: 0 }, RangeError, 'must be an integer in [1, 1000]; received 0'],
    ['buckets', { buckets: 1001 }, RangeError, 'received 1001'],
    ['buckets', { buckets: 7.5 }, RangeError, 'received 7.5'],
    ['consecutiveFailures', { consecutiveFailures: 0 }, RangeError, 'must be an integer in [1, Infinity]; received 0'],
    ['consecutiveFailures', { consecutiveFailures: -Infinity }, RangeError, 'received -Infinity'],
    ['openMs', { openMs: -1 }, RangeError, 'must be a number in [0, Infinity); received -1'],
    ['openMs', { openMs: Infinity }, RangeError, 'received Infinity'],
    [
      'openMs',
      { openMs: 60_000, maxOpenMs: 30_000 },
      RangeError,
      '"openMs" (60000) must not exceed "maxOpenMs" (30000)',
    ],
    ['backoffMultiplier', { backoffMultiplier: 0.5 }, RangeError, 'must be a number in [1, Infinity); received 0.5'],
    ['backoffMultiplier', { backoffMultiplier: true }, TypeError, 'received true'],
    ['maxOpenMs', { maxOpenMs: NaN }, RangeError, 'received NaN'],
    ['halfOpenProbes', { halfOpenProbes: 0 }, RangeError, 'must be an integer in [1, Infinity); received 0'],
    ['halfOpenProbes', { halfOpenProbes: Infinity }, RangeError, 'received Infinity'],
    ['clock', { clock: { now: 5 } }, TypeError, 'option "clock" must be an object with a now() function'],
    ['wallClock', { wallClock: 'Date.now' }, TypeError, 'option "wallClock" must be a function'],
    ['classify', { classify: {} }, TypeError, 'option "classify" must be a function'],
  ])('refuses a bad %s: %o', (name, options, type, message) => {
    const attempt = (): unknown => breaker(options as never);
    expect(attempt).toThrow(type);
    expect(attempt).toThrow(`resilix: breaker option "${name}"`);
    expect(attempt).toThrow(message);
  });

  it.each([
    ['a string', 'fast'],
    ['null', null],
    ['an array', []],
  ])('refuses options that are %s', (_name, options) => {
    expect(() => breaker(options as never)).toThrow(/resilix: breaker options must be an object/);
  });
});
