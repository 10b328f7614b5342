import { describe, expect, it } from 'vitest';
import {
  BrokenCircuitError,
  BulkheadFullError,
  LimitExceededError,
  TimeoutError,
  isBrokenCircuitError,
  isBulkheadFullError,
  isLimitExceededError,
  isResilixError,
  isTimeoutError,
} from '../../src/errors/index';

describe('typed errors', () => {
  it.each([
    [new BrokenCircuitError(), 'BrokenCircuitError', 'ERR_RESILIX_CIRCUIT_OPEN', isBrokenCircuitError],
    [new LimitExceededError(), 'LimitExceededError', 'ERR_RESILIX_LIMIT_EXCEEDED', isLimitExceededError],
    [new BulkheadFullError(), 'BulkheadFullError', 'ERR_RESILIX_BULKHEAD_FULL', isBulkheadFullError],
    [new TimeoutError({ timeoutMs: 5 }), 'TimeoutError', 'ERR_RESILIX_TIMEOUT', isTimeoutError],
  ] as const)('%s has a name, a stable code and a guard', (error, name, code, guard) => {
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe(name);
    expect(error.code).toBe(code);
    expect(guard(error)).toBe(true);
    expect(isResilixError(error)).toBe(true);
  });

  it('guards reject other errors, including each other', () => {
    expect(isBrokenCircuitError(new LimitExceededError())).toBe(false);
    expect(isTimeoutError(new Error('timeout'))).toBe(false);
    expect(isResilixError({ code: 'ERR_RESILIX_TIMEOUT' })).toBe(false);
    expect(isResilixError(null)).toBe(false);
    expect(isResilixError('ERR_RESILIX_TIMEOUT')).toBe(false);
  });

  it('guards recognise an error from another copy of the package (a registered-symbol brand)', () => {
    const foreign = Object.assign(new Error('from another copy'), { name: 'LimitExceededError' });
    Object.defineProperty(foreign, Symbol.for('resilix.error.code'), { value: 'ERR_RESILIX_LIMIT_EXCEEDED' });
    expect(isLimitExceededError(foreign)).toBe(true);
    expect(isResilixError(foreign)).toBe(true);
  });

  it('carries cause and a retryAfterMs hint on rejections', () => {
    const cause = new Error('root');
    const e = new LimitExceededError('shed', { cause, retryAfterMs: 120 });
    expect(e.cause).toBe(cause);
    expect(e.retryAfterMs).toBe(120);
    expect(new BulkheadFullError().retryAfterMs).toBeUndefined();
  });

  it('says when a timeout happened in the queue, where the upstream never saw the call', () => {
    const queued = new TimeoutError({ timeoutMs: 250, queued: true });
    expect(queued.queued).toBe(true);
    expect(queued.timeoutMs).toBe(250);
    expect(queued.message).toMatch(/while queued/);
    expect(new TimeoutError({ timeoutMs: 250 }).message).toBe('resilix: the call timed out after 250 ms');
  });
});
