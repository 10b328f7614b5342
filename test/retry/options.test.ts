import { describe, expect, it } from 'vitest';
import { retryBudget } from '../../src/retry/budget';
import { RETRY_DEFAULTS } from '../../src/retry/options';
import { retry } from '../../src/retry/retry';

describe('retry options, validated at construction', () => {
  it('refuses an unknown option and suggests the nearest name', () => {
    expect(() => retry({ maxAttempt: 3 } as never)).toThrow(
      /resilix: retry has no option "maxAttempt"; did you mean "maxAttempts"\? Known options: maxAttempts, backoff/,
    );
  });

  it('names the option, the range and the value for maxAttempts', () => {
    expect(() => retry({ maxAttempts: 0 })).toThrow(
      'resilix: retry option "maxAttempts" must be an integer in [1, Infinity); received 0',
    );
    expect(() => retry({ maxAttempts: 2.5 })).toThrow(RangeError);
    expect(() => retry({ maxAttempts: '3' as never })).toThrow(TypeError);
  });

  it('names the choices for backoff', () => {
    expect(() => retry({ backoff: 'linear' as never })).toThrow(
      'resilix: retry option "backoff" must be one of "exponential", "decorrelated"; received "linear"',
    );
  });

  it('refuses a base delay above the cap', () => {
    expect(() => retry({ baseDelayMs: 500, maxDelayMs: 100 })).toThrow(
      'resilix: retry option "baseDelayMs" (500) must not exceed "maxDelayMs" (100)',
    );
  });

  it('refuses a negative or infinite delay', () => {
    expect(() => retry({ baseDelayMs: -1 })).toThrow(
      'resilix: retry option "baseDelayMs" must be a number in [0, Infinity); received -1',
    );
    expect(() => retry({ maxDelayMs: Infinity })).toThrow(RangeError);
  });

  it('refuses a budget that is neither a RetryBudget, options nor false', () => {
    expect(() => retry({ budget: true as never })).toThrow(
      'resilix: retry option "budget" must be a RetryBudget, budget options or false; received boolean',
    );
  });

  it('validates budget options like every other policy’s', () => {
    expect(() => retryBudget({ ratio: -0.1 })).toThrow(
      'resilix: retryBudget option "ratio" must be a number in [0, Infinity); received -0.1',
    );
    expect(() => retryBudget({ maxBalance: 0.5 })).toThrow(RangeError);
    expect(() => retryBudget({ minRetriesPerSecnd: 10 } as never)).toThrow(/did you mean "minRetriesPerSecond"\?/);
    // Given to retry(), they are named as the user wrote them.
    expect(() => retry({ budget: { ratoi: 0.2 } as never })).toThrow(
      /resilix: retry has no option "budget.ratoi"; did you mean "budget.ratio"/,
    );
    expect(() => retry({ budget: { ratio: -0.1 } })).toThrow(
      'resilix: retry option "budget.ratio" must be a number in [0, Infinity); received -0.1',
    );
  });

  it('refuses non-functions for shouldRetry, classify and random, and a non-boolean retryLimitExceeded', () => {
    expect(() => retry({ shouldRetry: true as never })).toThrow(
      'resilix: retry option "shouldRetry" must be a function; received true',
    );
    expect(() => retry({ classify: 'x' as never })).toThrow(TypeError);
    expect(() => retry({ random: 0.5 as never })).toThrow(TypeError);
    expect(() => retry({ retryLimitExceeded: 'yes' as never })).toThrow(
      'resilix: retry option "retryLimitExceeded" must be a boolean; received "yes"',
    );
  });

  it('reports its defaults in its snapshot', () => {
    const s = retry().snapshot();
    expect({
      maxAttempts: s.maxAttempts,
      backoff: s.backoff,
      baseDelayMs: s.baseDelayMs,
      maxDelayMs: s.maxDelayMs,
      retryLimitExceeded: s.retryLimitExceeded,
    }).toEqual(RETRY_DEFAULTS);
    expect(RETRY_DEFAULTS).toEqual({
      maxAttempts: 3,
      backoff: 'exponential',
      baseDelayMs: 100,
      maxDelayMs: 20_000,
      retryLimitExceeded: false,
    });
  });
});
