import { describe, expect, it } from 'vitest';
import { LimitExceededError, parseRetryAfter, retryAfterHeader, TimeoutError } from '../../src/index';

describe('retryAfterHeader', () => {
  it('rounds a refusal hint up to whole seconds', () => {
    expect(retryAfterHeader(new LimitExceededError(undefined, { retryAfterMs: 2_300 }))).toBe('3');
    expect(retryAfterHeader(4_000)).toBe('4');
  });

  it('never says 0: a sub-second hint becomes 1', () => {
    expect(retryAfterHeader(300)).toBe('1');
    expect(retryAfterHeader(0)).toBe('1');
  });

  it('uses 1 s without a hint (seed 001), or the fallback given', () => {
    expect(retryAfterHeader(new TimeoutError({ timeoutMs: 50 }))).toBe('1');
    expect(retryAfterHeader(undefined)).toBe('1');
    expect(retryAfterHeader(undefined, 5_000)).toBe('5');
  });

  it('falls back for a hint that is no duration (NaN, negative, infinite) instead of throwing', () => {
    expect([Number.NaN, -5, Number.POSITIVE_INFINITY].map((ms) => retryAfterHeader(ms, 2_000))).toEqual([
      '2',
      '2',
      '2',
    ]);
  });

  it('throws a RangeError naming a bad fallbackMs', () => {
    expect(() => retryAfterHeader(100, -1)).toThrow(
      new RangeError('resilix: retryAfterHeader option "fallbackMs" must be a number in [0, Infinity); received -1'),
    );
  });

  it('writes what parseRetryAfter reads back, rounded up to the second', () => {
    expect(parseRetryAfter(retryAfterHeader(2_300))).toBe(3_000);
  });

  it('writes digits for a hint too long for them, never an exponent', () => {
    expect(String(1e30 / 1_000)).toBe('1e+27'); // what an uncapped header would have said
    expect(retryAfterHeader(1e30)).toMatch(/^[0-9]+$/);
    expect(retryAfterHeader(1e30)).toBe(String(Math.ceil(Number.MAX_SAFE_INTEGER / 1_000)));
  });
});
