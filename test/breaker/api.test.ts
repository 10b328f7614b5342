import { describe, expect, it } from 'vitest';
import * as api from '../../src/breaker/index';
import { isPolicy } from '../../src/core/policy';
import { limiterFree } from './support-pipeline';

describe('the breaker as a policy', () => {
  it('exports breaker(), CircuitBreaker and BREAKER_DEFAULTS from src/breaker', () => {
    expect(Object.keys(api).sort()).toEqual(['BREAKER_DEFAULTS', 'CircuitBreaker', 'breaker']);
  });

  it('is a policy of kind breaker whose port is itself', () => {
    const b = api.breaker();
    expect(isPolicy(b)).toBe(true);
    expect(b.kind).toBe('breaker');
    expect(b.port).toBe(b);
    expect(b).toBeInstanceOf(api.CircuitBreaker);
  });

  it('passes a call’s value and error through unchanged', async () => {
    const b = api.breaker();
    await expect(b.execute(() => 42)).resolves.toBe(42);
    const error = new Error('upstream said no');
    await expect(b.execute(() => Promise.reject(error))).rejects.toBe(error);
  });

  it('sits outermost in a pipeline and opens on failures the inner policies let through', async () => {
    const { b, p } = limiterFree({ consecutiveFailures: 3 });
    for (let i = 0; i < 3; i++) await expect(p.execute(() => Promise.reject(new Error('500')))).rejects.toThrow('500');
    expect(b.state).toBe('open');
    await expect(p.execute(() => 'x')).rejects.toMatchObject({
      code: 'ERR_RESILIX_CIRCUIT_OPEN',
      retryAfterMs: 30_000,
    });
  });

  it('counts our own deadline as a failure once the timed-out call settles', async () => {
    const { b, p, clock } = limiterFree({ consecutiveFailures: 2 });
    const hang = (ctx: { signal: AbortSignal }): Promise<never> =>
      new Promise((_, reject) => ctx.signal.addEventListener('abort', () => reject(new Error('aborted'))));
    for (let i = 0; i < 2; i++) {
      const call = p.execute(hang);
      clock.advance(5_000);
      await expect(call).rejects.toMatchObject({ code: 'ERR_RESILIX_TIMEOUT' });
    }
    await Promise.resolve();
    expect(b.snapshot()).toMatchObject({
      state: 'open',
      failures: 2,
      slowCalls: 0,
      lastReason: 'consecutive-failures',
    });
  });
});
