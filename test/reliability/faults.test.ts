import { afterEach, describe, expect, it, vi } from 'vitest';
import { breaker } from '../../src/breaker/index';
import { bulkhead } from '../../src/bulkhead/bulkhead';
import type { Clock } from '../../src/core/clock';
import { isLimitExceededError } from '../../src/errors/limit-exceeded-error';
import { limiter } from '../../src/limiter/limiter';
import { pipeline } from '../../src/pipeline/pipeline';
import { timeout } from '../../src/timeout/timeout';
import { deferred, FakeClock, flush } from '../helpers/fake-clock';
import { spyPolicy } from '../helpers/spy-policy';

/**
 * Issue 11, faults: what the library must survive without losing state. Each test ends by
 * showing the state is intact: nothing held, the limit in its guardrails, the next call served.
 */

function fullPipeline(clock: Clock, extra: { classify?: (s: unknown) => never } = {}) {
  const b = breaker({ clock, minSamples: 4, consecutiveFailures: 3, openMs: 1_000 });
  const l = limiter({
    clock,
    algorithm: 'vegas',
    initialLimit: 4,
    minLimit: 2,
    maxLimit: 10,
    minWindowMs: 0,
    updateIntervalMs: 0,
    minSamples: 2,
  });
  const bh = bulkhead({ maxConcurrent: 8, clock });
  const p = pipeline(b, l, bh, timeout({ timeoutMs: 1_000, clock }), extra);
  return { b, l, bh, p };
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('fn misbehaves', () => {
  it('passes a synchronous throw from fn to the caller, frees every slot, and counts it as a failure', async () => {
    const clock = new FakeClock();
    const { b, l, bh, p } = fullPipeline(clock);
    const boom = new Error('sync boom');
    await expect(
      p.execute(() => {
        throw boom;
      }),
    ).rejects.toBe(boom);
    expect([l.inflight, bh.active]).toEqual([0, 0]);
    expect(b.snapshot().failures).toBe(1);
    expect(clock.pendingTimers).toBe(0);
  });

  it('resolves with a plain (non-promise) value from fn and frees every slot', async () => {
    const clock = new FakeClock();
    const { b, l, bh, p } = fullPipeline(clock);
    await expect(p.execute(() => 42)).resolves.toBe(42);
    await expect(p.execute(() => null)).resolves.toBe(null);
    // a thenable-looking object without a function `then` is a plain value too
    // biome-ignore lint/suspicious/noThenProperty: the subject of the test
    await expect(p.execute(() => ({ then: 3 }))).resolves.toEqual({ then: 3 });
    expect([l.inflight, bh.active]).toEqual([0, 0]);
    expect(b.snapshot().samples).toBe(3);
  });

  it('settles once when fn returns a rogue thenable that answers twice, or whose then() throws', async () => {
    const clock = new FakeClock();
    const { b, l, bh, p } = fullPipeline(clock);
    const twice = {
      // biome-ignore lint/suspicious/noThenProperty: a rogue thenable is the subject of the test
      then(onFulfilled: (v: string) => void, onRejected: (e: unknown) => void) {
        onFulfilled('first');
        onFulfilled('second');
        onRejected(new Error('third'));
      },
    };
    await expect(p.execute(() => twice as unknown as Promise<string>)).resolves.toBe('first');
    const throwing = {
      // biome-ignore lint/suspicious/noThenProperty: a rogue thenable is the subject of the test
      then() {
        throw new Error('then threw');
      },
    };
    await expect(p.execute(() => throwing as unknown as Promise<string>)).rejects.toThrow('then threw');
    expect([l.inflight, bh.active]).toEqual([0, 0]);
    expect(b.snapshot()).toMatchObject({ samples: 2, failures: 1 });
  });

  it('keeps the call result when the classifier throws, counts a failure, and frees every slot', async () => {
    const clock = new FakeClock();
    const b = breaker({ clock, minSamples: 4, consecutiveFailures: 3 });
    const l = limiter({ clock, initialLimit: 4, minLimit: 2, maxLimit: 10 });
    const bh = bulkhead({ maxConcurrent: 8, clock });
    const p = pipeline(b, l, bh, timeout({ timeoutMs: 1_000, clock }), {
      classify: () => {
        throw new Error('classifier bug');
      },
    });
    await expect(p.execute(async () => 'value')).resolves.toBe('value');
    await expect(p.execute(() => 'sync value')).resolves.toBe('sync value');
    await expect(p.execute(() => Promise.reject(new Error('upstream')))).rejects.toThrow('upstream');
    expect([l.inflight, bh.active]).toEqual([0, 0]);
    expect(b.snapshot().failures).toBe(3);
    expect(b.state).toBe('open');
  });
});

describe('event listeners throw', () => {
  it('moves the breaker through open, half-open and closed while every listener throws', async () => {
    const report = vi.spyOn(console, 'error').mockImplementation(() => {});
    const clock = new FakeClock();
    const b = breaker({ clock, minSamples: 2, consecutiveFailures: 2, openMs: 1_000, halfOpenProbes: 1 });
    const seen: string[] = [];
    const thrower = (e: { to: string }) => {
      seen.push(e.to);
      throw new Error('listener bug');
    };
    b.onStateChange(thrower);
    b.onOpen(thrower);
    b.onHalfOpen(thrower);
    b.onClose(thrower);
    for (let i = 0; i < 2; i++) await expect(b.execute(() => Promise.reject(new Error('x')))).rejects.toThrow('x');
    expect(b.state).toBe('open');
    clock.advance(1_000);
    await expect(b.execute(() => 'probe')).resolves.toBe('probe');
    expect(b.state).toBe('closed');
    expect(seen).toEqual(['open', 'open', 'half-open', 'half-open', 'closed', 'closed']);
    expect(report).toHaveBeenCalledTimes(6);
  });

  it('changes the limit and serves waiters while a limit listener throws', async () => {
    const report = vi.spyOn(console, 'error').mockImplementation(() => {});
    const clock = new FakeClock();
    const l = limiter({ clock, algorithm: 'fixed', initialLimit: 1, minLimit: 1, maxLimit: 5 });
    l.onLimitChange(() => {
      throw new Error('listener bug');
    });
    const first = deferred<string>();
    const running = l.execute(() => first.promise);
    const waiting = l.execute(() => 'second');
    await flush();
    expect([l.inflight, l.queued]).toEqual([1, 1]);
    expect(l.resize(2)).toBe(2);
    await expect(waiting).resolves.toBe('second');
    first.resolve('first');
    await expect(running).resolves.toBe('first');
    expect([l.inflight, l.queued, l.limit]).toEqual([0, 0, 2]);
    expect(report).toHaveBeenCalledTimes(1);
  });
});

/** A clock a test scripts: each read takes the next value, the last repeats. */
class ScriptedClock implements Clock {
  private i = 0;
  private readonly inner = new FakeClock();
  constructor(private readonly readings: number[]) {}
  now(): number {
    const value = this.readings[Math.min(this.i, this.readings.length - 1)]!;
    this.i++;
    return value;
  }
  setTimer(cb: () => void, ms: number): unknown {
    return this.inner.setTimer(cb, ms);
  }
  clearTimer(handle: unknown): void {
    this.inner.clearTimer(handle);
  }
}

describe('the clock misbehaves', () => {
  it('never reports a negative or NaN latency when the clock steps backwards or reads NaN', async () => {
    const readings: number[] = [];
    for (let i = 0; i < 400; i++)
      readings.push(i % 7 === 3 ? Number.NaN : i % 5 === 4 ? 1_000 + i * 10 - 5_000 : 1_000 + i * 10);
    const clock = new ScriptedClock(readings);
    const spy = spyPolicy(clock);
    const l = limiter({
      clock,
      algorithm: 'gradient2',
      initialLimit: 4,
      minLimit: 2,
      maxLimit: 10,
      minWindowMs: 0,
      updateIntervalMs: 0,
      minSamples: 2,
    });
    const p = pipeline(spy, l, bulkhead({ maxConcurrent: 8, clock }), timeout({ timeoutMs: 60_000, clock }));
    for (let i = 0; i < 40; i++) await p.execute(async () => i);
    expect(spy.observations).toHaveLength(40);
    for (const o of spy.observations) {
      expect(o.latencyMs).toBeGreaterThanOrEqual(0);
      expect(Number.isFinite(o.latencyMs)).toBe(true);
      expect(Number.isFinite(o.durationMs!)).toBe(true);
    }
    const snap = l.snapshot();
    expect(snap.limit).toBeGreaterThanOrEqual(2);
    expect(snap.limit).toBeLessThanOrEqual(10);
    expect(Number.isFinite(snap.estimate)).toBe(true);
    expect(l.inflight).toBe(0);
  });

  it('keeps serving calls after one +Infinity clock reading (issue 15, defect 3)', async () => {
    let t = 1_000;
    let infinityOnce = false;
    const clock: Clock = {
      now: () => {
        if (infinityOnce) {
          infinityOnce = false;
          return Number.POSITIVE_INFINITY;
        }
        return t;
      },
    };
    const l = limiter({ clock, algorithm: 'fixed', initialLimit: 2, minLimit: 1, maxLimit: 2 });
    await expect(l.execute(() => 'before')).resolves.toBe('before');
    infinityOnce = true;
    await expect(l.execute(() => 'during')).resolves.toBe('during');
    for (let i = 0; i < 3; i++) {
      t += 10;
      await expect(l.execute(() => i)).resolves.toBe(i);
    }
    expect(l.inflight).toBe(0);
  });

  it('half-opens a breaker on time with a monotonic clock whose readings are negative (issue 15, defect 4)', async () => {
    let t = -1_000_000;
    const clock: Clock = { now: () => t };
    const b = breaker({ clock, minSamples: 2, consecutiveFailures: 2, openMs: 1_000, halfOpenProbes: 1 });
    for (let i = 0; i < 2; i++) await expect(b.execute(() => Promise.reject(new Error('x')))).rejects.toThrow('x');
    expect(b.state).toBe('open');
    t += 999;
    await expect(b.execute(() => 'no')).rejects.toThrow(/open/);
    t += 1;
    await expect(b.execute(() => 'probe')).resolves.toBe('probe');
    expect(b.state).toBe('closed');
  });

  it('keeps a breaker open for its whole openMs when the clock jumps backwards, then recovers', async () => {
    let t = 10_000;
    const clock: Clock = { now: () => t };
    const b = breaker({ clock, minSamples: 2, consecutiveFailures: 2, openMs: 1_000, halfOpenProbes: 1 });
    for (let i = 0; i < 2; i++) await expect(b.execute(() => Promise.reject(new Error('x')))).rejects.toThrow('x');
    expect(b.state).toBe('open');
    t = 5_000; // backwards: time holds at 10 000
    await expect(b.execute(() => 'no')).rejects.toThrow(/open/);
    t = Number.NaN; // unreadable: time holds
    await expect(b.execute(() => 'no')).rejects.toThrow(/open/);
    t = 10_999;
    await expect(b.execute(() => 'no')).rejects.toThrow(/open/);
    t = 11_000;
    await expect(b.execute(() => 'probe')).resolves.toBe('probe');
    expect(b.state).toBe('closed');
  });
});

describe('low-level permits misused', () => {
  it('keeps the limit finite and inside its guardrails after settles with NaN, negative and infinite latency', () => {
    const clock = new FakeClock();
    for (const algorithm of ['vegas', 'gradient2', 'aimd'] as const) {
      const l = limiter({
        clock,
        algorithm,
        initialLimit: 5,
        minLimit: 2,
        maxLimit: 9,
        minWindowMs: 0,
        updateIntervalMs: 0,
        minSamples: 1,
      });
      const bad = [Number.NaN, -5, -Infinity, Infinity, 0, Number.NaN];
      for (let round = 0; round < 30; round++) {
        const permit = l.tryAcquire()!;
        clock.advance(10);
        permit.settle({ verdict: round % 3 === 0 ? 'overload' : 'ok', latencyMs: bad[round % bad.length]! });
        const snap = l.snapshot();
        expect(Number.isFinite(snap.estimate)).toBe(true);
        expect(snap.limit).toBeGreaterThanOrEqual(2);
        expect(snap.limit).toBeLessThanOrEqual(9);
      }
      expect(l.inflight).toBe(0);
      // it still adapts on good samples afterwards: the next permit is served
      expect(l.tryAcquire()).toBeDefined();
    }
  });

  it('counts a permit settled twice only once', () => {
    const l = limiter({ clock: new FakeClock(), algorithm: 'fixed', initialLimit: 2, minLimit: 1, maxLimit: 2 });
    const a = l.tryAcquire()!;
    const b = l.tryAcquire()!;
    expect(l.inflight).toBe(2);
    a.settle({ verdict: 'ok', latencyMs: 1 });
    a.settle({ verdict: 'ok', latencyMs: 1 });
    expect(l.inflight).toBe(1);
    b.settle({ verdict: 'failure', latencyMs: 1 });
    b.settle({ verdict: 'failure', latencyMs: 1 });
    expect(l.inflight).toBe(0);
    expect(l.snapshot().admitted).toBe(2);
  });
});

describe('a burst of 100 000 calls at once', () => {
  it('admits up to the limit, queues up to its bound, sheds the rest with LimitExceededError, and ends with nothing held', async () => {
    const clock = new FakeClock();
    const { l, bh, p } = fullPipeline(clock);
    const gate = deferred<void>();
    let ran = 0;
    let shed = 0;
    let other = 0;
    const calls: Array<Promise<void>> = [];
    for (let i = 0; i < 100_000; i++) {
      calls.push(
        p
          .execute(async () => {
            ran++;
            await gate.promise;
          })
          .then(
            () => {},
            (e: unknown) => {
              if (isLimitExceededError(e)) shed++;
              else other++;
            },
          ),
      );
    }
    await flush();
    // limit 4, queueing factors 2/3: 4 run, 4 wait freely, up to 4 more wait by the coin
    expect(l.inflight).toBe(4);
    expect(l.queued).toBeGreaterThanOrEqual(4);
    expect(l.inflight + l.queued).toBeLessThanOrEqual(12);
    gate.resolve();
    for (let i = 0; i < 20 && ran + shed + other < 100_000; i++) await flush(20);
    await Promise.all(calls);
    expect(ran + shed).toBe(100_000);
    expect(other).toBe(0);
    expect(shed).toBeGreaterThanOrEqual(100_000 - 12);
    expect([l.inflight, l.queued, bh.active, clock.pendingTimers]).toEqual([0, 0, 0, 0]);
  });
});
