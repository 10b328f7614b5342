import { describe, expect, it } from 'vitest';
import { sharedWhenEqual } from '../../src/core/options';
import { bulkhead } from '../../src/bulkhead/bulkhead';
import { timeout } from '../../src/timeout/timeout';
import { pipeline } from '../../src/pipeline/pipeline';
import { breaker } from '../../src/breaker/breaker';
import { retryBudget } from '../../src/retry/budget';

/** The bad-input table for the foundation's policies (docs/options.md lists it for users). */
describe('bad options are refused at construction, naming the option, the range and the value', () => {
  it.each([
    [
      'bulkhead maxConcurrent missing',
      () => bulkhead({} as never),
      TypeError,
      /bulkhead option "maxConcurrent" must be an integer in \[1, Infinity\]; received undefined/,
    ],
    ['bulkhead maxConcurrent string', () => bulkhead({ maxConcurrent: '3' as never }), TypeError, /received "3"/],
    ['bulkhead maxConcurrent NaN', () => bulkhead({ maxConcurrent: Number.NaN }), RangeError, /received NaN/],
    ['bulkhead maxConcurrent 0', () => bulkhead({ maxConcurrent: 0 }), RangeError, /received 0/],
    ['bulkhead maxConcurrent negative', () => bulkhead({ maxConcurrent: -1 }), RangeError, /received -1/],
    ['bulkhead maxConcurrent fractional', () => bulkhead({ maxConcurrent: 1.5 }), RangeError, /an integer/],
    [
      'bulkhead maxConcurrent -Infinity',
      () => bulkhead({ maxConcurrent: -Infinity }),
      RangeError,
      /received -Infinity/,
    ],
    ['bulkhead options not an object', () => bulkhead(5 as never), TypeError, /bulkhead options must be an object/],
    [
      'bulkhead clock without now',
      () => bulkhead({ maxConcurrent: 1, clock: {} as never }),
      TypeError,
      /"clock" must be an object with a now\(\) function/,
    ],
    [
      'bulkhead clock with half the timer seam',
      () => bulkhead({ maxConcurrent: 1, clock: { now: () => 0, setTimer: () => 0 } }),
      TypeError,
      /both setTimer and clearTimer/,
    ],
    [
      'retryBudget clock whose timer seam is not functions',
      () => retryBudget({ clock: { now: () => 0, setTimer: 5, clearTimer: 5 } as never }),
      TypeError,
      /^resilix: retryBudget option "clock.setTimer" must be a function or undefined; received number$/,
    ],
    [
      'breaker clock whose timer seam is null',
      () => breaker({ clock: { now: () => 0, setTimer: null, clearTimer: null } as never }),
      TypeError,
      /^resilix: breaker option "clock.setTimer" must be a function or undefined; received null$/,
    ],
    [
      'bulkhead classify not a function',
      () => bulkhead({ maxConcurrent: 1, classify: 'ok' as never }),
      TypeError,
      /"classify" must be a function/,
    ],
    [
      'timeout timeoutMs missing',
      () => timeout({} as never),
      TypeError,
      /timeout option "timeoutMs" must be a number in \(0, Infinity\]/,
    ],
    ['timeout timeoutMs zero', () => timeout({ timeoutMs: 0 }), RangeError, /received 0/],
    ['timeout timeoutMs negative', () => timeout({ timeoutMs: -10 }), RangeError, /received -10/],
    ['timeout timeoutMs NaN', () => timeout({ timeoutMs: Number.NaN }), RangeError, /received NaN/],
    [
      'pipeline classify not a function',
      () => pipeline(bulkhead({ maxConcurrent: 1 }), { classify: 1 as never }),
      TypeError,
      /pipeline option "classify"/,
    ],
  ] as const)('%s', (_name, build, type, message) => {
    expect(build).toThrowError(type);
    expect(build).toThrowError(message);
  });

  it('accepts Infinity where it means "no ceiling"', () => {
    expect(bulkhead({ maxConcurrent: Infinity }).maxConcurrent).toBe(Infinity);
    expect(timeout({ timeoutMs: Infinity }).timeoutMs).toBe(Infinity);
  });
});

describe('a misspelt option is refused, not silently ignored', () => {
  it('names the unknown option and suggests the nearest known one', () => {
    expect(() => bulkhead({ maxConcurent: 3 } as never)).toThrowError(
      /bulkhead has no option "maxConcurent"; did you mean "maxConcurrent"\? Known options: maxConcurrent, clock, classify/,
    );
    expect(() => timeout({ timeoutMs: 5, timout: 3 } as never)).toThrowError(TypeError);
  });

  it('does not guess when nothing is close', () => {
    expect(() => bulkhead({ maxConcurrent: 1, colour: 'red' } as never)).toThrowError(
      /no option "colour". Known options/,
    );
  });
});

describe('sharedWhenEqual', () => {
  const shared = Object.freeze({ a: 1, b: 'x', c: Number.NaN });

  it('answers the shared object when every one of its fields holds the same value', () => {
    expect(sharedWhenEqual({ a: 1, b: 'x', c: Number.NaN }, shared)).toBe(shared);
  });

  it('answers the value itself when any field differs, -0 against 0 included', () => {
    const other = { a: 2, b: 'x', c: Number.NaN };
    expect(sharedWhenEqual(other, shared)).toBe(other);
    const zero = Object.freeze({ z: 0 });
    const negative = { z: -0 };
    expect(sharedWhenEqual(negative, zero)).toBe(negative);
  });
});
